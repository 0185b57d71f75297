"""``L['x']`` becomes dynamic in four compiled functions (one allow-list entry, four frames).

Each function sees batches 2, 3, 4 and recompiles once before automatic dynamic marks its
``x`` dynamic; ``dyncli suggest -f python`` must put ``mark_dynamic(x, 0)`` under each.
"""

import os

import torch

BACKEND = os.environ.get("DYNCLI_LOG_BACKEND", "aot_eager")


def first(x):
    return x.relu() + 1


def second(x):
    return x.sigmoid() * 2


def third(x):
    return x.tanh() - 1


def fourth(x):
    return x.abs() / 2


compiled = [torch.compile(fn, backend=BACKEND) for fn in (first, second, third, fourth)]
for batch in (2, 3, 4):
    for fn in compiled:
        fn(torch.randn(batch, 5))

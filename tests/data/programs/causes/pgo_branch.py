"""PGO state loaded, yet a recompile: a size branch that no allow-list entry can remove.

Run 1 (``python pgo_branch.py 1``, not kept) feeds batches 4 and 6 under
``TORCH_COMPILE_JOB_ID``: torch writes PGO state marking ``L['x']`` dim 0 dynamic. Run 2
(kept) loads it, compiles ``x`` dynamic from the start (batch 5), then batch 12 crosses the
user's ``if x.shape[0] > 8`` and recompiles: the source is already dynamic, the branch is
the cause.
"""

import os
import sys

import torch


def route(x):
    if x.shape[0] > 8:
        return x.sum(dim=0)
    return x.mean(dim=0)


f = torch.compile(route, backend=os.environ.get("DYNCLI_LOG_BACKEND", "aot_eager"))
for batch in ((4, 6) if sys.argv[1:] == ["1"] else (5, 12)):
    f(torch.randn(batch, 3))

"""A size branch in user code: ``if x.shape[0] > 8`` splits the dynamic graph in two.

Batches 4 and 6 make ``L['x']`` dim 0 dynamic (automatic dynamic), under the guard
``2 <= x.size()[0] <= 8`` (the branch took its ``<= 8`` side); batch 12 fails the upper
bound and compiles the other side (``9 <= x.size()[0]``); 16 and 5 reuse the two graphs.
No size is ever 0 or 1.
"""

import os

import torch

torch.manual_seed(0)


def route(x):
    if x.shape[0] > 8:
        return x.sum(dim=0)
    return x.mean(dim=0)


f = torch.compile(route, backend=os.environ.get("DYNCLI_LOG_BACKEND", "aot_eager"))
for batch in (4, 6, 12, 16, 5):
    f(torch.randn(batch, 3))

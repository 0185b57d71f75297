"""A graph break splits one function into two frames; both recompile when the batch changes."""

import torch
from _common import compile_fn


def two_halves(x):
    y = torch.relu(x) * 3
    print("between halves", flush=True)  # graph break: print is not traceable
    return y.sum(dim=-1) + 1


f = compile_fn(two_halves)
for batch in (2, 5, 7):
    f(torch.randn(batch, 6))

"""User code compares a size to a constant: the dynamic batch gets specialized to 10."""

import torch
from _common import compile_fn


def pick(x):
    if x.shape[0] == 10:
        return x * 2
    return x + 1


f = compile_fn(pick)
for batch in (8, 10, 12):
    f(torch.randn(batch, 3))

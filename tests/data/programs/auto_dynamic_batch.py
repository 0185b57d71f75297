"""Automatic dynamic: the batch size changes, Dynamo recompiles once and marks dim 0 dynamic."""

import torch
from _common import compile_fn


def scale_and_center(x, w):
    y = x @ w
    return y - y.mean(dim=0, keepdim=True)


f = compile_fn(scale_and_center)
w = torch.randn(8, 4)
for batch in (4, 6, 8, 10):
    f(torch.randn(batch, 8), w)

"""Data-dependent values: .item() and .nonzero() create unbacked symbols."""

import torch
import torch._dynamo.config
from _common import compile_fn

torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True


def data_dependent(x, k):
    n = k.item()
    torch._check(n >= 0)
    idx = x.nonzero()
    return idx.float().sum() + n, torch.zeros(n)


f = compile_fn(data_dependent)
for size, k in ((6, 2), (6, 3)):
    f(torch.tensor([0, 1, 0, 2, 3, 0][:size]), torch.tensor(k))

"""0/1 specialization: a size-1 batch is always static, so going back to 1 recompiles."""

import torch
from _common import compile_fn


def normalize(x):
    return x / x.norm(dim=-1, keepdim=True)


f = compile_fn(normalize)
for batch in (2, 3, 1):
    f(torch.randn(batch, 5))

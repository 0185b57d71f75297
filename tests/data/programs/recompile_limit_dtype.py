"""A dtype change each call: 'other' recompiles (dynamic shapes cannot help) up to the limit."""

import torch
import torch._dynamo.config
from _common import compile_fn

torch._dynamo.config.recompile_limit = 2


def double(x):
    return x * 2


f = compile_fn(double)
for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    f(torch.ones(4, dtype=dtype))

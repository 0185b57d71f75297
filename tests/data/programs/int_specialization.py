"""An int argument: recompiles for a new value, goes dynamic, then `if n == 33` specializes it.

This is the reference guide's `if self.x == 33` example with a plain int argument.
"""

import torch
from _common import compile_fn


def add_n(x, n):
    if n == 33:
        return x + n * 2
    return x + n


f = compile_fn(add_n)
x = torch.randn(4)
for n in (31, 33, 35):
    f(x, n)

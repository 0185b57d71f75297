"""An int attribute of an nn.Module changes: module ints stay static, so every value recompiles."""

import torch
from _common import compile_fn


class Scaler(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = 2

    def forward(self, x):
        return x * self.k


model = Scaler()
f = compile_fn(model)
for k in (2, 3, 4):
    model.k = k
    f(torch.randn(4))

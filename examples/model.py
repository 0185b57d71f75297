"""A user model for ``dyncli bench examples/model.py:build``.

``build()`` returns ``(model, example_inputs)``: a module with random weights and a tuple of
positional inputs (a dict of keyword inputs works too). dyncli takes the batch size from dim 0
of the first tensor (8 here) and varies every dim of that size.

    dyncli bench examples/model.py:build --strategy static,automatic,mark-dynamic,dynamic \\
        --variations 5 --device cpu --json out.json
"""

from __future__ import annotations

import torch
from torch import nn


class TinyMLP(nn.Module):
    """Two linear layers with a GELU: small enough to compile in seconds on a CPU."""

    def __init__(self, features: int = 32, hidden: int = 64, classes: int = 10) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(x)))


def build() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model and one example batch of 8 rows of 32 features."""
    torch.manual_seed(0)
    return TinyMLP(), (torch.randn(8, 32),)

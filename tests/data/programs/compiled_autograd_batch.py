"""Compiled autograd: a tiny model's train step (forward, loss, backward inside the compiled
function) on batch sizes 4, 8, 8, 12. The backward graph misses compiled autograd's cache twice:
a new autograd node where the forward recompiled (a new AOT backward), then changed sizes.
``torch._dynamo.config.compiled_autograd = True`` makes compiled autograd follow torch.compile's
``dynamic`` (None here: static first, torch marks a changed size dynamic after its miss)."""

import torch
from _common import compile_fn

torch._dynamo.config.compiled_autograd = True

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def train_step(x):
    loss = model(x).sum()
    loss.backward()
    return loss


step = compile_fn(train_step)
for batch in (4, 8, 8, 12):
    model.zero_grad()
    step(torch.randn(batch, 8))

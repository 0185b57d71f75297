"""Compile time by phase: one small function compiled by Inductor, recompiled once for size.

Batches 2 and 3 (then 4, served by the dynamic graph): two compiles, each through Dynamo,
AOTAutograd and Inductor (with its code generation), so the trace's compilation metrics
carry every phase's time.
"""

import torch

torch.manual_seed(0)


def gelu_sum(x):
    return torch.nn.functional.gelu(x).sum(dim=-1)


f = torch.compile(gelu_sum)
for batch in (2, 3, 4):
    f(torch.randn(batch, 8))

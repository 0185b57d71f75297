"""Distinct graph breaks: one break reached from two call sites, another inside a loop.

``helper`` calls ``torch._dynamo.graph_break()``; ``twice`` calls ``helper`` from two lines,
so one break site (helper's line) is hit from two user call sites. ``loop`` prints inside a
``for`` of three iterations: one more break site, hit on every iteration.
"""

import os

import torch

BACKEND = os.environ.get("DYNCLI_LOG_BACKEND", "aot_eager")


def helper(x):
    torch._dynamo.graph_break()
    return x + 1


def twice(x):
    y = helper(x * 2)
    return helper(y - 1)


def loop(x):
    for i in range(3):
        x = x * 2
        print("step", i)
    return x


torch.compile(twice, backend=BACKEND)(torch.randn(4, 3))
torch.compile(loop, backend=BACKEND)(torch.randn(4, 3))

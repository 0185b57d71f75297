"""A guard_fail_fn that prints what torch gives it (pytorch#105279's reporter did so): three
calls of sizes 3, 4 and 5 of a function compiled static, so each new size fails the guards of
every cache entry. Its stdout is the GuardFail repr, one line per failed entry
(tests/data/make_guard_fail.py)."""

from __future__ import annotations

import torch
import torch._dynamo


def f(x: torch.Tensor) -> torch.Tensor:
    return x * 2


compiled = torch._dynamo.optimize("eager", guard_fail_fn=print, dynamic=False)(f)
for n in (3, 4, 5):
    compiled(torch.ones(n))

"""A Python float that changes between calls, on each torch CI runs (the oldest, 2.11, the
previous, the newest): what each release does with it, as diagnose's fix says
(``guard_kinds.FLOAT_RELEASES``), and the fix it gives first, a 0-d tensor, applied.

Before round 20 the first fix offered for a float was ``torch.compile(…, dynamic=True)``, which
makes a float dynamic only from torch 2.8 (pytorch#149564); pytorch#149406 (2.5.1) already used
dynamic=True and recompiled for every value, and modula#1 (2.3) was told its code or
dynamic=False kept the float static, where torch before 2.6 specializes every float.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
from torch._dynamo.utils import counters

def f(x, y):
    return x * y

compiled = torch.compile(f, backend="eager"{dynamic})
x = torch.ones(4)
for v in (1.5, 2.5, 3.5):
    compiled(x, {value})
print(counters["stats"]["unique_graphs"])
"""


def test_a_changing_float_gets_the_fix_that_works_on_this_torch(tmp_path: Path) -> None:
    release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    ran = run_variants({
        "plain": PROGRAM.format(dynamic="", value="v"),
        "dynamic": PROGRAM.format(dynamic=", dynamic=True", value="v"),
        "tensor": PROGRAM.format(dynamic="", value="torch.tensor(v)"),  # the fix printed first
    }, tmp_path, logs="recompiles")
    graphs = {name: int(v.stdout.split()[-1]) for name, v in ran.items() if not v.raised}
    assert graphs["plain"] == (3 if release < (2, 6) else 2)  # every value, or dynamic after one
    assert graphs["dynamic"] == (3 if release < (2, 6) else 2 if release < (2, 8) else 1)
    # the fix diagnose gives first, on the plain run's log: a 0-d tensor, one graph everywhere
    diag = diagnose_inputs([ran["plain"].log])
    fixes = [s.fix for s in diag.suggestions if "float" in s.fix]
    assert fixes and all(f.startswith("pass it as a 0-d tensor to compile once") for f in fixes)
    assert "from 2.8 torch.compile(…, dynamic=True)" in fixes[0]
    assert graphs["tensor"] == 1

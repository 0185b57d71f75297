"""A method shared by modules that each have a class of their own: FSDP2's fully_shard before
torch 2.5 set each module's class to a new ``FSDP<cls>`` (pytorch#134135), so forward, compiled
per layer, is guarded on self's class and compiles once per layer (torchtune#1232 hit the limit
at layer 8). Before round 20 diagnose said "pass objects of one class at that place", which
the user cannot do, and that raising the limit only hides the recompiles. Here the class swap
is imitated as the report's repro does; the printed fixes, one shared class (what torch 2.5
does) and the limit raised to the number of modules, are applied.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from logged import run_logged, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # three programs of twelve blocks: 15-30 s
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch._dynamo
from torch._dynamo.utils import counters

{limit}
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x).relu()

blocks = [Block() for _ in range(12)]
made = {{}}
for b in blocks:  # fully_shard's class swap (2.3/2.4: per module; 2.5 on: one per class)
    cls = type(b)
    fsdp = type(f"FSDP{{cls.__name__}}", (cls,), {{}})
    b.__class__ = made.setdefault(cls, fsdp) if {shared} else fsdp
for b in blocks:
    b.compile(backend="eager")  # each layer compiled, as torchtune and torchtitan do
x = torch.randn(2, 8)
for b in blocks:
    b(x)
print("graphs", counters["stats"]["unique_graphs"])
"""


def test_a_class_per_module_is_fixed_by_one_class_or_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    run = run_logged(PROGRAM.format(limit="", shared=False), log, logs="recompiles", check=True)
    if run.stdout.strip() == "graphs 1":
        pytest.skip("this torch does not guard a compiled module's class")
    assert run.stdout.strip() == "graphs 8"  # the limit's 8; the other 4 layers ran eagerly
    diag = diagnose_inputs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert a.key == "instance_type" and "a class of its own" in a.message
    assert "the same class name, a new class object each time" in a.message or \
        "type=<class" not in log.read_text()  # (torch 2.15 names the class; older do not)
    assert "pass objects of one class" not in a.fix
    (limit,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "only hides" not in limit.fix
    m = re.search(r"raise (torch\._dynamo\.config\.\w+) to the number of modules", limit.fix)
    assert m is not None, limit.fix
    # the limit raised to the number of modules: each layer compiled, none eager
    # and one shared class (what fully_shard does from torch 2.5): one graph for every layer
    ran = run_variants({"limit": PROGRAM.format(limit=f"{m[1]} = 12", shared=False),
                        "shared": PROGRAM.format(limit="", shared=True)}, tmp_path)
    assert not any(v.raised for v in ran.values()), ran
    assert ran["limit"].stdout.strip() == "graphs 12"
    assert "hit config" not in ran["limit"].text
    assert ran["shared"].stdout.strip() == "graphs 1"

"""A tensor marked dynamic only from the second call on (a loader or library that calls
mark_dynamic after the first compile): torch's dimension-marking guard fails ("hasattr(L['x'],
'_dynamo_dynamic_indices') == False" to 2.12; "_has_dynamo_dim_marking is present on runtime
tensor but was absent at compile time" in 2.15). Before round 20 diagnose called it a size
recompile with no fix (2.12 and older) or a non-shape guard that dynamic shapes do not fix
(2.15). The printed fix, marking it from the first call, is applied.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch._dynamo
from torch._dynamo.utils import counters

@torch.compile(backend="eager")
def fn(x):
    return x * 2

for i, n in enumerate((4, 4, 6, 8)):
    x = torch.randn(n, 3)
    if i >= {first}:
        torch._dynamo.mark_dynamic(x, 0)
    fn(x)
print("graphs", counters["stats"]["unique_graphs"])
"""


def test_a_mark_from_the_second_call_is_fixed_by_marking_from_the_first(tmp_path: Path) -> None:
    ran = run_variants({"run": PROGRAM.format(first=1), "fixed": PROGRAM.format(first=0)},
                       tmp_path, logs="recompiles")
    assert not any(v.raised for v in ran.values())
    if ran["run"].stdout.strip() == "graphs 1":
        pytest.skip("this torch does not guard a tensor's dynamic marks")
    assert ran["run"].stdout.strip() == "graphs 2"
    diag = diagnose_inputs([ran["run"].log])
    assert [r.cause for r in diag.recompiles] == ["other"]  # not a size recompile
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert a.key == "dim_marking" and "was marked dynamic" in a.message
    assert "will not fix" not in a.message
    assert a.fix.startswith("mark it before the first compiled call, and on every call")
    assert not [s for s in diag.suggestions if s.kind is AdviceKind.MARK_DYNAMIC]
    assert ran["fixed"].stdout.strip() == "graphs 1"

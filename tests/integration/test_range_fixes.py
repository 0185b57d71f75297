"""A range the program gave a size that its code narrows, and the fixes diagnose prints, applied.

torch raises ``Constraints violated`` with ``Not all values of X in the specified range R satisfy
the generated guard G`` (symbolic_shapes' StrictMinMaxConstraint). Before round 20 diagnose read
"Nothing to fix" on it (paste hunt 13: tensorrt#2794, pytorch#124502, #124507, ultralytics#20370;
onnxscript#2539 was refused), and on torch.compile's own form said the error was not in the log.
Here the two forms, ``mark_dynamic(x, 0, min=2, max=8)`` under torch.compile and an export Dim whose
code needs an even size, each raise; the printed fixes (the range the guards allow, torch's own
suggested Dims, and the settings that accept what the code needs) each let the program run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from logged import run_logged, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # four programs, an export among them: 30-60 s
torch = pytest.importorskip("torch")

COMPILE = """
import torch
import torch._dynamo
from torch._dynamo.utils import counters

@torch.compile(backend="eager")
def f(x):
    if x.shape[0] >= 4:
        return x * 2
    return x + 1

for n in (5, 4, 8):
    x = torch.randn(n, 3)
    {mark}
    f(x)
print("graphs", counters["stats"]["unique_graphs"])
"""

EXPORT = """
import torch
from torch.export import Dim, export

class Even(torch.nn.Module):
    def forward(self, x):
        return x.view(2, -1, x.shape[1])

{dims}
ep = export(Even(), (torch.randn(4, 3),), dynamic_shapes={{"x": {{0: b}}}})
print("exported", ep.module()(torch.randn(10, 3)).shape)
"""

_MARK_RE = re.compile(r"torch\._dynamo\.mark_dynamic\(x, 0, [^)]{1,80}\)")
_SUGGESTED_RE = re.compile(r"torch's suggested fix: `(?P<lines>[^`]{1,400})`")


def _finding(log: Path) -> str:
    diag = diagnose_inputs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
    assert "wider than the code allows" in a.message, a.message
    return a.fix


def test_a_mark_dynamic_range_the_code_narrows_gets_the_range_it_allows(tmp_path: Path) -> None:
    log = tmp_path / "raised.log"
    # (min=2 is torch's own lower bound, which torch leaves out of the range it prints; max
    # alone raised "not simple sympy type <class 'NoneType'>" on 2.11 and 2.14.1, not on 2.15)
    trace = tmp_path / "trace"
    run = run_logged(COMPILE.format(mark="torch._dynamo.mark_dynamic(x, 0, min=2, max=8)"), log,
                     env={"TORCH_TRACE": str(trace)})
    assert run.returncode != 0 and "Constraints violated" in log.read_text()
    fix = _finding(log)
    (traced,) = trace.glob("*.log")  # the trace's compilation_metrics fail_reason: the same
    assert _finding(traced) == fix
    mark = _MARK_RE.search(fix)
    assert mark is not None and mark[0] == "torch._dynamo.mark_dynamic(x, 0, min=4, max=8)", fix
    # the range printed, applied: every size in it runs on one graph; the other setting
    # printed: no range, no error
    assert "maybe_mark_dynamic" in fix
    ran = run_variants({"fixed": COMPILE.format(mark=mark[0]),
                        "maybe": COMPILE.format(mark="torch._dynamo.maybe_mark_dynamic(x, 0)")},
                       tmp_path)
    assert not any(v.raised for v in ran.values()), ran
    assert ran["fixed"].stdout.strip() == "graphs 1"


def test_an_export_dim_the_code_narrows_gets_torchs_suggested_dims(tmp_path: Path) -> None:
    log = tmp_path / "raised.log"
    run = run_logged(EXPORT.format(dims='b = Dim("b", max=64)'), log)
    assert run.returncode != 0
    log.write_text(log.read_text() + run.stdout)
    fix = _finding(log)
    suggested = _SUGGESTED_RE.search(fix)
    assert suggested is not None, fix
    # torch's lines as printed ("_b = Dim('_b', min=1, max=32); b = 2*_b")
    dims = "\n".join(x.strip() for x in suggested["lines"].split(";"))
    assert "Dim.AUTO" in fix
    ran = run_variants({"fixed": EXPORT.format(dims=dims),
                        "auto": EXPORT.format(dims="b = Dim.AUTO")}, tmp_path)
    assert not any(v.raised for v in ran.values()), ran
    assert ran["fixed"].stdout.startswith("exported torch.Size([2, 5, 3])"), ran["fixed"].stdout
    assert ran["auto"].stdout.startswith("exported"), ran["auto"].stdout

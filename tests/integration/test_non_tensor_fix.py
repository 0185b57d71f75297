"""The fix for GB0208 "torch.* op returned non-Tensor" (round 25): dynamo keeps some torch
functions in the graph (trace_rules' in-graph list: torch.cuda.device_count, get_device_name),
and one that returns an int or a str breaks it. torch gives no hint; the function is named only
in the record's Developer debug context ("target: <function device_count at 0x…>", the
function's name without its module), and diagnose prints the call as the break's line writes
it (torch.cuda.device_count(), round 26) in the fix: call it once outside the compiled function
and pass the value in (SageAttention#92's fix, sglang#10062's break).

Applied on real torch.compile: torch.cuda.device_count() inside f (0 on a machine without CUDA,
an int all the same) splits f in 2 graphs; with the count taken before and passed in, or kept
in a variable set before compiling, 1 graph. Under fullgraph=True the break stops the program;
diagnose says so, and the same fix runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, Script, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

BROKEN = """
import torch
""" + COUNTING_BACKEND + """
def f(x):
    y = x.sin()
    n = torch.cuda.device_count()
    return y * (n + 1)

out = torch.compile(f, backend=backend, fullgraph={fullgraph})(torch.ones(4))
print("graphs", len(graphs), out.tolist())
"""
# the fix as printed: torch.cuda.device_count() called once outside the compiled function,
# its value passed in ...
PASSED_IN = """
import torch
""" + COUNTING_BACKEND + """
def f(x, n):
    y = x.sin()
    return y * (n + 1)

n = torch.cuda.device_count()
out = torch.compile(f, backend=backend, fullgraph={fullgraph})(torch.ones(4), n)
print("graphs", len(graphs), out.tolist())
"""
# ... or kept in a variable set before compiling
KEPT = """
import torch
""" + COUNTING_BACKEND + """
N = torch.cuda.device_count()

def f(x):
    y = x.sin()
    return y * (N + 1)

out = torch.compile(f, backend=backend)(torch.ones(4))
print("graphs", len(graphs), out.tolist())
"""
_SAID = "call torch.cuda.device_count() once outside the compiled function and pass its value in"


def _skip_unless_broken(text: str) -> None:
    if "returned non-Tensor" not in text:
        pytest.skip(f"this torch does not break on torch.cuda.device_count(): {text[-1500:]}")


def _script(tmp_path: Path, name: str, code: str) -> Script:
    """The program in a file, as users run theirs: its frames in the log show its lines, the
    line that calls torch.cuda.device_count() with them (a ``python -c`` program's show none)."""
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    return Script(path)


def test_the_printed_fix_puts_the_function_in_one_graph(tmp_path: Path) -> None:
    runs = run_variants({"broken": _script(tmp_path, "broken", BROKEN.format(fullgraph=False)),
                         "passed": PASSED_IN.format(fullgraph=False), "kept": KEPT},
                        tmp_path, logs="graph_breaks")
    _skip_unless_broken(runs["broken"].text)
    assert not any(v.raised for v in runs.values())
    broken = runs["broken"].stdout
    assert "graphs 2" in broken, runs["broken"].text[-2000:]
    (b,) = diagnose_logs([runs["broken"].log]).graph_breaks
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 7):  # (its debug context)
        assert "target: <function device_count at 0x" in b.debug, b.debug
    (a,) = [s for s in diagnose_logs([runs["broken"].log]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith(_SAID), a.fix
    # applied both ways: one graph, the same result, no break
    result = broken.split(" ", 2)[2]
    for name in ("passed", "kept"):
        assert runs[name].stdout.startswith("graphs 1 "), (name, runs[name].text[-2000:])
        assert runs[name].stdout.split(" ", 2)[2] == result
        assert "Graph break" not in runs[name].text


def test_under_fullgraph_the_break_stops_the_program_and_the_fix_runs(tmp_path: Path) -> None:
    runs = run_variants({"raised": _script(tmp_path, "raised", BROKEN.format(fullgraph=True)),
                         "fixed": PASSED_IN.format(fullgraph=True)}, tmp_path)
    _skip_unless_broken(runs["raised"].text)
    assert runs["raised"].raised and "graphs" not in runs["raised"].stdout
    diag = diagnose_logs([runs["raised"].log])
    (b,) = diag.graph_breaks
    assert b.raised
    cause = diag.causes[0]
    assert cause.stops and cause.fix.startswith(_SAID), (cause.title, cause.fix)
    assert not runs["fixed"].raised, runs["fixed"].text[-2000:]
    assert runs["fixed"].stdout.startswith("graphs 1 ")

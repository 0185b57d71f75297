"""pytest's report of a graph break that fullgraph=True raised, pasted from dynamo's "from user
code:" on (pytorch#175875, transformers' tests under the 2.11 release candidate): the user
stack, dynamo's closing line, then pytest's ``…/torch/_dynamo/eval_frame.py:N: Unsupported``,
the exception's class, its message above the paste. diagnose reads it as a graph break raised at
the stack's line, its message above: paste it or rerun with TORCHDYNAMO_VERBOSE=1; to run
meanwhile, compile without fullgraph=True. Applied on real torch.compile under real pytest: a
test compiling a function that branches on a tensor's value with fullgraph=True; pytest's
report cut at "from user code:" is the paste; its whole report names the break's reason; without
fullgraph=True the function runs, the break splitting the graph.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textbreaks import MESSAGE_ABOVE

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

STEP = """
def step(x):
    y = x * 2
    if y.sum() > 0:  # a Python branch on a tensor's value: a graph break
        return y + 1
    return y - 1
"""
TEST = "import torch\n" + STEP + """
def test_compiled():
    torch.compile(step, backend="eager", fullgraph=True)(torch.ones(4))
"""


def test_pytests_report_from_the_user_stack_is_a_raised_break_and_runs_without_fullgraph(
        tmp_path: Path) -> None:
    (tmp_path / "test_gb.py").write_text(TEST)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {"OMP_NUM_THREADS": "1"}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "test_gb.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    report = ran.stdout
    assert ran.returncode == 1, report[-3000:]
    start = report.index("from user code:")
    start = report.rindex("\n", 0, start) + 1  # (pytest's "E   " before it)
    end = report.index(": Unsupported\n", start) + len(": Unsupported\n")
    paste = tmp_path / "pasted.log"
    paste.write_text(report[start:end])
    diag = diagnose_logs([paste])
    assert not diag.compile_crashes
    (b,) = diag.graph_breaks
    branch = next(i for i, t in enumerate(TEST.splitlines(), 1) if "if y.sum() > 0" in t)
    assert b.raised and b.reason == MESSAGE_ABOVE
    assert (Path(b.file).name, b.user_line) == ("test_gb.py", branch)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "TORCHDYNAMO_VERBOSE=1" in a.fix and "compile without fullgraph=True" in a.fix
    # the advice applied: the message above the cut (pytest's report of the exception, to
    # its location line) names the break
    whole = tmp_path / "whole.log"
    whole.write_text(report[:end])
    (w,) = diagnose_logs([whole]).graph_breaks
    assert w.raised and w.reason != MESSAGE_ABOVE and (Path(w.file).name, w.user_line) == (
        "test_gb.py", branch)
    # and without fullgraph=True the function runs: the break splits the graph in two
    split = run_variants({"split": COUNTING_BACKEND + "import torch\n" + STEP + """
out = torch.compile(step, backend=backend)(torch.ones(4))
print(out.tolist(), len(graphs))
"""}, tmp_path)["split"]
    assert not split.raised
    result, graphs = split.stdout.split("\n")[-2].rsplit(" ", 1)
    assert result == "[3.0, 3.0, 3.0, 3.0]" and int(graphs) == 2

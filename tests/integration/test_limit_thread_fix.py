"""A raised recompile limit must reach the thread that compiles (TensorRT-LLM#18492).

From torch 2.12 a config override is a ContextVar (``torch/utils/_config_module.py``), so
``torch._dynamo.config.recompile_limit = 16`` on the main thread leaves a serving thread at
torch's default: the thread below hits ``config.recompile_limit (8)`` although the program set
16, and its log cannot show that it did. diagnose's fix for the limit (an int that changes under
dynamic=False: "raise torch._dynamo.config.recompile_limit if these values are expected") names
the form that holds on every thread, ``torch.compile(…, recompile_limit=N)`` (2.12 on), and here
it is applied: the ten values compile ten graphs on the thread, with no warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

VALUES = 10
PROGRAM = """
import threading, torch
from torch._dynamo.utils import counters
{assign}
def f(x, n):
    return x * n
compiled = torch.compile(f, backend="eager", dynamic=False{kwarg})
def serve():  # a serving thread: every value it is asked for, each its own graph
    for n in range(1, {n} + 1):
        compiled(torch.ones(4), n)
worker = threading.Thread(target=serve)
worker.start()
worker.join()
print(counters["stats"]["unique_graphs"])
"""


@pytest.mark.skipif(tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 12),
                    reason="torch.compile's recompile_limit= and per-thread config: torch 2.12")
def test_the_limit_fix_holds_on_a_serving_thread(tmp_path: Path) -> None:
    ran = run_variants({
        "assigned": PROGRAM.format(assign="torch._dynamo.config.recompile_limit = 16",
                                   kwarg="", n=VALUES),
        "fixed": PROGRAM.format(assign="", kwarg=", recompile_limit=16", n=VALUES)}, tmp_path)
    assert not any(v.raised for v in ran.values()), ran
    # the main thread's assignment did not reach the thread: torch's default refused the ninth
    assigned = ran["assigned"]
    assert int(assigned.stdout) == 8
    assert "hit config.recompile_limit (8)" in assigned.text
    diag = diagnose_inputs([assigned.log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "raise torch._dynamo.config.recompile_limit if these values are expected" in a.fix
    assert "pass it to torch.compile: torch.compile(…, recompile_limit=N)" in a.fix
    assert "holds only on the thread that makes it" in a.fix
    # the fix as printed: the limit passed to torch.compile holds on the thread
    fixed = ran["fixed"]
    assert int(fixed.stdout) == VALUES
    assert "hit config.recompile_limit" not in fixed.text

"""A logger's method in compiled code (``logger.info`` of Python's logging: a graph break, torch's
"logging.Logger method not supported for non-export cases"), compiled on a worker thread. The
fix diagnose prints is torch's own setting, ``torch._dynamo.config.ignore_logging_functions.add(
logging.Logger.info)``, made "on the thread that calls the compiled function": from torch 2.12
torch's settings are per thread (the set is a copy of that thread's), so the same line run on
the main thread does not reach a worker that compiles. Applied here as printed, in one Python
(logged.run_variants): on the worker and on the main thread the function compiles to one graph
instead of two, with the same result; made on the main thread only, the worker still breaks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textbuiltins import ON_CALLING_THREAD

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import logging, threading, torch
from torch._dynamo.testing import CompileCounter

logger = logging.getLogger("steps")

def run(fix, where):
    if fix:
        {fix}
    cnt = CompileCounter()
    @torch.compile(backend=cnt)
    def f(x):
        x = x + 1
        logger.info("step of %d", x.shape[0])
        return x * 2
    y = f(torch.ones(3))
    print(where, "graphs", cnt.frame_count, "result", y.tolist())

def worker(fix):
    t = threading.Thread(target=run, args=(fix, "worker"))
    t.start()
    t.join()

{body}
"""

# the fix's setting as diagnose prints it: "torch._dynamo.config.<set>.add(<method>)"
_SETTING_RE = re.compile(r"torch\._dynamo\.config\.\w+\.add\([\w.]+\)")


def test_the_logger_break_goes_with_the_setting_on_the_calling_thread(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "fixed").mkdir()
    (broken,) = run_variants({"broken": PROGRAM.format(fix="pass", body="worker(False)")},
                             tmp_path / "broken", logs="graph_breaks").values()
    assert not broken.raised, broken.text
    assert "worker graphs 2 result [4.0, 4.0, 4.0]" in broken.stdout
    (a,) = [s for s in diagnose_logs([broken.log]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert f"before compiling, {ON_CALLING_THREAD} (from torch 2.12 its settings are per " \
        "thread" in a.fix
    setting = _SETTING_RE.search(a.fix)
    assert setting is not None, a.fix
    assert setting[0].endswith(".add(logging.Logger.info)"), a.fix

    runs = run_variants({
        # the fix as printed, where it says: on the thread that calls the compiled function
        "fixed": PROGRAM.format(fix=setting[0], body="worker(True)\nrun(True, 'main')"),
        # the same line made on the main thread only, before the worker compiles
        "main-only": PROGRAM.format(fix="pass", body=f"{setting[0]}\nworker(False)")},
        tmp_path / "fixed", logs="graph_breaks")
    assert not any(v.raised for v in runs.values()), runs
    assert "worker graphs 1 result [4.0, 4.0, 4.0]" in runs["fixed"].stdout
    assert "main graphs 1 result [4.0, 4.0, 4.0]" in runs["fixed"].stdout
    assert "Graph break" not in runs["fixed"].log.read_text()
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 12):
        # per-thread settings (2.12 on): made on the main thread, it did not reach the worker
        assert "worker graphs 2 result [4.0, 4.0, 4.0]" in runs["main-only"].stdout

"""A graph break at warnings.warn (paste hunt 23: pytorch#135688, torch 2.4.1's "Graph break due
to unsupported Python builtin _warnings.warn", read "move the untraceable call out"; 2.5's
UserWarning form read "wrap it in a custom operator"). diagnose's fix is torch's own hint and
the thread's answer: ``torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)``
on the thread that calls the compiled function. Applied on real torch.compile in one Python:
the break's log gets the fix; with it the function compiles to one graph instead of two and
still warns, on a worker thread and on the main one; added on the main thread only, it does
not reach the worker (torch's settings are per thread), as the fix says.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textbuiltins import ON_CALLING_THREAD

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import threading, warnings, torch
from torch._dynamo.testing import CompileCounter

def run(fix, where):
    if fix:
        torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)
    cnt = CompileCounter()
    @torch.compile(backend=cnt)
    def f(x):
        x = x + 1
        warnings.warn("step")
        return x * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(torch.ones(3))
    print(where, "graphs", cnt.frame_count, "warned", len(w))

def worker(fix):
    t = threading.Thread(target=run, args=(fix, "worker"))
    t.start()
    t.join()

{body}
"""


def test_the_warn_break_goes_with_torchs_setting_on_the_compiling_thread(tmp_path: Path) -> None:
    runs = run_variants({
        "broken": PROGRAM.format(body="run(False, 'main')"),
        "fixed": PROGRAM.format(body="worker(True)\nrun(True, 'main')"),
        "main-only": PROGRAM.format(body="torch._dynamo.config.reorderable_logging_functions"
                                         ".add(warnings.warn)\nworker(False)")},
        tmp_path, logs="graph_breaks")
    assert "main graphs 2 warned 1" in runs["broken"].stdout
    (a,) = diagnose_logs([runs["broken"].log]).suggestions
    assert "reorderable_logging_functions.add(warnings.warn)" in a.fix
    assert ON_CALLING_THREAD in a.fix
    # the fix applied: one graph, still warned, on the worker and on the main thread
    assert "worker graphs 1 warned 1" in runs["fixed"].stdout
    assert "main graphs 1 warned 1" in runs["fixed"].stdout
    assert "Graph break" not in runs["fixed"].log.read_text()  # (no record: the log is empty)
    # made on the main thread only, it does not reach the worker that compiles
    assert "worker graphs 2 warned 1" in runs["main-only"].stdout

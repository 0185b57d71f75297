"""torch's ``TorchDynamo compilation metrics:`` table at exit (TORCH_LOGS=dynamo), read live.

torch logs it from an ``atexit`` hook (``dump_compile_times``, torch/_dynamo/utils.py, 2.1 to
2.15). Its layout depends on the machine, not the release: torch's ``tabulate`` helper uses the
``tabulate`` package where it is installed (columns, the layout of pytorch#118492's paste) and
joins the cells with ", " where it is not. A tiny program recompiles once for a new size; the
seconds diagnose reads must be those torch printed (its ``compile_times(repr="csv")``, the same
counters with more digits), and the automatic-dynamic marking at [0/1], where torch logs it, is
that recompile's reason, not an unexplained one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # two programs under TORCH_LOGS=dynamo: 20-40 s
pytest.importorskip("torch")

PROGRAM = """
import json, sys
if sys.argv[1] == "csv":
    sys.modules["tabulate"] = None  # torch's helper then joins the cells with ", "
import torch

@torch.compile(backend="inductor")
def f(x):
    return (x.sin() + x.cos()).sum()

for n in (4, 5, 6):
    f(torch.randn(n))
names, values = torch._dynamo.utils.compile_times(repr="csv", aggregate=True)
print(json.dumps(dict(zip(names, map(float, values)))))
"""


@pytest.mark.parametrize("layout", ["csv", "tabulate"])
def test_compile_seconds_read_are_those_torch_printed(layout: str, tmp_path: Path) -> None:
    if layout == "tabulate" and importlib.util.find_spec("tabulate") is None:
        pytest.skip("the tabulate package is not installed (torch then prints the other layout)")
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    env = {**os.environ, "TORCH_LOGS": "dynamo", "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "c")}
    run = subprocess.run([sys.executable, str(prog), layout], capture_output=True, text=True,
                         env=env, timeout=600, check=True)
    printed = json.loads(run.stdout.strip().splitlines()[-1])
    log = tmp_path / "run.log"
    log.write_text(run.stderr)
    assert "TorchDynamo compilation metrics:" in run.stderr
    head = re.search(r"Function(, |\s{2,400})Runtimes \(s\)", run.stderr)
    assert head is not None and (head[1] == ", ") == (layout == "csv"), run.stderr[-3000:]
    d = diagnose_inputs([log])
    (x,) = d.compile_metrics
    total = next(k for k in printed if k.endswith("compile_inner"))
    assert x.total_row == total and not x.cut
    assert x.total_s == pytest.approx(printed[total], abs=1e-3)
    assert x.backend_s == pytest.approx(printed["OutputGraph.call_user_compiler"], abs=1e-3)
    assert dict(x.rows) == pytest.approx(printed, abs=1e-3)
    # the recompile for size 5 is automatic dynamic's marking of L['x'] at [0/1], its reason,
    # where torch logs it under TORCH_LOGS=dynamo (2.15's pgo.py; not 2.11's, whose log then
    # proves the recompile and no reason for it)
    marked = "marking L['x'] as dynamic" in run.stderr
    unexplained = [a for a in d.suggestions if a.kind is AdviceKind.UNEXPLAINED]
    assert bool(unexplained) != marked
    if marked:
        (cause,) = [c for c in d.causes if c.compiles]
        assert cause.compiles == 1 and "L['x']" in cause.fix

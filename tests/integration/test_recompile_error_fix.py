"""The error torch._dynamo.config.error_on_recompile raises (diffusers#11085's compile tests).

A test that must not recompile sets ``error_on_recompile``; a recompile then raises
``torch._dynamo.exc.RecompileError: Recompiling function f in …`` with the guard failures
under it, and the program stops. diagnose read it as a recompile that compiled; it is the
recompile torch refused (no compile of its own), with its reason and the fix, which is applied
here: the run goes on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from logged import run_logged

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
torch._dynamo.config.error_on_recompile = True
def f(x):
    return x * 2
compiled = torch.compile(f, backend="eager")
compiled(torch.randn(2, 3))
compiled(torch.randn(2, 4))
print("ran")
"""


def _run(log: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_logged(PROGRAM, log, env=extra)


def test_the_recompile_error_is_a_refused_recompile_and_its_fix_lets_the_run_go_on(
        tmp_path: Path) -> None:
    log = tmp_path / "raised.log"
    ran = _run(log, {})
    assert ran.returncode != 0 and "RecompileError" in log.read_text()
    d = diagnose_inputs([log])
    (r,) = d.recompiles
    assert (r.function, r.compiled, r.refused_by) == ("f", False, "error_on_recompile")
    assert d.compiles == 1  # torch raised instead of compiling the second time
    assert r.reasons == ("0/0: tensor 'x' size mismatch at index 1. expected 3, actual 4",)
    (a,) = [s for s in d.suggestions if s.kind == "mark-dynamic"]
    listed = a.fix.split('TORCH_COMPILE_DYNAMIC_SOURCES="', 1)[1].split('"', 1)[0]
    assert listed == ".*:1", a.fix
    # the fix as printed; torch before 2.14 reads no `:N` (docs/diagnose.md: drop it there)
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14):
        listed = listed.rsplit(":", 1)[0]
    fixed = _run(tmp_path / "fixed.log", {"TORCH_COMPILE_DYNAMIC_SOURCES": listed})
    assert fixed.returncode == 0 and fixed.stdout.strip() == "ran", \
        (tmp_path / "fixed.log").read_text()[-2000:]

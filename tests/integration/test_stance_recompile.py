"""The error torch.compiler.set_stance("fail_on_recompile") raises (pytorch#139202, #163500).

A service that must not recompile sets the stance; a recompile then raises ``RuntimeError:
Detected recompile when torch.compile stance is 'fail_on_recompile'`` (with the function from
2.9, and torch's guard failures under it in 2.11 and later), and that error is all its log
holds. diagnose refused it as "not a torch log". It is now the recompile the stance refused (no
compile of its own), with its reason and the fix, which is applied here: the run goes on.
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
def f(x):
    return x * 2
compiled = torch.compile(f, backend="eager")
compiled(torch.randn(2, 3))
torch.compiler.set_stance("fail_on_recompile")
compiled(torch.randn(2, 4))
print("ran")
"""


def _run(log: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_logged(PROGRAM, log, env=extra)


def test_the_stances_error_is_a_refused_recompile_and_its_fix_lets_the_run_go_on(
        tmp_path: Path) -> None:
    log = tmp_path / "stance.log"
    ran = _run(log, {})
    assert ran.returncode != 0 and "fail_on_recompile" in log.read_text()
    d = diagnose_inputs([log])
    (r,) = d.recompiles
    assert (r.function, r.compiled) == ("f", False)
    assert d.compiles == 1  # the stance refused the second compile
    (a,) = [s for s in d.suggestions if s.kind == "mark-dynamic"]
    assert r.reasons == ("0/0: tensor 'x' size mismatch at index 1. expected 3, actual 4",)
    listed = a.fix.split('TORCH_COMPILE_DYNAMIC_SOURCES="', 1)[1].split('"', 1)[0]
    assert listed == ".*:1", a.fix
    # the fix as printed; torch before 2.14 reads no `:N` (docs/diagnose.md: drop it there)
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14):
        listed = listed.rsplit(":", 1)[0]
    fixed = _run(tmp_path / "fixed.log", {"TORCH_COMPILE_DYNAMIC_SOURCES": listed})
    assert fixed.returncode == 0 and fixed.stdout.strip() == "ran", \
        (tmp_path / "fixed.log").read_text()[-2000:]

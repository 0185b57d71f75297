"""Recompiles torch refuses: the stance ``fail_on_recompile`` (pytorch#139202, #163500) and
``torch._dynamo.config.error_on_recompile`` (diffusers#11085's compile tests).

A service or a test that must not recompile sets one of them; a recompile then raises instead
of compiling, with the guard failures under it, and the program stops. The stance's ``RuntimeError:
Detected recompile when torch.compile stance is 'fail_on_recompile'`` (the function from 2.9,
torch's guard failures under it in 2.11 and later) was refused as "not a torch log", and
``torch._dynamo.exc.RecompileError: Recompiling function f in …`` was read as a recompile that
compiled. Each is the recompile torch refused (no compile of its own), with its reason and the
fix, which is applied here: the run goes on.
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
{config}def f(x):
    return x * 2
compiled = torch.compile(f, backend="eager")
compiled(torch.randn(2, 3))
{stance}compiled(torch.randn(2, 4))
print("ran")
"""
# name -> (the program's refusing line before the first call, after it; what torch's error
# says; the refusal diagnose names)
REFUSALS = {
    "stance": ("", 'torch.compiler.set_stance("fail_on_recompile")\n', "fail_on_recompile",
               "fail_on_recompile"),
    "error_on_recompile": ("torch._dynamo.config.error_on_recompile = True\n", "",
                           "RecompileError", "error_on_recompile"),
}


def _run(program: str, log: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_logged(program, log, env=extra)


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_a_refused_recompile_is_read_so_and_its_fix_lets_the_run_go_on(
        tmp_path: Path, refusal: str) -> None:
    config, stance, said, refused_by = REFUSALS[refusal]
    program = PROGRAM.format(config=config, stance=stance)
    log = tmp_path / "refused.log"
    ran = _run(program, log, {})
    assert ran.returncode != 0 and said in log.read_text()
    d = diagnose_inputs([log])
    (r,) = d.recompiles
    assert (r.function, r.compiled, r.refused_by) == ("f", False, refused_by)
    assert d.compiles == 1  # torch refused the second compile
    assert r.reasons == ("0/0: tensor 'x' size mismatch at index 1. expected 3, actual 4",)
    (a,) = [s for s in d.suggestions if s.kind == "mark-dynamic"]
    listed = a.fix.split('TORCH_COMPILE_DYNAMIC_SOURCES="', 1)[1].split('"', 1)[0]
    assert listed == ".*:1", a.fix
    # the fix as printed; torch before 2.14 reads no `:N` (docs/diagnose.md: drop it there)
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14):
        listed = listed.rsplit(":", 1)[0]
    fixed = _run(program, tmp_path / "fixed.log", {"TORCH_COMPILE_DYNAMIC_SOURCES": listed})
    assert fixed.returncode == 0 and fixed.stdout.strip() == "ran", \
        (tmp_path / "fixed.log").read_text()[-2000:]

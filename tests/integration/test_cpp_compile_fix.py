"""inductor's C++ for the CPU that the machine's compiler did not build (``CppCompileError``:
comfyui-sdnq#21's MSVC, pytorch#179135's missing OpenMP, ai-toolkit#952): the machine's
toolchain as a rule, not "report it to PyTorch". diagnose says so and names the fix: set CXX to
a working C++ compiler. Applied on real torch.compile on the CPU: a CXX that answers like g++
but fails on every .cpp with "omp.h: No such file or directory" stops the program; the same
program under a working CXX runs (each with its own inductor cache, so nothing compiled
before is reused).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # minutes on 2 cores: CI's long step (round 33)
torch = pytest.importorskip("torch")

PROGRAM = """
import torch

def f(x):
    return (x.sin() + 1).cos()

print(torch.compile(f)(torch.ones(8)).tolist()[0])
"""

# a compiler that is g++ for every question inductor asks it (its version, the ISA checks'
# flags) and fails on a .cpp as a machine without OpenMP's header does
BROKEN = """#!/bin/sh
for a in "$@"; do
  case "$a" in
    *.cpp) echo "$a:1:10: fatal error: omp.h: No such file or directory" >&2; exit 1;;
  esac
done
exec {gxx} "$@"
"""


def test_a_cpp_compile_error_gets_the_toolchain_fix_and_a_working_cxx_runs(
        tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++ on this machine")
    broken = tmp_path / "broken-g++"
    broken.write_text(BROKEN.format(gxx=gxx))
    broken.chmod(0o755)
    (tmp_path / "broken").mkdir()
    (tmp_path / "working").mkdir()
    failed = run_variants({"cpu": PROGRAM}, tmp_path / "broken",
                          env={"CXX": str(broken),
                               "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache-broken")})["cpu"]
    assert failed.raised and "CppCompileError" in failed.log.read_text()
    (a,) = diagnose_logs([failed.log]).suggestions
    assert a.fix.startswith("inductor's C++ code for the CPU did not build")
    assert "set CXX to a working C++ compiler" in a.fix and "report it to PyTorch" not in a.fix
    # the fix applied: a working C++ compiler in CXX, the same program compiles and runs
    ran = run_variants({"cpu": PROGRAM}, tmp_path / "working",
                       env={"CXX": gxx,
                            "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache-working")})["cpu"]
    assert not ran.raised
    assert abs(float(ran.stdout.strip().splitlines()[-1]) - float(torch.ones(1).sin().add(1)
                                                                   .cos())) < 1e-5

"""The machine's errors (``textcrash.MACHINE_ERRORS``): each kind has its fix, and the words
that are Triton's or torch's runtime's alone are no compile crash outside a compile."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.advice import _MACHINE_FIX
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textcrash import MACHINE_ERRORS, MACHINE_KINDS


def test_every_kind_of_machine_error_has_its_fix() -> None:
    assert {kind for _, kind, _ in MACHINE_ERRORS} <= MACHINE_KINDS
    assert set(_MACHINE_FIX) == MACHINE_KINDS
    assert all("not a bug to report" in fix for fix in _MACHINE_FIX.values())


def test_tritons_own_fp8_assert_outside_a_compile_is_not_a_compile_crash(tmp_path: Path) -> None:
    """A Triton kernel of the program's own raising it: no frame of torch's compiler."""
    log = tmp_path / "own.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/home/u/kernels.py", line 40, in <module>\n'
        "    my_kernel[grid](x)\n"
        '  File "/usr/lib/python3.11/site-packages/triton/language/semantic.py", line 759, in cast\n'
        '    assert builder.options.allow_fp8e4nv, "fp8e4nv data type is not supported on CUDA arch < 89"\n'
        "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89\n"
        # a torch line, so that the log is one
        "W0101 00:00:00.000000 1 torch/_dynamo/guards.py:1] [0/1] [__recompiles] Recompiling function f in "
        "/home/u/m.py:1\n")
    assert diagnose_logs([log]).compile_crashes == ()


def test_a_triton_launch_failure_record_is_not_a_compile_crash(tmp_path: Path) -> None:
    """triton_heuristics' other E-level record: a launch that failed, no kernel's source."""
    log = tmp_path / "launch.log"
    log.write_text(
        "E0101 00:00:00.000000 1 torch/_inductor/runtime/triton_heuristics.py:1551] [0/0] "
        "Failed during launch triton_poi_fused_0 with config: XBLOCK: 128 (num_warps=4, "
        "num_stages=1, kwargs={})\n")
    assert diagnose_logs([log]).compile_crashes == ()


def test_tritons_launcher_built_by_the_machines_compiler_is_the_machines(tmp_path: Path) -> None:
    """vllm#17018: inductor's BackendCompilerFailed over gcc's failure on Triton's main.c for
    cuda_utils (Triton 3.0-3.1); triton-windows' tcc on cuda_utils.c (3.2 on). It was "an error
    in torch's compiler … report it to PyTorch"; inductor's own C++ compile is not this."""
    def fix(error: str) -> str:
        log = tmp_path / "crash.log"
        log.write_text("Traceback (most recent call last):\n"
                       '  File "/x/torch/_dynamo/output_graph.py", line 1446, in _call_user_'
                       "compiler\n    raise BackendCompilerFailed(self.compiler_fn, e) from e\n"
                       "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                       + error + "\n")
        (a,) = diagnose_logs([log]).suggestions
        return a.fix
    assert fix("CalledProcessError: Command '['/usr/bin/gcc', '/tmp/t/main.c', '-O3', '-shared', "
               "'-fPIC', '-o', '/tmp/t/cuda_utils.cpython-311-x86_64-linux-gnu.so', '-lcuda', "
               "'-I/usr/include/python3.11']' returned non-zero exit status 1.").startswith(
        "Triton could not build its GPU launcher (cuda_utils)")
    assert "Python.h" not in fix("CalledProcessError: Command '['g++', '/tmp/torchinductor_u/"
                                 "ab/cab.cpp', '-shared', '-o', '/tmp/torchinductor_u/ab/cab.so']"
                                 "' returned non-zero exit status 1.")

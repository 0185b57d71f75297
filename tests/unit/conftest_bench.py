"""A synthetic BenchResult for renderer and CLI tests (no torch, no compile)."""

from __future__ import annotations

from dyncli.bench.core.result import BenchResult, Environment, RunResult, VariationResult
from dyncli.bench.core.status import Status


def variation(index: int, batch: int, eager: float, compiled: float, recompiled: bool,
              accuracy: str = "pass") -> VariationResult:
    """A timed variation with three samples a side."""
    return VariationResult(
        index=index, batch_size=batch, seq_len=None, shapes={"0": [batch, 32]},
        eager_ms=eager, compiled_ms=compiled, speedup=eager / compiled, p_value=0.01,
        eager_samples=[eager] * 3, compiled_samples=[compiled] * 3, recompiled=recompiled,
        compiles=int(recompiled), first_call_s=0.5, compile_time_s=0.5 if recompiled else 0.0,
        recompile_reasons=["tensor 'x' size mismatch at index 0. expected 8, actual 10"]
        if recompiled and index else [], status=Status(accuracy))


def sample_result(accuracy: str = "pass") -> BenchResult:
    """Two strategies over two variations; ``accuracy`` sets the second variation's status."""
    env = Environment("0.1.0", "2.14.1", "3.11.0", "cpu", "Test CPU", "float32", 2)
    result = BenchResult("examples/model.py:build", env, {"mode": "inference", "variations": 2})
    for strategy, recompile_second in (("static", True), ("dynamic", False)):
        run = RunResult("examples/model.py:build", strategy, "inference", compiles=1 + recompile_second,
                        compile_time_s=1.0, peak_memory_bytes=2_000_000_000)
        run.variations = [variation(0, 8, 2.0, 1.0, True),
                          variation(1, 10, 2.5, 1.0, recompile_second, accuracy)]
        run.finish()
        result.runs.append(run)
    return result

"""The real CUDA path: events + synchronize timing, CUDA peak memory. Skipped without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from dyncli.bench.core.result import Call, Hooks
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

MODEL = f"{Path(__file__).resolve().parents[2] / 'examples' / 'model.py'}:build"


def test_cuda_run_counts_compiles_and_measures_on_device() -> None:
    calls: list[Call] = []
    cfg = BenchConfig(variations=4, strategy=["automatic", "dynamic"], device="cuda", repeat=5,
                      warmup=1)
    result = run_bench(MODEL, cfg, Hooks(tap=calls.append))
    assert result.environment.device == "cuda"
    assert [r.compiles for r in result.runs] == [2, 1]
    for run in result.runs:
        assert run.status == "pass"
        assert run.peak_memory_bytes and run.peak_memory_bytes > 0
        assert all(v.timed and v.eager_ms > 0 and v.compiled_ms > 0 for v in run.variations)
    assert all(c.args[0].is_cuda for c in calls)


def test_auto_picks_cuda() -> None:
    cfg = BenchConfig(variations=2, strategy=["dynamic"], device="auto", repeat=2, warmup=0)
    assert run_bench(MODEL, cfg).environment.device == "cuda"

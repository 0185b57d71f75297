"""Issue #18 on real torch.compile: bench's decision does not depend on when each strategy ran.

The same tiny model and short stream are benched twice with ``--replay``: once as the machine
is, once beside a CPU hog that toggles (busy 4 s / idle 4 s, one worker per core, bounded in
time, stopped here). The loaded run's recommendation, priced at the first run's *replayed*
totals, must be within 10 % of that run's best. Kept cheap for CI (a 32→64→10 MLP, two
strategies, 24 requests, repeat 3): on it compiling dominates, so this checks the machinery
end to end; ``benchmarks/bench_window.py`` runs the same check where steady state decides.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from dyncli.bench import collector, torch_compat
from dyncli.bench.core.result import BenchResult
from dyncli.bench.hog import Hog
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

pytestmark = [pytest.mark.slow, pytest.mark.long]  # long: see pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
STREAM = [4, 8, 4, 4, 8, 4]


def _bench() -> BenchResult:
    cfg = BenchConfig(sizes=STREAM, requests=24, strategy=["static", "dynamic"], device="cpu",
                      repeat=3, warmup=0, replay=True)
    return run_bench(MODEL, cfg)


def _replayed(result: BenchResult) -> dict[str, float]:
    out = {r.strategy: r.replay.measured_s for r in result.runs if r.replay}
    assert result.eager_stream is not None and result.eager_stream.replay is not None
    out["eager"] = result.eager_stream.replay.measured_s
    return out


def test_quiet_and_loaded_runs_decide_alike() -> None:
    if not torch_compat.can_isolate_recompiles():
        pytest.skip("the same-window decision needs torch.compile(isolate_recompiles=True), "
                    "torch >= 2.13 (before it bench measures each strategy in a process of its own)")
    quiet = _bench()
    with Hog(on_s=4.0, off_s=4.0, limit_s=600, workers=os.cpu_count() or 1) as hog:
        loaded = _bench()
        assert hog.running()  # the hog was there for the whole second run
    for result in (quiet, loaded):
        assert result.same_window
        doc = result.to_dict()
        rec = doc["recommendation"]
        assert 0.0 <= rec["confidence"] <= 1.0
        assert set(rec["p_best"]) == {"eager", "static", "dynamic"}
        assert doc["eager_stream"]["replay"]["measured_s"] > 0
        for run in [*doc["runs"], doc["eager_stream"]]:
            # Python's full collections inside each player's requests, counted (3.11 here)
            assert ("gc_full" in run["replay"]) is collector.generational()
            if collector.generational():
                assert run["replay"]["gc_full"] >= 0
                assert 0 <= run["replay"]["gc_full_s"] <= run["replay"]["measured_s"]
        for run in doc["runs"]:
            assert run["status"] == "pass"
            assert run["replay"]["interleaved"] is True
            assert run["replay"]["measured_s"] > 0
            assert run["compile_cost"]["uses"] == "min(wall, cpu)"
            assert run["compile_cost"]["cpu_s"] > 0
            timed = [v for v in run["variations"]]
            assert all(v["loops"] and v["loops"] >= 1 for v in timed)
        assert doc["load"]["readings"] >= 4 and len(doc["load"]["eager_probe_ms"]) >= 3
    totals = _replayed(quiet)
    best = min(totals.values())
    assert loaded.recommendation is not None
    picked = totals[loaded.recommendation.strategy]
    assert math.isfinite(picked) and picked <= 1.10 * best, (loaded.recommendation, totals)

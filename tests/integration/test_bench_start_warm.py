"""--start warm on real torch.compile: a cold and a warm fresh process per strategy.

The warm process finds the caches the cold one left (inductor's FX graph cache and the
AOTAutograd cache), so it compiles as often but hits the FX cache at every compile; the
stream is costed with the warm compile seconds, as processes of --requests-per-start each.
(Seconds are not asserted here: timing targets live in benchmarks/, not in tests.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.bench import torch_compat
from dyncli.bench.core.status import Status
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

pytestmark = [pytest.mark.slow, pytest.mark.long]  # long: see pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"


def test_warm_process_hits_the_caches_the_cold_one_left() -> None:
    if torch_compat.installed() < (2, 5):
        pytest.skip("torch 2.4 keeps no FX graph cache unless TORCHINDUCTOR_FX_GRAPH_CACHE=1 "
                    "(on by default from 2.5): a warm restart finds nothing")
    sizes = [2, 5, 2, 9, 5, 2]
    cfg = BenchConfig(sizes=sizes, strategy=["static"], device="cpu", repeat=2, warmup=0,
                      fresh_cache=False, start="warm", requests_per_start=3)
    result = run_bench(MODEL, cfg)
    run = result.runs[0]
    assert run.status == Status.PASS, run.error
    start = run.start
    assert start is not None and start.status == Status.PASS, start
    assert start.cold_compiles == start.compiles == 3  # the cold run's compile count
    assert (start.fx_cache_hits or 0) >= start.compiles  # every warm compile found the cache
    assert len(start.warm_event_s or ()) == 3 and len(start.cold_event_s or ()) == 3
    # two processes of 3 requests: [2, 5, 2] compiles 2 shapes, [9, 5, 2] compiles 3, all warm
    # after the first process (its compiles are the in-process cold ones)
    assert run.stream is not None and run.stream.compiles == 5
    doc = result.to_dict()
    assert doc["runs"][0]["start"]["compiles"] == 3
    assert doc["settings"]["start"] == "warm"

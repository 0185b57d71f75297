"""--buckets auto: the DP optimizer against brute force, and the cost of a bucket list."""

from __future__ import annotations

import itertools
import random

import pytest

from dyncli.bench.core import buckets
from dyncli.bench.core.result import RunResult, VariationResult
from dyncli.bench.core.run_parts import BucketChoice


def brute(stream, lat, comp, max_buckets=None):
    distinct = sorted(set(stream))
    best = None
    for r in range(0, len(distinct)):
        for rest in itertools.combinations(distinct[:-1], r):
            chosen = [*rest, distinct[-1]]
            if max_buckets is not None and len(chosen) > max_buckets:
                continue
            plan = buckets.cost_of(stream, chosen, lat, comp)
            key = (round(plan.total_s, 9), len(chosen))
            if best is None or key < best[0]:
                best = (key, plan)
    return best[1]


@pytest.mark.parametrize("seed", range(60))
def test_optimal_equals_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 7)
    sizes = sorted(rng.sample(range(1, 65), n))
    stream = [s for s in sizes for _ in range(rng.randint(1, 30))]
    rng.shuffle(stream)
    per = rng.uniform(1e-4, 5e-3)
    lat = buckets.interpolate({s: per * s + rng.uniform(0, 1e-3) for s in sizes})
    c = rng.uniform(0.01, 2.0)
    comp = lambda b: c * (1 + b / 128)  # noqa: E731 - a compile grows a little with size
    k = rng.choice([None, 1, 2, 3])
    got = buckets.optimal(stream, lat, comp, max_buckets=k)
    want = brute(stream, lat, comp, max_buckets=k)
    assert got.total_s == pytest.approx(want.total_s, rel=1e-9)
    assert len(got.buckets) == len(want.buckets)  # ties go to fewer buckets
    assert got.buckets[-1] == max(stream)
    if k is not None:
        assert len(got.buckets) <= k


def test_auto_never_worse_than_pow2_or_none() -> None:
    rng = random.Random(7)
    stream = [rng.choice([1, 1, 1, 2, 3, 5, 8, 9, 12, 17, 24, 31, 32]) for _ in range(600)]
    lat = buckets.interpolate({1: 0.001, 8: 0.004, 32: 0.015})
    plans = buckets.compare(stream, lat, lambda b: 1.5)
    assert plans["auto"].total_s <= plans["pow2"].total_s + 1e-12
    assert plans["auto"].total_s <= plans["none"].total_s + 1e-12
    assert plans["none"].compiles == len(set(stream))


def test_cost_of_counts_unused_buckets_and_sizes_above_the_largest() -> None:
    lat = lambda b: 0.001 * b  # noqa: E731
    plan = buckets.cost_of([1, 2, 40, 40], [4, 8, 16], lat, lambda b: 1.0)
    assert plan.unpadded == (40,)
    assert plan.compiles == 2  # bucket 4 and the unpadded 40; 8 and 16 serve nothing
    assert plan.serve_s == pytest.approx(2 * 0.004 + 2 * 0.040)


def test_interpolate_is_monotone_and_extrapolates_in_proportion() -> None:
    at = buckets.interpolate({2: 0.002, 4: 0.001, 8: 0.008})  # the dip at 4 is noise
    assert at(1) == at(2) == 0.002
    assert at(4) == 0.002
    assert at(6) == pytest.approx(0.005)
    assert at(16) == pytest.approx(0.016)
    with pytest.raises(ValueError):
        buckets.interpolate({})


def test_large_streams_are_bounded() -> None:
    lat = buckets.interpolate({1: 0.001, 4096: 1.0})
    plan = buckets.optimal(range(1, 1001), lat, lambda b: 0.5, max_buckets=8)
    assert len(plan.buckets) <= 8
    with pytest.raises(ValueError):
        buckets.optimal(range(1, buckets.MAX_DISTINCT + 2), lat, lambda b: 0.5)
    with pytest.raises(ValueError):
        buckets.optimal([1, 2], lat, lambda b: 0.5, max_buckets=0)


# ---------------------------------------------------------------- the probe's prices
# Recorded (round 35, torch 2.15.0, 2-core CPU, load average 6.7-8.9 beside bench's hog and
# other sessions): a one-layer DistilBERT (dim 64) over 150 batch-1 requests of 52 lengths,
# 8-98: pad's compiling first call took 21.47 s at wall and 7.59 s of CPU (its compile and
# workers); the probe's pow2 buckets served 82.7 ms (up to 16) and 88.9 ms (32 on).
WALL_S, CPU_S = 21.470248872996308, 7.5926609999999854
LATENCY_MS = {8: 82.69791310085566, 16: 82.69791310085566, 32: 88.92087251260818,
              64: 88.92087251260818, 128: 88.92087251260818}


def _probe(wall_s: float, cpu_s: float | None) -> tuple[RunResult, dict[int, int]]:
    """A probe pass over the pow2 buckets, each compiling once with these first-call times."""
    probe = RunResult("hf:DistilBertModel", "pad", "inference")
    for i, (bucket, ms) in enumerate(LATENCY_MS.items()):
        v = VariationResult(index=i, batch_size=1, seq_len=bucket, shapes={}, compiles=1,
                            compiled_samples=[ms, ms], first_call_s=wall_s,
                            first_call_cpu_s=cpu_s)
        probe.variations.append(v)
    return probe, {i: b for i, b in enumerate(LATENCY_MS)}


def test_the_probe_charges_compiles_as_the_stream_does_min_of_wall_and_cpu() -> None:
    # round 34: the probe priced its compiles at wall, the measured pass at min(wall, CPU):
    # 126.5 s predicted against 90.9 s measured for DistilBERT on a busy machine
    sizes = [8, 11, 30, 30, 64, 98, 98, 98]
    probe, at = _probe(WALL_S, CPU_S)
    choice = buckets.from_probe(probe, sizes, at)
    steady = LATENCY_MS[32] / 1000  # the median compile's steady call (three of five at 32 on)
    assert choice["compile_s_each"] == pytest.approx(CPU_S - steady)  # what the stream charges
    assert choice["compile_wall_s_each"] == pytest.approx(WALL_S - steady)
    auto = choice["plans"]["auto"]
    assert auto["compile_s"] == pytest.approx(auto["compiles"] * (CPU_S - steady))
    # on a quiet machine the workers compile in parallel, CPU exceeds wall: wall is charged
    quiet, at = _probe(5.0, 9.0)
    assert buckets.from_probe(quiet, sizes, at)["compile_s_each"] == pytest.approx(5.0 - steady)
    # a probe without CPU readings (a JSON from before they were kept) falls back to wall
    bare, at = _probe(5.0, None)
    assert buckets.from_probe(bare, sizes, at)["compile_s_each"] == pytest.approx(5.0 - steady)


def test_the_buckets_line_says_how_far_the_probe_held_and_why() -> None:
    from dyncli.bench.core.cost import StreamCost
    from dyncli.bench.render import buckets_line

    probe, at = _probe(WALL_S, CPU_S)
    run = RunResult("hf:DistilBertModel", "pad", "inference")
    run.buckets = BucketChoice.from_dict(buckets.from_probe(probe, [8, 30, 98, 98], at))
    assert run.buckets.compile_wall_s_each == pytest.approx(WALL_S - LATENCY_MS[32] / 1000)
    predicted = run.buckets.plans["auto"].total_s
    line = buckets_line(run)
    assert line is not None and "measured" not in line  # no measured pass: nothing to set beside
    assert ("the probe's compiles waited for the machine: 21.38 s each at wall, charged 7.50 s "
            "(min of wall and CPU, as the stream's)") in line
    run.stream = StreamCost(requests=4, first_result_s=8.0, total_s=predicted * 0.8,
                            weighted_latency_ms=85.0, compile_s=7.5, compiles=1)
    line = buckets_line(run)
    assert line is not None
    assert f"auto 98: {predicted:.2f} s predicted (1 compile), {predicted * 0.8:.2f} s measured " \
           "(-20 %)" in line
    quiet, at = _probe(5.0, 9.0)  # wall not stretched: nothing said about waiting
    run.buckets = BucketChoice.from_dict(buckets.from_probe(quiet, [8, 30, 98, 98], at))
    assert "waited" not in (buckets_line(run) or "")


# three stand-in compiles, each a fixed CPU-bound child (as inductor's workers are), measured
# in a process of their own: the hog's workers are the test's children, not this one's
_COMPILES = """
import json, subprocess, sys
from dyncli.bench.core import cpu_time
out = []
for _ in range(3):
    with cpu_time.measure() as cost:
        subprocess.run([sys.executable, "-c", "sum(i*i for i in range(1_500_000))"], check=True)
    out.append((cost.wall_s, cost.cpu_s))
print(json.dumps(out))
"""


@pytest.mark.timing
def test_a_probe_measured_beside_a_hog_is_priced_from_what_its_compiles_burned() -> None:
    """The load-sensitive half of the probe's price, on real clocks, beside a bounded hog on
    every core: whatever the scheduler does, each compile is charged min(wall, CPU), never
    more than its wall, and the wall median is kept beside it. No time is asserted."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from dyncli.bench.hog import Hog

    root = Path(__file__).resolve().parents[2]
    with Hog(on_s=1.0, off_s=0.5, limit_s=120, workers=os.cpu_count() or 1):
        proc = subprocess.run([sys.executable, "-c", _COMPILES], capture_output=True, text=True,
                              check=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(root)})
    probe = RunResult("m", "pad", "inference")
    for i, (wall, cpu) in enumerate(json.loads(proc.stdout)):
        assert wall > 0 and cpu > 0  # the child's CPU was read, not only its wall
        probe.variations.append(VariationResult(
            index=i, batch_size=1 << i, seq_len=None, shapes={}, compiles=1,
            compiled_samples=[1.0, 1.0], first_call_s=wall, first_call_cpu_s=cpu))
    choice = buckets.from_probe(probe, [1, 2, 3, 4], {0: 1, 1: 2, 2: 4})
    charged = sorted(max(0.0, min(v.first_call_s, v.first_call_cpu_s or 0.0) - 0.001)
                     for v in probe.variations)
    assert choice["compile_s_each"] == pytest.approx(charged[1])
    assert choice["compile_s_each"] <= choice["compile_wall_s_each"] + 1e-12

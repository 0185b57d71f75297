"""--buckets auto: the DP optimizer against brute force, and the cost of a bucket list."""

from __future__ import annotations

import itertools
import random

import pytest

from dyncli.bench.core import buckets


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

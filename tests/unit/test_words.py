"""Counts in words (round 35: bench's buckets line read "1 compiles")."""

from __future__ import annotations

from dyncli.bench.core import buckets
from dyncli.bench.core.result import RunResult
from dyncli.bench.core.run_parts import BucketChoice, WarmStart
from dyncli.bench.core.status import Status
from dyncli.bench.render import buckets_line, start_line
from dyncli.words import counted, noun


def test_one_is_singular_every_other_count_plural() -> None:
    assert [counted(n, "compile") for n in (0, 1, 2)] == ["0 compiles", "1 compile", "2 compiles"]
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(12000, "request", grouped=True) == "12,000 requests"
    assert counted(12000, "request") == "12000 requests"
    assert (noun(1, "hit"), noun(2, "hit")) == ("hit", "hits")


def test_the_buckets_line_says_1_compile() -> None:
    # one bucket (the largest size) is cheapest when compiles dominate: auto compiles once
    sizes = [3, 5, 9, 17, 17, 30]
    plans = buckets.compare(sizes, lambda b: 0.001 * b, lambda _b: 5.0)
    assert plans["auto"].compiles == 1 and plans["pow2"].compiles > 1
    run = RunResult("m", "pad", "inference")
    run.buckets = BucketChoice(plans["auto"].buckets, None, 5.0, {}, plans)
    line = buckets_line(run)
    assert line is not None
    assert "(1 compile)" in line and "1 compiles" not in line
    assert f"({plans['pow2'].compiles} compiles)" in line


def test_the_restart_line_counts_each_process_compiles() -> None:
    run = RunResult("m", "automatic", "inference")
    run.start = WarmStart(
        Status.PASS,
        None,
        cold_compiles=1,
        cold_compile_time_s=2.0,
        compiles=0,
        compile_time_s=0.1,
        fx_cache_hits=1,
    )
    assert start_line(run) == (
        "automatic restart: cold process 1 compile 2.0 s; warm process "
        "0 compiles 0.1 s (1 FX cache hit)"
    )

"""Python's full collections inside a replay's requests (dyncli.bench.collector; the replay
loop of dyncli.bench.interleave): counted per player, only inside its timed requests, only
full ones, and said under the stream table. Real collections of real garbage; the replay loop's
module imports torch, so it is imported inside the tests that drive it (collection stays
torch-free)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from dyncli.bench import collector
from dyncli.bench.collector import FullCollections, Tally
from dyncli.bench.core.result import BenchResult, Environment, RunResult
from dyncli.bench.core.run_parts import Replay
from dyncli.bench.render import replay_gc_line
from dyncli.bench.timing import CpuClock


def _garbage() -> None:
    """Objects in reference cycles: only the cyclic collector frees them."""
    for _ in range(2000):
        a: list[Any] = []
        a.append(a)


def _collects(generation: int):  # type: ignore[no-untyped-def]
    def step() -> None:
        _garbage()
        gc.collect(generation)
    return step


@pytest.fixture(autouse=True)
def _only_explicit_collections() -> Any:
    """The collector runs only the collections a test asks for (gc.collect runs, and calls
    its callbacks, with automatic collection off), so counts are exact."""
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()


def test_callbacks_time_full_collections_only_inside_a_watch() -> None:
    now = [0.0]
    fc = FullCollections(counter=lambda: now[0])
    mine, other = Tally(), Tally()
    with fc:
        cb = fc._callback
        assert cb in gc.callbacks
        cb("start", {"generation": 2})  # outside every watch: no one's
        cb("stop", {"generation": 2})
        with fc.watch(mine):
            cb("start", {"generation": 2})
            now[0] += 0.25
            cb("stop", {"generation": 2})
            cb("start", {"generation": 0})  # a young collection: not a full one
            now[0] += 1.0
            cb("stop", {"generation": 0})
            cb("stop", {"generation": 2})  # a stop without its start: not counted
            with fc.watch(other):
                cb("start", {"generation": 2})
                now[0] += 0.5
                cb("stop", {"generation": 2})
            cb("start", {"generation": 2})  # open when the watch ends: no one's
        cb("stop", {"generation": 2})
    assert (mine.count, mine.seconds) == (1, 0.25)
    assert (other.count, other.seconds) == (1, 0.5)
    assert cb not in gc.callbacks


def test_the_callback_is_removed_when_the_block_raises() -> None:
    fc = FullCollections()
    with pytest.raises(RuntimeError), fc:
        raise RuntimeError("x")
    assert fc._callback not in gc.callbacks


def test_a_players_full_collections_are_its_own_not_the_next_ones() -> None:
    from dyncli.bench import interleave

    # real collections: static's first request runs a full one, automatic's a young one, and
    # one between turns (reading the counters) is in no player's requests
    reads = [0]

    def hits() -> dict[str, int]:  # read before and after each turn: once, a full collection
        reads[0] += 1
        if reads[0] == 2:  # right after static's first turn, before automatic's
            gc.collect()
        return {}

    callbacks = list(gc.callbacks)
    static = interleave.Player("static", {0: _collects(2), 1: _garbage})
    automatic = interleave.Player("automatic", {0: _collects(0), 1: _garbage})
    eager = interleave.Player("eager", {0: _garbage, 1: _garbage})
    interleave.replay_interleaved([0, 1, 1, 1], [static, automatic, eager], CpuClock(), chunk=2,
                                  hits=hits)
    assert static.replayed == automatic.replayed == eager.replayed == 4 and reads[0] == 12
    assert static.gc.count == 1 and 0.0 < static.gc.seconds <= static.measured_s
    assert (automatic.gc.count, automatic.gc.seconds) == (0, 0.0)
    assert (eager.gc.count, eager.gc.seconds) == (0, 0.0)
    assert gc.callbacks == callbacks  # the replay's hook is gone


def test_a_request_that_raises_keeps_the_collections_before_it() -> None:
    from dyncli.bench import interleave

    def boom() -> None:
        gc.collect()
        raise ValueError("bad size")

    p = interleave.Player("dynamic", {0: boom})
    interleave.replay_interleaved([0, 0], [p], CpuClock(), chunk=2, short_error=str)
    assert p.error == "bad size" and p.gc.count == 1


def test_the_replay_records_them_where_the_collector_is_generational(
        monkeypatch: pytest.MonkeyPatch) -> None:
    t = Tally(2, 0.75)
    monkeypatch.setattr(collector, "generational", lambda: True)
    r = Replay(3.0, 2.5, 1, **t.replay_fields())
    assert r.to_dict()["gc_full"] == 2 and r.to_dict()["gc_full_s"] == 0.75
    assert Replay.from_dict(r.to_dict()) == r
    # 3.14's incremental collector, a free-threaded build: not counted, not 0
    monkeypatch.setattr(collector, "generational", lambda: False)
    r = Replay(3.0, 2.5, 1, **t.replay_fields())
    assert r.gc_full is None and "gc_full" not in r.to_dict()
    assert Replay.from_dict({"measured_s": 1.0, "predicted_s": 1.0}).gc_full is None


def test_generational_is_this_pythons_collector() -> None:
    import sys
    import sysconfig
    expected = sys.version_info[:2] != (3, 14) and not sysconfig.get_config_var("Py_GIL_DISABLED")
    assert collector.generational() is expected


def test_the_line_under_the_stream_table_names_each_replay_that_held_one() -> None:
    env = Environment("0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    dynamic = RunResult("m", "dynamic", "inference")
    static = RunResult("m", "static", "inference")
    result = BenchResult("m", env, {}, runs=[dynamic, static], shapes_source="sizes")
    assert replay_gc_line(result) is None  # nothing replayed
    dynamic.replay = Replay(8.2, 7.5, 1, gc_full=0, gc_full_s=0.0)
    static.replay = Replay(9.0, 9.1, 3)  # not counted (an older document)
    assert replay_gc_line(result) is None
    dynamic.replay = Replay(8.2, 7.5, 1, gc_full=1, gc_full_s=0.673)
    line = replay_gc_line(result)
    assert line is not None
    assert line.startswith("full garbage collections inside the replays' requests: "
                           "dynamic 1 (0.67 s) — ")
    assert "static" not in line and "no prediction holds them" in line

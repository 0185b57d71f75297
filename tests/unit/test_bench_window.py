"""Same-window pricing, the bootstrap confidence, load readings, loops per sample, compile CPU
time and the CPU hog (dyncli.bench.core.confidence, .machine, .cpu_time; dyncli.bench.loops, .hog):
no torch."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dyncli.bench import loops
from dyncli.bench.core import confidence as conf
from dyncli.bench.core import cpu_time, machine
from dyncli.bench.core.confidence import Contender, Window
from dyncli.bench.hog import Hog
from dyncli.bench.timing import CpuClock

# ---------------------------------------------------------------- pricing across windows


def test_price_of_one_round_robin_window_is_each_columns_mean() -> None:
    w = Window({"eager": [2.0, 4.0], "static": [1.0, 1.0], "dynamic": [1.5, 2.5]})
    assert conf.price([w]) == {"eager": 3.0, "static": 1.0, "dynamic": 2.0}


def test_price_removes_the_load_of_the_window_a_strategy_ran_in() -> None:
    # the case: eager 8.7 ms in one strategy's window, 59.9 ms in another's; each
    # compiled strategy runs at half eager's speed in its own window, so they tie
    quiet = Window({"eager": [8.7] * 4, "dynamic": [4.35] * 4})
    busy = Window({"eager": [59.9] * 4, "unbacked": [29.95] * 4})
    p = conf.price([quiet, busy])
    pooled = (8.7 + 59.9) / 2
    assert p["eager"] == pytest.approx(pooled)
    assert p["dynamic"] == pytest.approx(p["unbacked"]) == pytest.approx(pooled / 2)


def test_totals_add_counts_compiles_and_fixed_costs() -> None:
    shapes = [[Window({"eager": [10.0, 10.0], "a": [5.0, 5.0]})],
              [Window({"eager": [20.0, 20.0], "a": [2.0, 2.0]})]]
    got = conf.totals(shapes, [3, 1], [Contender("eager"), Contender("a", [1.0, 0.5], 0.25)])
    assert got["eager"] == pytest.approx((3 * 10 + 20) / 1000)
    assert got["a"] == pytest.approx((3 * 5 + 2) / 1000 + 1.5 + 0.25)


def test_a_window_without_eager_is_ignored_and_a_shape_without_any_is_nan() -> None:
    assert conf.price([Window({"a": [1.0]})]) == {}
    got = conf.totals([[Window({"a": [1.0]})]], [1], [Contender("a")])
    assert math.isnan(got["a"])


# ---------------------------------------------------------------- the bootstrap confidence


def _noisy(mean: float, spread: float, n: int, phase: int = 0) -> list[float]:
    return [mean + spread * (((i * 7 + phase) % 11) - 5) / 5 for i in range(n)]


def test_a_clear_winner_is_sure_and_says_nothing() -> None:
    shapes = [[Window({"eager": _noisy(10, 1, 20), "fast": _noisy(2, 0.2, 20, 3),
                       "slow": _noisy(6, 0.5, 20, 5)})]]
    ids = [0] * 1000
    settle = conf.confidence(shapes, ids, [Contender("eager"), Contender("fast", [0.5]),
                                           Contender("slow", [0.5])], "fast")
    assert settle.confidence == 1.0 and settle.sure
    assert conf.reason(settle) == ""
    assert sum(settle.p_best.values()) == pytest.approx(1.0)


def test_a_tie_within_noise_is_below_0_9_and_asks_for_repeats() -> None:
    shapes = [[Window({"eager": _noisy(10, 3, 10), "a": _noisy(5.0, 2, 10, 1),
                       "b": _noisy(5.05, 2, 10, 4)})]]
    settle = conf.confidence(shapes, [0] * 500, [Contender("eager"), Contender("a", [1.0]),
                                                 Contender("b", [1.0])], "a", rounds=10)
    assert settle.confidence < conf.SURE
    text = conf.reason(settle)
    # the leaders with each one's own chance, never a second bare "confidence" (round 34)
    assert text.startswith("a, b are within noise of each other (each one's chance of the "
                           f"least total: a {settle.p_best['a']:.2f}, b {settle.p_best['b']:.2f})")
    assert "confidence" not in text
    assert "more repeats would settle it (--repeat " in text and "now 10" in text


def test_noisy_compiles_and_a_steady_gap_ask_for_a_longer_stream() -> None:
    # b serves 0.1 ms faster per request but its compiles are noisy and cost more
    shapes = [[Window({"eager": [10.0] * 10, "a": [3.0] * 10, "b": [2.9] * 10})]]
    settle = conf.confidence(shapes, [0] * 100,
                             [Contender("a", [1.0, 1.0]), Contender("b", [0.2, 2.0])], "a")
    assert settle.confidence < conf.SURE
    assert "b serves 0.1 ms faster per request" in settle.advice
    assert "a longer stream" in settle.advice


def test_confidence_is_deterministic_and_paired_rounds_cancel_common_load() -> None:
    # a load spike hits every column of round 3: paired resampling keeps a ahead of b in
    # every replicate; resampling columns independently would mix spikes into one side only
    load = [1.0, 1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0]
    shapes = [[Window({"eager": [10 * x for x in load], "a": [4.0 * x for x in load],
                       "b": [4.2 * x for x in load]})]]
    cs = [Contender("a"), Contender("b")]
    one = conf.confidence(shapes, [0] * 50, cs, "a")
    assert one == conf.confidence(shapes, [0] * 50, cs, "a")
    assert one.confidence == 1.0


def test_a_fixed_first_request_replaces_its_steady_price() -> None:
    shapes = [[Window({"eager": [10.0] * 4, "etc": [2.0] * 4})]]
    settle = conf.confidence(shapes, [0, 0, 0], [Contender("eager"),
                                                 Contender("etc", [0.0], 0.010, (0,))], "etc")
    # etc: 0.010 (the eager first call) + 2 × 2 ms = 0.014 s < eager 0.030 s
    assert settle.confidence == 1.0


# ---------------------------------------------------------------- load readings and warnings


def test_proc_readers_parse_and_tolerate_missing_files(tmp_path: Path) -> None:
    (tmp_path / "loadavg").write_text("3.91 2.10 1.00 3/400 12345\n")
    (tmp_path / "stat").write_text("cpu  100 0 50 800 50 0 0 25 0 0\ncpu0 1 2 3\n")
    assert machine.read_loadavg(str(tmp_path / "loadavg")) == 3.91
    t = machine.read_cpu_times(str(tmp_path / "stat"))
    tick = os.sysconf("SC_CLK_TCK")
    assert t == machine.CpuTimes(1025 / tick, 850 / tick, 25 / tick)
    assert machine.read_loadavg(str(tmp_path / "none")) is None
    assert machine.read_cpu_times(str(tmp_path / "loadavg")) is None


@pytest.mark.timing
def test_load_log_summary_on_this_machine() -> None:
    log = machine.LoadLog()
    log.read("start")
    sum(i * i for i in range(200_000))
    log.read("end")
    s = log.summary()
    assert s["readings"] == 2 and s["cores"] == os.cpu_count()
    if os.path.exists("/proc/stat"):
        assert 0.0 <= s["others_cpu_share"] <= 1.0 and s["steal_share"] >= 0.0


def test_pyperf_checks_and_load_warnings() -> None:
    assert machine.sample_warnings([10.0, 10.1, 9.9], "eager batch 8") == []
    text = machine.sample_warnings([10.0, 10.0, 30.0, 2.0], "eager batch 8")
    assert text[0].startswith("eager batch 8: the standard deviation (")
    assert any("the maximum (30 ms) is 131% greater than the mean (13 ms)" in t for t in text)
    assert any("the minimum (2 ms) is 85% smaller" in t for t in text)
    assert machine.drift([8.7, 59.9, 20.0]) == pytest.approx(59.9 / 8.7)
    assert machine.drift([8.7]) is None
    warn = machine.load_warnings({"cores": 2, "load_min": 1.1, "load_max": 3.9,
                                  "others_cpu_share": 0.6, "steal_share": 0.0}, 6.9, "batch 8")
    assert warn[0] == "the machine was busy: load average 1.1-3.9 on 2 cores"
    assert warn[1] == "other processes used 60% of the CPU time during the run"
    assert warn[2].startswith("eager's latency for one shape (batch 8) moved 6.9x")
    assert machine.load_warnings({"cores": 2, "load_min": 0.1, "load_max": 0.5}, 1.1) == []


def test_a_shape_whose_mean_one_slow_sample_decides_is_named() -> None:
    """Round 35, a one-layer BART at --repeat 3: eager at batch 1 seq 12 read 89.69, 4.64 and
    5.42 ms; the stream priced eager at 9.97 ms a request (199.44 s for 20000 requests) and
    its replay took 70.73 s, with no word: only the most frequent shape's samples were
    checked, and this shape was another."""
    cases = [("eager, batch 1 seq 12", [89.69, 4.64, 5.42]),
             ("eager, batch 2 seq 20", [4.7, 2.75, 3.35]),
             ("automatic, batch 1 seq 12", [1.06, 1.27, 1.34])]
    text = machine.skew_warning(cases)
    assert text == ("the stream's cost prices each shape at the mean of its samples, and a few "
                    "slow samples decide it for eager, batch 1 seq 12 (mean 33.2 ms, median "
                    "5.42 ms, slowest 89.7 ms): a larger --repeat dilutes them")
    assert machine.skew_warning(cases[1:]) is None  # spread, but no sample decides the mean
    assert machine.skew_warning([("x", [1.0]), ("y", []), ("z", [0.0, 0.0])]) is None
    many = machine.skew_warning([(f"s{i}", [1.0, 1.0, 9.0]) for i in range(5)])
    assert many is not None and "s0 (" in many and "s2 (" in many and "s3 (" not in many
    assert " and 2 more: " in many


def _log(own_rates: list[float], others: float, before: float,
         every_s: float = 5.0) -> machine.LoadLog:
    """A run's readings as the kernel would show them: the load average decays over a minute
    towards the runnable tasks (this run's CPU rate plus others'), one reading every
    ``every_s`` seconds; ``before``: the load average when the run began (what the minute
    before it left)."""
    log = machine.LoadLog(cores=2)
    decay = math.exp(-every_s / machine.LOAD_WINDOW_S)
    load, own_cpu = before, 5.0
    log.readings.append(machine.Reading(0.0, round(load, 2), None, own_cpu))
    for i, rate in enumerate(own_rates, 1):
        own_cpu += rate * every_s
        load = load * decay + (rate + others) * (1 - decay)
        log.readings.append(machine.Reading(i * every_s, round(load, 2), None, own_cpu))
    return log


def test_bench_own_threads_are_not_a_busy_machine() -> None:
    # benchmarks/load_signal.py on this 2-core machine (2026-12-02, torch 2.15.0, 90 s each):
    # two threads of matmuls alone took the load average from 0.7 to 1.8 (own 1.99, others
    # 0.02); right after a hog ended, 1.9-2.0, which the old rule (load above the cores)
    # called busy; beside one busy worker 1.9-2.8 (own 1.23, others 1.77), beside two 2.5-3.7
    rates = [1.0] * 6 + [1.9] * 24  # a compile on one thread, then two threads timing
    quiet = _log(rates, others=0.3, before=0.5).summary()
    assert quiet["load_max"] > 2.0  # the old rule's "busy"
    assert quiet["others_load"] == pytest.approx(0.3, abs=0.05)
    assert quiet["own_load"] == pytest.approx(1.9, abs=0.01)
    assert machine.load_warnings(quiet, 1.1) == []
    # work that ended as the run began: the average still holds it, the run does not
    after = _log(rates, others=0.0, before=2.6).summary()
    assert after["load_max"] > 2.0 and after["others_load"] == pytest.approx(0.0, abs=0.05)
    assert machine.load_warnings(after, 1.1) == []
    # a CPU hog beside it (two busy workers): the load rises, bench gets less of the cores
    hog = _log([0.7] * 6 + [1.2] * 24, others=1.8, before=0.5).summary()
    assert hog["others_load"] == pytest.approx(1.8, abs=0.05)
    assert machine.load_warnings(hog, 1.1) == [
        f"the machine was busy: load average {hog['load_min']:.1f}-{hog['load_max']:.1f} on 2 "
        f"cores, this run's own work about {hog['own_load']:.1f} of it"]
    # a run that used no CPU of its own (a GPU waiting): the whole load is others'
    idle = _log([0.0] * 8, others=2.5, before=2.5).summary()
    assert idle["own_load"] == 0.0 and idle["others_load"] == pytest.approx(2.5, abs=0.05)
    assert machine.load_warnings(idle, None)[0].startswith("the machine was busy")
    # under 30 s between readings the minute-long average cannot say: the cores are the bar
    short = _log([1.9] * 5, others=0.0, before=2.5).summary()
    assert short["own_load"] is None and short["others_load"] is None
    assert machine.load_warnings(short, None)[0].startswith(
        "the machine was busy: load average 2.3-2.5 on 2 cores")


def test_others_load_keeps_the_busiest_span() -> None:
    quiet_then_hog = _log([1.9] * 12, others=0.2, before=0.5).readings
    tail = _log([1.2] * 12, others=1.8, before=quiet_then_hog[-1].load or 0.0).readings[1:]
    for r in tail:
        r.wall += quiet_then_hog[-1].wall
        r.own_cpu += quiet_then_hog[-1].own_cpu - 5.0
    pair = machine.others_load(quiet_then_hog + tail)
    assert pair is not None
    assert pair[0] == pytest.approx(1.8, abs=0.05) and pair[1] == pytest.approx(1.2, abs=0.01)
    assert machine.others_load(quiet_then_hog[:3]) is None


# ---------------------------------------------------------------- loops per sample


class StepClock(CpuClock):
    """A clock that advances ``per_call`` ms on every call of the timed function."""

    def __init__(self, per_call_ms: float) -> None:
        self.now = 0.0
        self.per_call = per_call_ms
        super().__init__(lambda: self.now / 1000.0)

    def call(self) -> None:
        self.now += self.per_call


def test_calibrate_finds_timeits_loop_count_in_few_probes() -> None:
    clock = StepClock(0.03)
    calls = [0]

    def fn() -> None:
        calls[0] += 1
        clock.call()

    n = loops.calibrate(clock, fn)
    assert n == 1000  # 0.03 ms × 1000 = 30 ms >= 20 ms; 500 × 0.03 = 15 ms
    assert calls[0] < 3000  # jumped ahead, not 1+2+5+…+1000
    big = StepClock(50.0)
    assert loops.calibrate(big, big.call) == 1


def test_timed_loops_is_per_call_and_round_robin_rotates() -> None:
    clock = StepClock(0.0)
    order: list[str] = []

    def make(name: str, ms: float):  # type: ignore[no-untyped-def]
        def fn() -> None:
            order.append(name)
            clock.now += ms
        return fn

    fns = {"eager": make("eager", 2.0), "a": make("a", 1.0), "b": make("b", 0.5)}
    got = loops.round_robin(clock, fns, {"eager": 2, "a": 4}, rounds=3)
    assert {k: [round(x, 9) for x in v] for k, v in got.items()} == {
        "eager": [2.0] * 3, "a": [1.0] * 3, "b": [0.5] * 3}
    firsts = [order[0], order[2 + 4 + 1], order[2 * 7]]
    assert firsts == ["eager", "a", "b"]


def test_recordings_in_the_window_pass_are_counted_per_strategy_and_never_in_samples() -> None:
    # the H200 run of issue #35: automatic@reduce-overhead served batch 16 again under its
    # dynamic graph in the window, and torch recorded that size a second time (warm-up on the
    # first call, recording on the second, as torch's CUDA-graph trees do); bench counted 5 of
    # torch's 6. A model of one tree: a strategy's step records its size on its 2nd call.
    from dyncli.bench import interleave

    clock = StepClock(0.0)
    recorded = [0, 0.0]

    def tree(name: str, record_at: int):  # type: ignore[no-untyped-def]
        calls = [0]

        def fn() -> None:
            calls[0] += 1
            clock.now += 1.0
            if calls[0] == record_at:
                recorded[0] += 1
                recorded[1] += 0.25
        return fn

    eager = {16: tree("eager", 0), 32: tree("eager", 0)}
    kept = [interleave.Kept("static@reduce-overhead", {16: tree("s", 0), 32: tree("s", 0)},
                            lambda: 0),
            interleave.Kept("automatic@reduce-overhead", {16: tree("a", 2), 32: tree("a", 0)},
                            lambda: 0)]
    t = interleave.same_window(clock, eager, kept, rounds=3, target_ms=1.0,
                               recordings=lambda: (int(recorded[0]), recorded[1]))
    assert t.late_recordings == {"automatic@reduce-overhead": {16: (1, 0.25)}}
    assert t.timed_recordings == {}
    # a recording inside the timed rounds (its calls come after calibration) is said per shape
    late = [interleave.Kept("automatic@reduce-overhead", {16: tree("a", 5)}, lambda: 0)]
    t = interleave.same_window(clock, {16: tree("eager", 0)}, late, rounds=3, target_ms=1.0,
                               recordings=lambda: (int(recorded[0]), recorded[1]))
    assert t.late_recordings == {} and t.timed_recordings == {16: 1}
    # without a reader (CPU, or no CUDA-graph mode) nothing is counted
    t = interleave.same_window(clock, eager, kept[:1], rounds=2, target_ms=1.0)
    assert t.late_recordings == {} and t.timed_recordings == {}


def test_a_strategy_that_raises_in_the_window_is_left_out_of_that_shape_only() -> None:
    """Round 34: torch 2.15's ViT (one layer) under unbacked: the graph compiled at batch 2
    served batch 1 in the same-window pass and inductor's stride assertion raised; the
    traceback ended the run and nothing was printed. Now the strategy is left out of that
    shape's window, at its first call or inside the rounds, and the others are timed."""
    from dyncli.bench import interleave

    clock = StepClock(0.0)

    def ok() -> None:
        clock.now += 1.0

    def raises_after(n: int):  # type: ignore[no-untyped-def]
        calls = [0]

        def fn() -> None:
            calls[0] += 1
            clock.now += 1.0
            if calls[0] > n:
                raise AssertionError("expected size 64==64, stride 1==16 at dim=1")
        return fn

    eager = {1: ok, 2: ok}
    kept = [interleave.Kept("dynamic", {1: ok, 2: ok}, lambda: 0),
            interleave.Kept("unbacked", {1: raises_after(0), 2: ok}, lambda: 0),
            interleave.Kept("mark-dynamic", {1: raises_after(4), 2: ok}, lambda: 0)]
    t = interleave.same_window(clock, eager, kept, rounds=3, target_ms=1.0)
    assert set(t.errors) == {"unbacked", "mark-dynamic"}
    assert set(t.errors["unbacked"]) == {1} and "stride" in str(t.errors["unbacked"][1])
    assert set(t.errors["mark-dynamic"]) == {1}  # raised inside the rounds
    assert set(t.windows[1].columns) == {"eager", "dynamic"}
    assert set(t.windows[2].columns) == {"eager", "dynamic", "unbacked", "mark-dynamic"}
    assert all(len(c) == 3 for c in t.windows[1].columns.values())
    with pytest.raises(AssertionError):  # eager's own failure is not a strategy's
        interleave.same_window(clock, {1: raises_after(0)}, kept[:1], rounds=2, target_ms=1.0)


@pytest.mark.torch
def test_a_runs_late_recordings_join_its_count_and_are_said() -> None:
    pytest.importorskip("torch")
    from dyncli.bench import window
    from dyncli.bench.core.graphs import RunGraphs, ShapeGraphs
    from dyncli.bench.core.result import RunResult, VariationResult

    run = RunResult("m", "automatic", "inference", compile_mode="reduce-overhead")
    run.graphs = RunGraphs(recordings=5, record_s=0.06)
    run.variations = [VariationResult(i, b, None, {"x": [b, 3]}) for i, b in enumerate((16, 24))]
    for v in run.variations:
        v.graphs = ShapeGraphs(["no_graph", "recorded", "replayed"], [1.0, 0.1, 0.01], 1, 0.03)
    said: list[str] = []
    window._late_recordings(run, {0: (1, 0.02)}, said.append)
    assert run.graphs.recordings == 6 and run.graphs.record_s == pytest.approx(0.08)
    # the shapes' counts still add up to the run's (the GPU test's invariant)
    assert [v.graphs.recordings for v in run.variations] == [2, 1]
    assert run.variations[0].graphs.record_s == pytest.approx(0.05)
    assert said == ["automatic@reduce-overhead: recorded 1 more CUDA graph(s) in the "
                    "same-window pass, before its timed calls (0.020 s; a shape served by a "
                    "graph compiled after its first calls records its size again); counted in "
                    "its recordings"]
    window._late_recordings(run, None, said.append)
    assert run.graphs.recordings == 6 and len(said) == 1


@pytest.mark.torch
def test_a_run_that_raised_in_the_window_fails_at_that_shape_and_says_so() -> None:
    pytest.importorskip("torch")
    from dyncli.bench import window
    from dyncli.bench.core.result import RunResult, VariationResult
    from dyncli.bench.core.status import Status

    run = RunResult("m", "unbacked", "inference")
    run.variations = [VariationResult(i, b, None, {"x": [b, 3]}) for i, b in enumerate((1, 2))]
    run.finish()
    said: list[str] = []
    window._failed_in_window(run, None, said.append)
    assert run.status == Status.PASS and said == []
    window._failed_in_window(run, {0: AssertionError("expected size 64==64, stride 1==16")},
                             said.append)
    assert run.variations[0].status == Status.FAIL_TO_COMPILE
    assert run.variations[0].detail.startswith("raised in the same-window pass (its walk had "
                                               "passed): AssertionError: expected size 64")
    assert run.variations[1].status == Status.PASS and run.status == Status.FAIL_TO_COMPILE
    assert said == ["unbacked: raised in the same-window pass at shape(s) #0, which its walk "
                    "had passed: AssertionError: expected size 64==64, stride 1==16; those "
                    "shapes are not timed and the run is fail_to_compile"]


def test_the_interleaved_replay_times_the_requests_that_compiled() -> None:
    # the replay's compile wall beside the prediction's charge (the less of wall and CPU):
    # on a loaded machine they part, and the replay must say by how much (issue #32)
    from dyncli.bench import interleave
    from dyncli.bench.core.run_parts import Replay

    clock = StepClock(0.0)
    compiled = [0]

    def step(ms: float, compile_ms: float | None):  # type: ignore[no-untyped-def]
        first = [True]

        def fn() -> None:
            if first[0] and compile_ms is not None:  # a shape's first call compiles
                compiled[0] += 1
                time.sleep(compile_ms / 1000.0)
            first[0] = False
            clock.now += ms
        return fn

    strategy = interleave.Player("automatic", {0: step(1.0, 30.0), 1: step(1.0, 20.0)},
                                 compiles=lambda: compiled[0])
    eager = interleave.Player("eager", {0: step(2.0, None), 1: step(2.0, None)})
    interleave.replay_interleaved([0, 1, 0, 1, 0], [strategy, eager], clock, chunk=2)
    assert strategy.replayed == eager.replayed == 5 and not strategy.error
    assert compiled[0] == 2 and eager.compile_s == 0.0
    assert 0.05 <= strategy.compile_s <= strategy.measured_s  # 30 + 20 ms of sleep, and less
    r = Replay(strategy.measured_s, 0.01, 2, interleaved=True, compile_s=strategy.compile_s)
    assert Replay.from_dict(r.to_dict()) == r and "compile_s" in r.to_dict()
    assert "compile_s" not in Replay(1.0, 1.0).to_dict()


def test_every_replayed_request_is_awaited_one_player_or_many() -> None:
    # a request is served when its result is ready: the device is synchronized after each
    # one, in the interleaved replay and in the plain one (one player, one chunk), so a GPU's
    # queue cannot overlap request i+1's launch with request i's kernels in one and not the other
    from dyncli.bench import interleave

    class SyncClock(StepClock):
        def __init__(self) -> None:
            super().__init__(0.0)
            self.log: list[str] = []

        def synchronize(self) -> None:
            self.log.append("sync")

    clock = SyncClock()

    def step(name: str):  # type: ignore[no-untyped-def]
        return lambda: clock.log.append(name)

    ids = [0, 1, 0, 1, 1, 0]
    alone = interleave.Player("static", {0: step("a0"), 1: step("a1")})
    interleave.replay_interleaved(ids, [alone], clock, chunk=len(ids))
    assert clock.log == [x for i in ids for x in (f"a{i}", "sync")] and alone.replayed == 6
    clock.log.clear()
    a = interleave.Player("static", {0: step("a0"), 1: step("a1")})
    b = interleave.Player("eager", {0: step("b0"), 1: step("b1")})
    interleave.replay_interleaved(ids, [a, b], clock, chunk=4)
    assert clock.log.count("sync") == 12 and a.replayed == b.replayed == 6
    assert all(clock.log[i + 1] == "sync" for i, x in enumerate(clock.log) if x != "sync")


def test_a_replays_cache_hits_are_its_own_turns_and_read_outside_its_timing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --warm-cache the replay finds what the measurement wrote: each player's
    ``cache_hits`` is what torch's counters gained over its own turns, read outside them."""
    from dyncli.bench import interleave
    from dyncli.bench.core.run_parts import Replay

    counters = {"fxgraph": 0, "aotautograd": 0}
    now = [0.0]  # the replay's perf_counter: a request takes 1 s, a reading of the counters 100
    monkeypatch.setattr(interleave.time, "perf_counter", lambda: now[0])
    reads = [0]

    def hits() -> dict[str, int]:
        reads[0] += 1
        now[0] += 100.0
        return dict(counters)

    def hit(*kinds: str):  # type: ignore[no-untyped-def]
        def fn() -> None:
            for k in kinds:
                counters[k] += 1
            now[0] += 1.0
        return fn

    a = interleave.Player("static", {0: hit("fxgraph", "aotautograd"), 1: hit()})
    b = interleave.Player("automatic", {0: hit(), 1: hit("fxgraph")})
    e = interleave.Player("eager", {0: hit(), 1: hit()})
    interleave.replay_interleaved([0, 1, 0, 1], [a, b, e], StepClock(0.0), chunk=2, hits=hits)
    assert a.cache_hits == {"fxgraph": 2, "aotautograd": 2}
    assert b.cache_hits == {"fxgraph": 2} and e.cache_hits == {}
    assert reads[0] == 2 * 3 * 2  # before and after each player's turn, each chunk
    assert a.measured_s == b.measured_s == e.measured_s == 4.0  # the readings are not timed
    r = Replay(1.0, 2.0, 2, cache_hits=a.cache_hits)
    assert Replay.from_dict(r.to_dict()) == r and r.to_dict()["cache_hits"] == a.cache_hits
    assert "cache_hits" not in Replay(1.0, 1.0).to_dict()
    plain = interleave.Player("static", {0: hit("fxgraph"), 1: hit()})
    interleave.replay_interleaved([0, 1], [plain], StepClock(0.0), chunk=2)  # no counters given
    assert plain.cache_hits == {}


# ---------------------------------------------------------------- compile wall and CPU


def test_compile_cost_charges_the_less_of_wall_and_cpu() -> None:
    quiet = cpu_time.CompileCost(wall_s=2.0, self_cpu_s=1.0, workers_cpu_s=2.0)
    assert quiet.charged_s == 2.0 and not quiet.diverges
    busy = cpu_time.CompileCost(wall_s=6.0, self_cpu_s=1.0, workers_cpu_s=2.0)
    assert busy.charged_s == 3.0 and busy.diverges
    assert busy.as_dict()["cpu_s"] == 3.0


@pytest.mark.timing
def test_measure_counts_a_child_process_cpu() -> None:
    with cpu_time.measure() as cost:
        subprocess.run([sys.executable, "-c", "sum(i*i for i in range(3_000_000))"], check=True)
    assert cost.workers_cpu_s > 0.05
    assert cost.wall_s > 0


def test_live_descendants_are_read_from_proc(tmp_path: Path) -> None:
    tick = os.sysconf("SC_CLK_TCK")
    rows = {10: (1, 5), 11: (10, 7), 12: (11, 11), 13: (99, 1000)}  # pid: (ppid, ticks)
    for pid, (ppid, t) in rows.items():
        (tmp_path / str(pid)).mkdir()
        fields = ["S", str(ppid)] + ["0"] * 9 + [str(t), "0", "0", "0"] + ["0"] * 30
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a b) c) " + " ".join(fields))
    assert cpu_time.descendants_cpu_s(10, str(tmp_path)) == pytest.approx(18 / tick)
    assert cpu_time.descendants_cpu_s(77, str(tmp_path / "nothing")) == 0.0


# ---------------------------------------------------------------- the hog


@pytest.mark.timing
def test_hog_toggles_is_bounded_and_is_stopped_by_pid() -> None:
    with Hog(on_s=0.3, off_s=0.3, limit_s=30, workers=1) as hog:
        pid = hog.pids[0]
        time.sleep(0.2)
        assert hog.running()
        with open(f"/proc/{pid}/stat") as fh:
            assert fh.read().rpartition(")")[2].split()[0] in "RS"
    assert not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text()
    short = Hog(on_s=0.2, off_s=0.2, limit_s=0.5).start()
    # ends by itself, exit 0, not by stop()'s signals: its 0.5 s plus an interpreter's start-up
    # (seconds at load 8); a hog that ignored its limit would spin until this test's process
    # ended, and the generous deadline would raise (no bound on the wall clock: a busy machine
    # stretches the start-up)
    assert short.procs[0].wait(timeout=120) == 0
    short.stop()
    with pytest.raises(ValueError):
        Hog(limit_s=0)


# ---------------------------------------------------------------- the cost model's use of them


def _costed(prime_compiles: int = 0, cpu: float | None = None):  # type: ignore[no-untyped-def]
    from dyncli.bench.core import recommend
    from dyncli.bench.core.result import BenchResult, Environment, RunResult
    from tests.unit.conftest_bench import variation

    env = Environment("0.2.0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    runs = []
    for name, compiled in (("static", 1.0), ("dynamic", 1.02)):
        run = RunResult("m", name, "inference")
        run.variations = [variation(0, 8, 2.0, compiled, True)]
        run.variations[0].request = 0
        run.variations[0].first_call_cpu_s = cpu
        run.variations[0].compiled_samples = [compiled, compiled + 0.5, compiled - 0.3]
        if name == "dynamic" and prime_compiles:
            run.prime_s, run.prime_compiles = 0.3, prime_compiles
            run.variations[0].request = 1  # the stance compiles at the second request
        runs.append(run)
    result = BenchResult("m", env, {"repeat": 3}, runs=runs, shapes_source="sizes")
    result.requests, result.stream_ids = 200, [0] * 200
    recommend.apply(result)
    return result


def test_apply_adds_a_confidence_and_says_when_it_is_a_tie() -> None:
    result = _costed()
    rec = result.recommendation
    assert rec is not None and rec.confidence is not None and rec.p_best is not None
    assert set(rec.p_best) == {"eager", "static", "dynamic"}
    assert rec.as_dict()["confidence"] == rec.confidence
    if rec.confidence < conf.SURE:
        assert "are within noise of each other" in rec.reason


def test_compiles_are_charged_the_less_of_wall_and_cpu() -> None:
    wall = _costed()
    busy = _costed(cpu=0.2)  # a 0.5 s first call that burned 0.2 s of CPU: it waited
    assert wall.runs[0].stream is not None and busy.runs[0].stream is not None
    assert busy.runs[0].stream.compile_s == pytest.approx(wall.runs[0].stream.compile_s - 0.3)
    doc = busy.to_dict()["runs"][0]["compile_cost"]
    assert doc["uses"] == "min(wall, cpu)" and doc["charged_s"] == pytest.approx(0.2)
    assert doc["diverged"] == [0]


def test_compiles_in_the_eager_first_request_are_counted() -> None:
    # eager-then-compile: torch compiled an inner frame during the "eager" first request
    result = _costed(prime_compiles=1)
    dyn = result.runs[1].stream
    assert dyn is not None and dyn.compiles == 2
    # the walk's compile (0.5 s less a compiled call) + the first request less an eager call
    compiled_mean_s = (1.02 + 1.52 + 0.72) / 3 / 1000
    assert dyn.compile_s == pytest.approx((0.5 - compiled_mean_s) + (0.3 - 0.002))
    assert dyn.first_result_s == pytest.approx(0.3)
    assert result.to_dict()["runs"][1]["first_call_eager_compiles"] == 1


def test_the_terminal_line_carries_the_confidence(capsys: pytest.CaptureFixture[str]) -> None:
    from dyncli.bench.render import print_result

    result = _costed()
    rec = result.recommendation
    assert rec is not None and rec.confidence is not None
    print_result(result)
    out = capsys.readouterr().out
    assert (f"recommendation: {rec.strategy} (confidence {rec.confidence:.2f} that it costs "
            "the stream least) — ") in out


def test_with_restarts_the_confidence_resamples_every_processs_compiles() -> None:
    # static saves 1 ms a request (2 s over 2,000) against one 0.5 s compile in one process;
    # restarted every 100 requests it pays 20 compiles (10 s): eager wins, and the bootstrap
    # must race the same 20 compiles the stream cost charged, not the one measured in-process
    from dyncli.bench.core import recommend
    from dyncli.bench.core.result import BenchResult, Environment, RunResult, WarmStart
    from dyncli.bench.core.status import Status
    from tests.unit.conftest_bench import variation

    env = Environment("0.2.0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    run = RunResult("m", "static", "inference")
    v = variation(0, 8, 2.0, 1.0, True)
    v.request, v.eager_samples, v.compiled_samples = 0, [2.0, 2.1, 1.9], [1.0, 1.1, 0.9]
    run.variations = [v]
    run.start = WarmStart(Status.PASS, cold_event_s=(0.5,), warm_event_s=(0.5,))
    settings = {"repeat": 3, "requests_per_start": 100, "start": "cold"}
    result = BenchResult("m", env, settings, runs=[run], shapes_source="sizes")
    result.requests, result.stream_ids = 2000, [0] * 2000
    recommend.apply(result)
    rec = result.recommendation
    assert run.stream is not None and run.stream.compiles == 20
    assert rec is not None and rec.strategy == "eager"
    assert rec.confidence is not None and rec.confidence >= conf.SURE


def _tied(order: tuple[str, ...], seed: int):  # type: ignore[no-untyped-def]
    """Three compiled strategies whose steady states and compiles are equal within noise;
    ``order`` decides which the noise favours (the first gets the smallest point total)."""
    import random

    from dyncli.bench.core import recommend
    from dyncli.bench.core.result import BenchResult, Environment, RunResult
    from tests.unit.conftest_bench import variation

    rnd = random.Random(seed)
    env = Environment("0.2.0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    runs = []
    for k, name in enumerate(order):
        run = RunResult("m", name, "inference")
        v = variation(0, 8, 0.3, 0.05, True)
        v.request = 0
        v.eager_samples = [0.3 + rnd.gauss(0, 0.02) for _ in range(10)]
        v.compiled_samples = [0.05 + 0.0004 * k + rnd.gauss(0, 0.01) for _ in range(10)]
        v.first_call_s = 2.0 + 0.01 * k
        run.variations = [v]
        runs.append(run)
    result = BenchResult("m", env, {"repeat": 10}, runs=runs, shapes_source="sizes")
    result.requests, result.stream_ids = 60000, [0] * 60000
    recommend.apply(result)
    return result.recommendation


def test_leaders_within_noise_give_the_simplest_whichever_the_noise_put_first() -> None:
    picks, point_best = set(), set()
    for seed, order in enumerate((("unbacked", "automatic", "dynamic"),
                                  ("dynamic", "unbacked", "automatic"),
                                  ("automatic", "dynamic", "unbacked")) * 2):
        rec = _tied(order, seed)
        assert rec is not None and rec.confidence is not None
        assert rec.confidence < conf.SURE
        picks.add(rec.strategy)
        assert "within noise of each other" in rec.reason
        if rec.reason.startswith("automatic: the simplest to apply of "):
            assert rec.runner_up != "automatic" and rec.runner_up_total_s is not None
            assert rec.runner_up_total_s <= rec.total_s  # the noise's point best, kept in view
            point_best.add(rec.runner_up)
        else:
            point_best.add("automatic")
    assert picks == {"automatic"}
    assert len(point_best) >= 2  # the noise did put another first, and the answer held


def test_a_recommendation_line_says_one_confidence_and_what_it_is_about(
        capsys: pytest.CaptureFixture[str]) -> None:
    # round 34: "recommendation: automatic (confidence 0.12) — automatic: the simplest … ;
    # confidence 0.36: dynamic, … are within noise": the second was the point best's
    from dyncli.bench.core.result import BenchResult, Environment
    from dyncli.bench.render import print_result

    env = Environment("0.2.0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    for seed, order in enumerate((("automatic", "dynamic", "unbacked"),
                                  ("unbacked", "automatic", "dynamic"))):
        rec = _tied(order, seed)
        assert rec is not None and rec.confidence is not None and rec.p_best is not None
        result = BenchResult("m", env, {}, shapes_source="sizes")
        result.recommendation = rec
        print_result(result)
        line = next(x for x in capsys.readouterr().out.splitlines()
                    if x.startswith("recommendation:"))
        assert line.count("confidence") == 1
        assert line.startswith(f"recommendation: {rec.strategy} (confidence "
                               f"{rec.confidence:.2f} that it costs the stream least) — ")
        # every leader's own chance, each named, and the pick's is the line's confidence
        assert "each one's chance of the least total: " in line
        assert f"{rec.strategy} {rec.p_best[rec.strategy]:.2f}" in line
        assert rec.p_best[rec.strategy] == pytest.approx(rec.confidence)


def test_a_sure_winner_is_kept_even_when_a_simpler_one_follows() -> None:
    from dyncli.bench.core import recommend

    assert recommend.simplest(["pad", "automatic", "unbacked"]) == "automatic"
    assert recommend.simplest(["nonesuch", "pgo"]) == "pgo"
    result = _costed()  # static vs dynamic 1.02: when sure, the point best stays
    rec = result.recommendation
    assert rec is not None and rec.confidence is not None
    if rec.confidence >= conf.SURE:
        assert not rec.reason.startswith(f"{rec.strategy}: the simplest")

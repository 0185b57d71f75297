"""Real torch.compile on a tiny CPU model: compile counts, accuracy, and what each call got.

One bench call runs all four strategies (module-scoped), every test reads from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.bench.core.result import BenchResult, Call, Hooks
from dyncli.bench.core.shapes import plan_variations
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
STRATEGIES = ["static", "automatic", "mark-dynamic", "dynamic"]
CFG = BenchConfig(variations=5, strategy=STRATEGIES, device="cpu", repeat=3, warmup=1, seed=0,
                  fresh_cache=False)


@pytest.fixture(scope="module")
def bench() -> tuple[BenchResult, list[Call]]:
    calls: list[Call] = []
    # one process, so that the tap sees every call (below torch 2.13 the strategies run one
    # after another from a reset; from 2.13 in one window)
    result = run_bench(MODEL, CFG, Hooks(tap=calls.append), process_each=False)
    return result, calls


def planned_batches() -> list[int]:
    return [v.batch_size for v in plan_variations(8, CFG.variations, CFG.spread, CFG.seed)]


def test_plan_has_five_distinct_batch_sizes() -> None:
    assert len(set(planned_batches())) == 5


def test_compile_counts_per_strategy(bench: tuple[BenchResult, list[Call]]) -> None:
    result, _ = bench
    compiles = {r.strategy: r.compiles for r in result.runs}
    assert compiles == {"static": 5, "automatic": 2, "mark-dynamic": 1, "dynamic": 1}
    static = result.runs[0]
    assert [v.recompiled for v in static.variations] == [True] * 5
    automatic = result.runs[1]
    assert [v.recompiled for v in automatic.variations] == [True, True, False, False, False]


def test_counting_backend_agrees_with_torch_counters(bench: tuple[BenchResult, list[Call]]) -> None:
    result, _ = bench
    for run in result.runs:
        assert run.torch_unique_graphs == run.compiles, run.strategy


def test_all_accuracy_pass_and_no_limit_hit(bench: tuple[BenchResult, list[Call]]) -> None:
    result, _ = bench
    assert result.ran and not result.failed
    for run in result.runs:
        assert run.status == "pass"
        assert not run.recompile_limit_hit
        assert [v.status for v in run.variations] == ["pass"] * 5
        assert all(v.timed and v.speedup > 0 for v in run.variations)
        assert run.speedup.count == 5


def test_recompile_reasons_come_from_torch(bench: tuple[BenchResult, list[Call]]) -> None:
    result, _ = bench
    automatic = result.runs[1]
    assert automatic.variations[0].recompile_reasons == []
    reasons = automatic.variations[1].recompile_reasons
    assert len(reasons) == 1
    assert "size mismatch at index 0" in reasons[0]
    assert f"actual {planned_batches()[1]}" in reasons[0]
    assert all(v.recompile_reasons == [] for v in result.runs[3].variations)


def test_eager_and_compiled_got_the_same_varied_batch_in_every_timed_rep(
        bench: tuple[BenchResult, list[Call]]) -> None:
    # Plain bench times every shape in one window (issue #34): per shape, round-robin rounds
    # over eager and every strategy, each sample a loop of calls. Every timed call of a shape
    # got that shape's batch, the same data for eager and every strategy.
    result, calls = bench
    batches = planned_batches()
    for index, batch in enumerate(batches):
        timed = [c for c in calls if c.variation == index and c.phase == "timed"]
        eager = [c for c in timed if c.side == "eager"]
        assert len(eager) >= CFG.repeat
        for strategy in STRATEGIES:
            mine = [c for c in timed if c.strategy == strategy]
            compiled = [c for c in mine if c.side == "compiled"]
            assert len(compiled) >= CFG.repeat, (strategy, index)
            if not result.same_window:  # one strategy after another: eager beside each,
                # each pair's order alternating (round 33: A B, B A, …; timing.interleaved)
                pairs = [["eager", "compiled"], ["compiled", "eager"]]
                assert [c.side for c in mine] == [
                    side for r in range(CFG.repeat) for side in pairs[r % 2]]
        for c in timed:
            assert c.args[0].shape == (batch, 32)
            assert c.args[0].equal(eager[0].args[0])
        for strategy in STRATEGIES:
            first = [c for c in calls if c.strategy == strategy and c.variation == index
                     and c.phase == "first"]
            # one compiled first call, after eager's first call on the same data (eager's
            # first calls at a new shape are measured too: the cost model charges them)
            sides = [c.side for c in first]
            assert sides.count("compiled") == 1 and sides.index("compiled") > 0, (strategy, index)
            comp = first[sides.index("compiled")]
            assert all(c.args[0].equal(comp.args[0]) for c in first)
    # a fresh draw per variation: the data differs between variations
    by_var = {c.variation: c.args[0] for c in calls if c.strategy == "static" and c.phase == "timed"}
    assert not any(by_var[0][:6].equal(by_var[i][:6]) for i in range(1, 5))
    # the same data for every strategy (cloned per strategy, so not the same object)
    static0 = next(c.args[0] for c in calls if c.strategy == "static" and c.variation == 2)
    dynamic0 = next(c.args[0] for c in calls if c.strategy == "dynamic" and c.variation == 2)
    assert static0 is not dynamic0 and static0.equal(dynamic0)


def test_reported_batch_sizes_are_the_ones_run(bench: tuple[BenchResult, list[Call]]) -> None:
    result, _ = bench
    for run in result.runs:
        assert [v.batch_size for v in run.variations] == planned_batches()
        assert [v.shapes["0"] for v in run.variations] == [[b, 32] for b in planned_batches()]

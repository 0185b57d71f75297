"""The cost of CUDA graphs in a stream, torch-free: recordings, capture plans, the memory budget.

Per size, bench measures how its first calls were served and what each cost (a warm-up, the
recording, then replays); these tests give those numbers and check the terms built on them.
"""

from __future__ import annotations

import math

import pytest

from dyncli.bench.core import capture, recommend
from dyncli.bench.core.graphs import (
    NO_GRAPH,
    RECORDED,
    REPLAYED,
    GraphPlan,
    RunGraphs,
    ShapeGraphs,
    stream_calls,
)
from dyncli.bench.core.result import BenchResult, Environment, RunResult, VariationResult

MIB = 1 << 20
SERVED = [NO_GRAPH, RECORDED, REPLAYED]  # a new size: warm-up, recording, then replays


def _shape(first_s: float, record_s: float, steady: float = 0.01) -> ShapeGraphs:
    return ShapeGraphs(list(SERVED), [first_s, record_s, steady], 1, record_s - steady, 64 * MIB)


def test_a_new_size_pays_its_recording_once() -> None:
    shapes = {0: _shape(2.0, 0.51), 1: _shape(0.05, 0.41)}
    term = capture.graph_events([0, 0, 0, 1, 1], shapes, [0.01, 0.01], compiled=frozenset({0}))
    got = [(e.request, round(e.seconds, 6)) for e in term.events]
    # shape 0's first call compiled (charged as a compile); its second records;
    # shape 1 is new to the graph: a warm-up at its first request, its recording at its second
    assert got == [(1, 0.5), (3, 0.04), (4, 0.4)]
    assert term.recordings == 2 and term.record_s == pytest.approx(0.9)
    assert all(e.compiles == 0 for e in term.events)


def test_a_captured_size_does_not_pay_again() -> None:
    shapes = {0: _shape(0.05, 0.51), 1: _shape(0.05, 0.41)}
    term = capture.graph_events([0, 1, 0, 1, 0, 1, 0, 1], shapes, [0.01, 0.01])
    assert [e.request for e in term.events] == [0, 1, 2, 3]  # warm-ups, then recordings
    assert term.recordings == 2
    later = capture.graph_events([0, 1, 0, 1] + [0, 1] * 50, shapes, [0.01, 0.01])
    assert later.recordings == 2 and later.events == term.events[:4]


def _per(pool: int = 100 * MIB) -> dict[int, capture.SizeCost]:
    # latency grows with the size; recording a size costs 0.3 s; its first call 0.2 s
    return {s: capture.SizeCost(s / 1000, 0.2, 0.3, pool * s // 32, s / 500)
            for s in (16, 24, 32)}


STREAM = [16, 24, 16, 24, 32, 32, 16, 24]


def test_record_all_pays_each_size_and_capture_pays_its_pad_waste() -> None:
    per = _per()
    every = capture.plan_cost(STREAM, per, None)
    assert every.recordings == 3 and every.record_s == pytest.approx(0.9)
    assert every.total_s == pytest.approx(sum(s / 1000 for s in STREAM) + 3 * 0.2 + 3 * 0.3)
    assert every.pad_waste is None and every.pool_bytes == 50 * MIB + 75 * MIB + 100 * MIB
    one = capture.plan_cost(STREAM, per, [32], name="capture")
    assert one.recordings == 1 and one.capture_sizes == (32,)
    assert one.total_s == pytest.approx(len(STREAM) * 0.032 + 0.2 + 0.3)
    real = sum(STREAM)
    assert one.pad_waste == pytest.approx((32 * len(STREAM) - real) / real)
    assert one.pool_bytes == 100 * MIB


def test_sizes_outside_the_capture_sizes_run_without_graphs() -> None:
    plan = capture.plan_cost([16, 32, 32, 16], _per(), [16], name="capture")
    assert plan.recordings == 1  # 32 is above the largest capture size: no graph
    assert plan.total_s == pytest.approx(2 * 0.016 + 2 * 0.064 + 0.2 + 0.3 + 0.2)


def test_the_memory_budget_leaves_out_plans_that_exceed_it() -> None:
    per = _per()
    free = capture.plans(STREAM, per)
    assert [p.name for p in free] == ["record-all", "capture"]
    assert next(p for p in free if p.chosen).name == "capture"  # 2 recordings spared
    tight = capture.plans(STREAM, per, budget=120 * MIB)
    record_all, cap = tight
    assert not record_all.fits and cap.fits and cap.chosen
    assert cap.pool_bytes is not None and cap.pool_bytes <= 120 * MIB
    nothing = capture.plans(STREAM, per, budget=10 * MIB)
    assert not any(p.fits or p.chosen for p in nothing)


def test_the_rerecord_limit_plan_needs_torch_and_the_no_graph_latency() -> None:
    per = _per()
    assert "rerecord-limit" not in {p.name for p in capture.plans(STREAM, per)}
    got = {p.name: p for p in capture.plans(STREAM, per, limit_available=True)}
    limit = got["rerecord-limit"]
    assert limit.limit is not None and 1 <= limit.limit < 3
    no_latency = {s: capture.SizeCost(c.latency_s, c.new_s, c.record_s, c.pool_bytes)
                  for s, c in per.items()}
    assert "rerecord-limit" not in {p.name for p in
                                    capture.plans(STREAM, no_latency, limit_available=True)}


def test_stream_call_shares() -> None:
    shapes = {0: ShapeGraphs(list(SERVED), [1, 1, 1]),
              1: ShapeGraphs([NO_GRAPH, NO_GRAPH], [1, 1])}  # a skipped size
    shares = stream_calls([0, 0, 0, 0, 1, 1], shapes)
    assert shares == {REPLAYED: 2 / 6, RECORDED: 1 / 6, NO_GRAPH: 3 / 6}
    assert stream_calls([0], {}) == {}


def _variation(index: int, batch: int, ms: float, graphs: ShapeGraphs | None,
               compiles: int = 0, first_s: float = 0.05) -> VariationResult:
    v = VariationResult(index, batch, None, {"0": [batch, 8]}, compiles=compiles,
                        first_call_s=first_s, request=None, graphs=graphs)
    v.set_samples([batch / 5] * 4, [ms * (1 + 0.01 * k) for k in range(4)])
    return v


def _result(budget: str | None) -> BenchResult:
    sizes = (16, 24, 32)
    ids = [0, 1, 0, 1, 2, 2, 0, 1] * 3000
    plain = RunResult("m", "dynamic", "inference")
    graphs = RunResult("m", "dynamic", "inference", compile_mode="reduce-overhead",
                       graphs=RunGraphs(3, 0.9, 300 * MIB, 0, 3))
    for i, b in enumerate(sizes):
        # without graphs b/25 ms a request, replaying b/100 ms; a recording 0.4 s and
        # 100 MiB of pool at 32 (in proportion below)
        plain.variations.append(_variation(i, b, b / 25, None, int(i == 0),
                                           2.0 if i == 0 else 0.05))
        g = ShapeGraphs(list(SERVED), [2.0 if i == 0 else 0.2, 0.4, b / 1e5], 1, 0.39,
                        100 * MIB * b // 32)
        graphs.variations.append(_variation(i, b, b / 100, g, int(i == 0),
                                            2.0 if i == 0 else 0.2))
    for run in (plain, graphs):
        for v in run.variations:
            v.request = ids.index(v.index)
    settings = {"sizes": [16], "memory_budget": budget, "compile_mode": ["default",
                                                                          "reduce-overhead"]}
    return BenchResult("m", Environment("0", "2.15.0", "3.11", "cuda", "gpu", "float32"),
                       settings, [plain, graphs], {"batch": {"0": [0]}}, shapes_source="sizes",
                       stream_ids=ids)


def test_the_recommendation_prices_cuda_graph_runs_by_their_best_plan() -> None:
    result = _result(None)
    recommend.apply(result)
    rec = result.recommendation
    assert rec is not None and rec.strategy == "dynamic@reduce-overhead"
    run = result.runs[1]
    assert run.graphs is not None and run.graphs.calls
    chosen = run.graphs.chosen
    assert isinstance(chosen, GraphPlan) and chosen.name == "record-all"  # no budget
    assert run.stream is not None and run.stream.recordings == 3
    assert rec.apply is not None and rec.apply["torch_compile"]["mode"] == "reduce-overhead"
    doc = result.to_dict()
    assert doc["recommendation"]["strategy"] == "dynamic"
    assert doc["recommendation"]["compile_mode"] == "reduce-overhead"
    assert "cudagraphs" in doc["runs"][1] and "cudagraphs" not in doc["runs"][0]
    again = BenchResult.from_dict(doc)
    assert again.runs[1].graphs == run.graphs


def test_a_budget_that_fits_a_capture_plan_only_makes_it_the_plan_applied() -> None:
    result = _result("120MiB")
    recommend.apply(result)
    run = result.runs[1]
    assert run.graphs is not None and run.graphs.budget_bytes == 120 * MIB
    chosen = run.graphs.chosen
    assert chosen is not None and chosen.name == "capture" and chosen.capture_sizes
    assert chosen.capture_sizes == (32,)  # 16 and 24 padded up: one graph of 100 MiB
    rec = result.recommendation
    assert rec is not None and rec.strategy == "dynamic@reduce-overhead"
    assert rec.apply is not None
    assert rec.apply["inductor_config"] == {"triton.cudagraph_capture_sizes": [32]}
    assert rec.apply["pad_buckets"] == [32] and rec.apply["pad_dims"] == ["batch"]
    assert "capture" in rec.reason or rec.total_s == pytest.approx(
        result.runs[1].stream.total_s + chosen.total_s - result.runs[1].graphs.plans[0].total_s)


def test_a_budget_no_plan_fits_leaves_the_run_out_saying_so() -> None:
    result = _result("1MiB")
    recommend.apply(result)
    rec = result.recommendation
    assert rec is not None and rec.strategy != "dynamic@reduce-overhead"
    assert "not considered (CUDA graphs over --memory-budget): dynamic@reduce-overhead" \
        in rec.reason
    assert math.isfinite(rec.total_s)

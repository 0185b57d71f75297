"""A run under a CUDA-graph mode, priced for the recommendation: its stream's graph term, its
plans within the memory budget, and the plan it applies. No torch.

:mod:`dyncli.bench.core.recommend` calls these for every run; a run without CUDA-graph
measurements (CPU, or a mode without graphs) passes through unchanged. The cost terms
themselves are :mod:`dyncli.bench.core.capture`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from dyncli.bench.core import capture
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.graphs import RECORDED, ShapeGraphs, parse_bytes, stream_calls
from dyncli.bench.core.result import BenchResult, RunResult, VariationResult


def _shapes(run: RunResult) -> dict[int, ShapeGraphs]:
    return {v.index: v.graphs for v in run.variations if v.graphs is not None}


def term(run: RunResult, ids: Sequence[int], latency_s: Sequence[float]
         ) -> capture.GraphTerm | None:
    """The stream's CUDA-graph events under ``run`` (None: the run has no CUDA-graph
    measurements). ``latency_s[i]``: shape i's steady seconds."""
    shapes = _shapes(run)
    if not shapes:
        return None
    compiled = frozenset(v.index for v in run.variations if v.compiles)
    return capture.graph_events(ids, shapes, latency_s, compiled)


KINDS = (("batch", "batch_size", "seq_len"), ("seq", "seq_len", "batch_size"))


def varied(run: RunResult) -> str | None:
    """The one kind of dim (``batch``, ``seq``) the run's shapes vary, each shape its own size
    along it; None when both vary, or neither."""
    for kind, attr, other in KINDS:
        values = [getattr(v, attr) for v in run.variations]
        if (len(set(values)) == len(values) > 1 and None not in values
                and len({getattr(v, other) for v in run.variations}) == 1):
            return kind
    return None


def _sizes(run: RunResult, ids: Sequence[int]) -> tuple[list[int], dict[int, int], bool]:
    """Per request its size along the one varied dim, each shape's size, and whether plans
    may pad up to captured sizes (one dim varies, and the strategy's graph is dynamic from its
    first compile); else the shapes' indices, no padding."""
    kind = varied(run)
    row = table.find(run.strategy)
    if kind is None:
        return list(ids), {v.index: v.index for v in run.variations}, False
    attr = next(a for k, a, _ in KINDS if k == kind)
    size_of = {v.index: int(getattr(v, attr)) for v in run.variations}
    return [size_of[i] for i in ids], size_of, row.dynamic is True or row.marks


def price(result: BenchResult, run: RunResult, ids: Sequence[int], latency_s: Sequence[float],
          first_s: Callable[[VariationResult], float],
          no_graph_s: Sequence[float] | None) -> float | None:
    """What the stream costs ``run`` served its best way: its measured stream cost, plus (under
    a CUDA-graph mode) what its chosen plan saves or adds over recording every size. None: no
    plan fits the memory budget. Fills ``run.graphs`` (the stream's call shares, the plans).

    ``first_s(v)``: a variation's first call as the cost model charges it; ``no_graph_s``:
    each shape's steady seconds without graphs (the same strategy under the default mode).
    """
    assert run.stream is not None
    shapes = _shapes(run)
    if run.graphs is None or not shapes:
        return run.stream.total_s
    budget_text = result.settings.get("memory_budget")
    budget = parse_bytes(budget_text) if isinstance(budget_text, str) else None
    sizes, size_of, pads = _sizes(run, ids)
    if any(v.graphs is None or v.index not in size_of for v in run.variations):
        return run.stream.total_s  # a shape without observations: nothing to plan from
    first = {v.index: max(0.0, first_s(v) - latency_s[v.index]) for v in run.variations}
    # a compiling first call is a compile and a warm-up: its warm-up is taken to be what a
    # first call that did not compile cost (each size pays one), the rest is the compile
    # (paid alike by every way of serving the stream)
    warm = sorted(first[v.index] for v in run.variations if not v.compiles)
    warm_s = warm[len(warm) // 2] if warm else 0.0
    compile_s = sum(max(0.0, first[v.index] - warm_s) for v in run.variations if v.compiles)
    per: dict[int, capture.SizeCost] = {}
    for v in run.variations:
        g, lat = v.graphs, latency_s[v.index]
        assert g is not None
        record = sum(max(0.0, s - lat) for k, s in enumerate(g.call_s)
                     if k and g.kind_at(k) == RECORDED)
        per[size_of[v.index]] = capture.SizeCost(
            lat, min(warm_s, first[v.index]) if v.compiles else first[v.index], record,
            g.pool_growth_bytes, no_graph_s[v.index] if no_graph_s is not None else None)
    limit = table.release(result.environment.torch) >= table.release(table.RERECORD_LIMIT[1])
    run.graphs.calls = stream_calls(ids, shapes)
    run.graphs.budget_bytes = budget
    run.graphs.plans = capture.plans(sizes, per, budget, limit_available=limit, capture=pads,
                                     compile_s=compile_s)
    chosen = run.graphs.chosen
    if chosen is None:
        return None
    return run.stream.total_s + chosen.total_s - run.graphs.plans[0].total_s


def applied(run: RunResult, plan: Plan) -> Plan:
    """``plan`` with the capture sizes or re-record limit of the run's chosen plan."""
    chosen = run.graphs.chosen if run.graphs is not None else None
    if chosen is None or chosen.name == "record-all":
        return plan
    if chosen.capture_sizes:
        kind = varied(run)
        return replace(plan, capture_sizes=chosen.capture_sizes,
                       pad_dims=(kind,) if kind else plan.pad_dims)
    return replace(plan, rerecord_limit=chosen.limit)

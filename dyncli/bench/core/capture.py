"""The cost of CUDA graphs in a request stream, and the ways to serve it within a memory budget.

Pure: no torch. Under a mode that records CUDA graphs each new size costs more than its
compile: its first call runs a warm-up, its second records the size's graph (seconds and pool
memory, both measured per size by bench, :mod:`dyncli.bench.core.graphs`), and only then do its
calls replay. So, in stream order (docs/bench.md, "Compile modes"):

* :func:`graph_events`: a request that is its size's k-th costs what bench measured for that
  size's k-th call beyond a steady one — the recording at the second, the warm-up at the first
  when that call did not compile (a compile is charged as one already); a size already recorded
  costs nothing more: a captured size does not pay again.
* :func:`plans`: three ways to serve the stream, each costed from the same per-size numbers —
  ``record-all`` (what bench measured), ``capture`` (inputs padded up to a few of the stream's
  sizes, only those recorded: torch's ``triton.cudagraph_capture_sizes``; the sizes chosen by
  :func:`dyncli.bench.core.buckets.optimal` with a size's warm-up and recording as its price)
  and ``rerecord-limit`` (the first N sizes recorded, later new sizes served without graphs:
  ``cudagraph_dynamic_shape_rerecord_limit``, torch >= 2.15; needs the no-graph latency, from
  the same strategy measured under the default mode). A plan whose pool (the growth measured
  when each of its sizes recorded, summed) exceeds the budget is left out.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dyncli.bench.core import buckets
from dyncli.bench.core.cost import CompileEvent, pad_waste
from dyncli.bench.core.graphs import RECORDED, GraphPlan, ShapeGraphs, occurrences

PLAN_ORDER = ("record-all", "capture", "rerecord-limit")  # ties go to the first


@dataclass(frozen=True)
class GraphTerm:
    """The CUDA-graph part of a stream's cost: events beyond each request's steady latency."""

    events: tuple[CompileEvent, ...]
    recordings: int
    record_s: float


def graph_events(ids: Sequence[int], shapes: Mapping[int, ShapeGraphs],
                 latency_s: Sequence[float], compiled: frozenset[int] = frozenset()) -> GraphTerm:
    """What the stream pays for CUDA graphs beyond steady latency (see the module doc).

    ``shapes[i]``: shape i's observed calls; ``latency_s[i]``: its steady seconds; ``compiled``:
    the shapes whose first call compiled (charged as compiles, not here).
    """
    events: list[CompileEvent] = []
    recordings, record_s = 0, 0.0
    for r, (shape, k) in enumerate(zip(ids, occurrences(ids), strict=True)):
        g = shapes.get(shape)
        if g is None or k >= len(g.call_s) or (k == 0 and shape in compiled):
            continue
        extra = max(0.0, g.call_s[k] - latency_s[shape])
        if g.kind_at(k) == RECORDED:
            recordings += 1
            record_s += extra
        if extra > 0:
            events.append(CompileEvent(r, extra, 0))
    return GraphTerm(tuple(events), recordings, record_s)


@dataclass(frozen=True)
class SizeCost:
    """One size of the stream under a CUDA-graph mode, as measured (seconds beyond steady)."""

    latency_s: float  # steady: what a call costs once its graph replays
    new_s: float  # its first call beyond a steady one: compile and/or the graph's warm-up
    record_s: float  # its recording call beyond a steady one (0: nothing recorded)
    pool_bytes: int | None  # the graphs' pool growth when it recorded
    no_graph_s: float | None = None  # steady latency without graphs (the default mode's)


def plan_cost(sizes: Sequence[int], per: Mapping[int, SizeCost], capture: Sequence[int] | None,
              limit: int | None = None, name: str = "record-all",
              compile_s: float = 0.0) -> GraphPlan:
    """The stream of ``sizes`` served one way: every size its graph (``capture`` and ``limit``
    None), padded up to ``capture`` (sizes of the stream; a size above the largest runs
    unpadded, without graphs), or the first ``limit`` distinct sizes recorded (later ones
    without graphs). ``compile_s``: the compiles, which every way pays alike (a graph dynamic
    from its first compile; each size's own warm-up is in its ``new_s``)."""
    ordered = sorted(set(capture)) if capture is not None else None
    served: list[int] = []
    for s in sizes:
        i = bisect.bisect_left(ordered, s) if ordered is not None else -1
        served.append(ordered[i] if ordered is not None and i < len(ordered) else s)
    graphed: dict[int, None] = {}  # sizes that get a graph, in first-sight order
    for s, to in zip(sizes, served, strict=True):
        if ordered is not None and to == s and s not in ordered:
            continue  # outside the capture sizes: torch serves it without graphs
        if limit is None or to in graphed or len(graphed) < limit:
            graphed.setdefault(to, None)
    total, record = compile_s, 0.0
    recordings, pool, pool_known = 0, 0, True
    for to, k in zip(served, occurrences(served), strict=True):
        c = per[to]
        steady = c.latency_s if to in graphed else (
            c.no_graph_s if c.no_graph_s is not None else c.latency_s)
        total += steady + (c.new_s if k == 0 else 0.0)
        if k == 1 and to in graphed:
            total += c.record_s
            record += c.record_s
            recordings += 1
            pool_known = pool_known and c.pool_bytes is not None
            pool += c.pool_bytes or 0
    waste = pad_waste([(s, 1) for s in sizes], [(t, 1) for t in served]) \
        if ordered is not None else None
    return GraphPlan(name, total, record, recordings, pool if pool_known else None,
                     tuple(ordered) if ordered is not None else None, limit, waste)


def _fits(plan: GraphPlan, budget: int | None) -> bool:
    return budget is None or (plan.pool_bytes is not None and plan.pool_bytes <= budget)


def plans(sizes: Sequence[int], per: Mapping[int, SizeCost], budget: int | None = None,
          limit_available: bool = False, capture: bool = True,
          compile_s: float = 0.0) -> list[GraphPlan]:
    """``record-all``, the best ``capture`` and the best ``rerecord-limit`` plan for the stream
    of ``sizes`` (one varied size per request; ``per`` has every one of them), each marked
    whether it fits ``budget`` (bytes; None: no budget), the cheapest that fits ``chosen``.

    ``capture``: whether inputs can be padded (one varied dim, and a graph dynamic from its
    first compile: torch runs a static graph without CUDA graphs once capture sizes are set);
    ``limit_available``: whether torch has the re-record limit (>= 2.15); ``compile_s``: see
    :func:`plan_cost`. A ``capture`` plan that keeps every size is ``record-all`` and is not
    listed twice.
    """
    distinct = sorted(set(sizes))
    out = [plan_cost(sizes, per, None, compile_s=compile_s)]
    if capture and len(distinct) > 1:
        best: GraphPlan | None = None
        for k in range(1, len(distinct)):
            chosen = buckets.optimal(sizes, lambda b: per[b].latency_s,
                                     lambda b: per[b].new_s + per[b].record_s, k).buckets
            cand = plan_cost(sizes, per, chosen, name="capture", compile_s=compile_s)
            if best is None or _better(cand, best, budget):
                best = cand
        if best is not None:
            out.append(best)
    if limit_available and all(per[s].no_graph_s is not None for s in distinct):
        best = None
        for n in range(1, len(distinct)):
            cand = plan_cost(sizes, per, None, n, name="rerecord-limit", compile_s=compile_s)
            if best is None or _better(cand, best, budget):
                best = cand
        if best is not None:
            out.append(best)
    marked = [GraphPlan(p.name, p.total_s, p.record_s, p.recordings, p.pool_bytes,
                        p.capture_sizes, p.limit, p.pad_waste, _fits(p, budget)) for p in out]
    fitting = [p for p in marked if p.fits]
    if not fitting:
        return marked
    pick = min(fitting, key=lambda p: (p.total_s, PLAN_ORDER.index(p.name)))
    return [GraphPlan(p.name, p.total_s, p.record_s, p.recordings, p.pool_bytes,
                      p.capture_sizes, p.limit, p.pad_waste, p.fits, p is pick) for p in marked]


def _better(a: GraphPlan, b: GraphPlan, budget: int | None) -> bool:
    """Whether ``a`` beats ``b``: one that fits the budget first, then the cheaper."""
    return (not _fits(a, budget), a.total_s) < (not _fits(b, budget), b.total_s)

"""From what bench measured to what a request stream costs, and the recommendation. No torch.

The runner measures each distinct shape once per strategy (its variation) and records where
each compile sits in the stream (``VariationResult.request``); :func:`apply` turns that into a
:class:`~dyncli.bench.core.cost.StreamCost` per strategy and for eager, then picks the cheapest
strategy that passed (eager included: for a small model and a short stream, compiling may
never pay back).
"""

from __future__ import annotations

import math

from dyncli.bench.core import cost
from dyncli.bench.core.cost import Candidate, CompileEvent, StreamCost
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status

EAGER = "eager"


def mean(samples: list[float]) -> float:
    """The mean of a shape's timed samples, in ms.

    A stream's cost is a sum over its requests, which N x the *mean* estimates; the median
    (right for speedups) under-counts the long tail that every real request stream pays: with
    it, ``--replay`` came out 10-25 % above the prediction on a busy 2-core machine.
    """
    return sum(samples) / len(samples) if samples else float("nan")


def run_cost(run: RunResult, ids: list[int], n_shapes: int) -> StreamCost | None:
    """The stream's cost under one run; None when a shape has no steady-state timing."""
    by = {v.index: v for v in run.variations}
    if any(i not in by or not by[i].timed for i in range(n_shapes)):
        return None
    latency = [mean(by[i].compiled_samples) for i in range(n_shapes)]
    events = [CompileEvent(v.request, v.first_call_s - mean(v.compiled_samples) / 1000.0,
                           v.compiles)
              for v in run.variations if v.compiles and v.request is not None
              and v.first_call_s == v.first_call_s]
    overrides = {0: run.prime_s} if run.prime_s is not None else None
    out = cost.cost(ids, latency, events, overrides)
    padded = [by[i].padded_to for i in range(n_shapes)]
    if run.strategy == "pad" and all(p is not None for p in padded):
        real = [(by[i].batch_size or 0, by[i].seq_len or 1) for i in ids]
        pads = [((to.batch if to else None) or by[i].batch_size or 0,
                 (to.seq if to else None) or by[i].seq_len or 1)
                for i, to in ((i, padded[i]) for i in ids)]
        out.pad_waste = cost.pad_waste(real, pads)
    return out


def _eager_samples(result: BenchResult, n_shapes: int) -> list[list[float]] | None:
    pooled: list[list[float]] = [[] for _ in range(n_shapes)]
    for run in result.runs:
        for v in run.variations:
            if v.timed and 0 <= v.index < n_shapes:
                pooled[v.index].extend(v.eager_samples)
    return pooled if all(pooled) else None


def apply(result: BenchResult) -> None:
    """Fill every run's ``stream``, the eager cost and the recommendation (in place)."""
    ids = result.stream_ids
    if not ids:
        return
    n_shapes = max(ids) + 1
    eager = _eager_samples(result, n_shapes)
    candidates: list[Candidate] = []
    eager_cost = None
    if eager is not None:
        eager_cost = cost.cost(ids, [mean(s) for s in eager])
        candidates.append(Candidate(EAGER, eager_cost.total_s, True,
                                    tuple(cost.weighted_samples(ids, eager)),
                                    eager_cost.weighted_latency_ms, 0.0))
    result.eager_stream = eager_cost
    for run in result.runs:
        run.stream = run_cost(run, ids, n_shapes)
        if run.stream is None:
            continue
        if eager_cost is not None:
            run.stream.break_even, run.stream.break_even_projected = cost.break_even(
                run.stream.curve, eager_cost.curve, run.stream.weighted_latency_ms,
                eager_cost.weighted_latency_ms)
        by = {v.index: v for v in run.variations}
        samples = cost.weighted_samples(ids, [by[i].compiled_samples for i in range(n_shapes)])
        candidates.append(Candidate(run.strategy, run.stream.total_s, run.status == Status.PASS,
                                    tuple(samples), run.stream.weighted_latency_ms,
                                    run.stream.compile_s, run.stream.break_even))
    for run in result.runs:  # a strategy that could not be costed is named, not dropped
        if run.stream is None and run.status != Status.PASS:
            candidates.append(Candidate(run.strategy, math.nan, False))
    result.recommendation = cost.recommend(candidates, len(ids))

"""From what bench measured to what a request stream costs, and the recommendation. No torch.

The runner measures each distinct shape once per strategy (its variation) and records where
each compile sits in the stream (``VariationResult.request``); :func:`apply` turns that into a
:class:`~dyncli.bench.core.cost.StreamCost` per strategy and for eager, then picks the cheapest
strategy that passed (eager included: for a small model and a short stream, compiling may
never pay back).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dyncli.bench.core import confidence, cost, graph_plans, restarts
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan, plan_of
from dyncli.bench.core.cost import Candidate, CompileEvent, Recommendation, StreamCost
from dyncli.bench.core.result import BenchResult, RunResult, VariationResult
from dyncli.bench.core.run_parts import Replay
from dyncli.bench.core.status import Status
from dyncli.words import noun

EAGER = table.EAGER


def mean(samples: list[float]) -> float:
    """The mean of a shape's timed samples, in ms.

    A stream's cost is a sum over its requests, which N x the *mean* estimates; the median
    (right for speedups) under-counts the long tail that every real request stream pays: with
    it, ``--replay`` came out 10-25 % above the prediction on a busy 2-core machine.
    """
    return sum(samples) / len(samples) if samples else float("nan")


def events_of(run: RunResult) -> list[CompileEvent]:
    """A run's compiles in stream order: each first call beyond a steady-state call."""
    return [CompileEvent(v.request, charged_first_call_s(v) - mean(v.compiled_samples) / 1000.0,
                         v.compiles)
            for v in sorted(run.variations, key=lambda v: v.request or 0)
            if v.compiles and v.request is not None and v.first_call_s == v.first_call_s]


def steady_s(run: RunResult) -> list[float] | None:
    """Each shape's steady seconds under ``run`` (by index); None when one is not timed."""
    by = {v.index: v for v in run.variations}
    if not by or any(i not in by or not by[i].timed for i in range(max(by) + 1)):
        return None
    return [mean(by[i].compiled_samples) / 1000.0 for i in range(max(by) + 1)]


def restarts_of(run: RunResult, settings: dict[str, Any]) -> bool:
    """Whether the stream is costed as restarted processes (``--start warm`` or
    ``--requests-per-start``) and the run has the two processes' measurements for it."""
    wanted = settings.get("start") == "warm" or settings.get("requests_per_start")
    return bool(wanted) and run.start is not None and run.start.measured


def stream_events(run: RunResult, ids: list[int],
                  settings: dict[str, Any]) -> list[CompileEvent]:
    """The compiles the stream pays under ``run``: the measured ones in stream order, or, when
    the stream is costed as restarted processes, every process's (cold, then warm); and under a
    mode that records CUDA graphs, each size's warm-up and recording
    (:func:`~dyncli.bench.core.capture.graph_events`)."""
    events = events_of(run)
    steady = steady_s(run)
    term = graph_plans.term(run, ids, steady) if steady is not None else None
    if term is not None:
        events += term.events
    if not restarts_of(run, settings):
        return events
    assert run.start is not None
    per = settings.get("requests_per_start")
    return restarts.restart_events(
        ids, events, list(run.start.cold_event_s or ()) or [e.seconds for e in events],
        list(run.start.warm_event_s or ()),
        per if isinstance(per, int) and not isinstance(per, bool) and per >= 1 else None,
        "warm" if settings.get("start") == "warm" else "cold")


def run_cost(run: RunResult, ids: list[int], n_shapes: int,
             settings: dict[str, Any] | None = None) -> StreamCost | None:
    """The stream's cost under one run; None when a shape has no steady-state timing."""
    by = {v.index: v for v in run.variations}
    if any(i not in by or not by[i].timed for i in range(n_shapes)):
        return None
    latency = [mean(by[i].compiled_samples) for i in range(n_shapes)]
    events = stream_events(run, ids, settings or {})
    overrides = {0: run.prime_s} if run.prime_s is not None else None
    if run.prime_s is not None and run.prime_compiles and ids:
        # torch compiled inner frames during the "eager" first request: its seconds beyond an
        # eager call are compile seconds, and those compiles count (plain torch counts them)
        eager_s = mean(by[ids[0]].eager_samples) / 1000.0
        events.append(CompileEvent(0, max(0.0, run.prime_s - eager_s), run.prime_compiles))
        overrides = {0: min(run.prime_s, eager_s)}
    out = cost.cost(ids, latency, events, overrides, strategy_new_shape_s(by, n_shapes))
    term = graph_plans.term(run, ids, [ms / 1000.0 for ms in latency])
    if term is not None:
        out.recordings, out.record_s = term.recordings, term.record_s
    padded = [by[i].padded_to for i in range(n_shapes)]
    padding = table.find(run.strategy).pads or bool(run.plan and run.plan.capture_sizes)
    if padding and all(p is not None for p in padded):
        real = [(by[i].batch_size or 0, by[i].seq_len or 1) for i in ids]
        pads = [((to.batch if to else None) or by[i].batch_size or 0,
                 (to.seq if to else None) or by[i].seq_len or 1)
                for i, to in ((i, padded[i]) for i in ids)]
        out.pad_waste = cost.pad_waste(real, pads)
    return out


def strategy_new_shape_s(by: dict[int, VariationResult], n_shapes: int) -> list[float | None]:
    """Per shape: a strategy's first call beyond its steady state where it did not compile
    (a compiling first call is charged as the compile: :func:`events_of`)."""
    out: list[float | None] = []
    for i in range(n_shapes):
        v = by.get(i)
        ok = v is not None and not v.compiles and v.first_call_s == v.first_call_s \
            and v.compiled_samples
        out.append(v.first_call_s - mean(v.compiled_samples) / 1000.0 if ok and v else None)
    return out


def eager_new_shape_s(result: BenchResult, eager_ms: list[float]) -> list[float | None]:
    """Per shape: eager's first call in the process beyond its steady state (the mean over the
    runs that measured it: one per process)."""
    firsts: list[list[float]] = [[] for _ in eager_ms]
    for run in result.runs:
        for v in run.variations:
            x = v.eager_first_call_s
            if x is not None and x == x and 0 <= v.index < len(eager_ms):
                firsts[v.index].append(x)
    return [sum(xs) / len(xs) - ms / 1000.0 if xs else None
            for xs, ms in zip(firsts, eager_ms, strict=True)]


def _eager_samples(result: BenchResult, n_shapes: int) -> list[list[float]] | None:
    pooled: list[list[float]] = [[] for _ in range(n_shapes)]
    for run in result.runs:
        for v in run.variations:
            if v.timed and 0 <= v.index < n_shapes:
                pooled[v.index].extend(v.eager_samples)
    return pooled if all(pooled) else None


def _predicting(replay: Replay | None, total_s: float) -> Replay | None:
    """``replay`` compared with ``total_s``, the stream cost the result shows."""
    return None if replay is None else replace(replay, predicted_s=total_s)


def apply(result: BenchResult) -> None:
    """Fill every run's ``stream``, the eager cost and the recommendation (in place)."""
    ids = result.stream_ids
    if not ids:
        return
    n_shapes = max(ids) + 1
    eager = _eager_samples(result, n_shapes)
    candidates: list[Candidate] = []
    eager_cost = None
    over_budget: list[str] = []  # CUDA-graph runs no plan of which fits --memory-budget
    if eager is not None:
        eager_ms = [mean(s) for s in eager]
        eager_cost = cost.cost(ids, eager_ms, new_shape_s=eager_new_shape_s(result, eager_ms))
        candidates.append(Candidate(EAGER, eager_cost.total_s, True,
                                    tuple(cost.weighted_samples(ids, eager)),
                                    eager_cost.weighted_latency_ms, 0.0))
    if eager_cost is not None and result.eager_stream is not None:
        # measured once, kept across re-costing; its prediction is the cost now shown: a
        # strategy a process each (torch < 2.13) replays eager in the first child, against that
        # child's eager cost, and the parent prices eager from every child's samples (round 34:
        # GPT-2 on torch 2.4.1, "0.14 / 0.57" beside an eager total of 0.38 s)
        eager_cost.replay = _predicting(result.eager_stream.replay, eager_cost.total_s)
    result.eager_stream = eager_cost
    for run in result.runs:
        # a strategy that ran eagerly is not costed: its latencies are not a compiled model's
        run.stream = None if run.status == Status.RAN_EAGER \
            else run_cost(run, ids, n_shapes, result.settings)
        if run.stream is None:
            continue
        run.replay = _predicting(run.replay, run.stream.total_s)
        if eager_cost is not None:
            run.stream.break_even, run.stream.break_even_projected = cost.break_even(
                run.stream.curve, eager_cost.curve, run.stream.weighted_latency_ms,
                eager_cost.weighted_latency_ms)
        by = {v.index: v for v in run.variations}
        samples = cost.weighted_samples(ids, [by[i].compiled_samples for i in range(n_shapes)])
        # under a CUDA-graph mode: its best plan within the memory budget (the same strategy
        # under the default mode prices sizes served without graphs)
        plain = next((r for r in result.runs if r.strategy == run.strategy
                      and r.compile_mode == table.DEFAULT_MODE and r.stream is not None), None)
        total = graph_plans.price(result, run, ids, steady_s(run) or [],
                                  charged_first_call_s, steady_s(plain) if plain else None)
        if total is None:
            over_budget.append(run.label)
            continue
        candidates.append(Candidate(run.label, total, run.status == Status.PASS,
                                    tuple(samples), run.stream.weighted_latency_ms,
                                    run.stream.compile_s, run.stream.break_even))
    for run in result.runs:  # a strategy that could not be costed is named, not dropped
        if run.stream is None and run.status != Status.PASS:
            candidates.append(Candidate(run.label, math.nan, False))
    if not stream_given(result):
        # The seeded variations are a measurement plan, not traffic: each strategy's
        # break-even says when compiling pays back; which to use depends on the user's stream.
        result.recommendation = None
        return
    rec = cost.recommend(candidates, len(ids), over_budget)
    if rec is not None:
        rec = with_confidence(result, rec, n_shapes, candidates)
        rec = replace(rec, apply=plan_for(result, rec.strategy).as_dict())
    result.recommendation = rec


def charged_first_call_s(v: VariationResult) -> float:
    """A compiling first call's seconds as the cost model charges them: min(wall, CPU).

    Wall is what a stream waits on a quiet machine (inductor's workers compile in parallel, so
    CPU can exceed it); on a busy one wall also holds the time spent waiting for a core, which
    CPU does not (docs/bench.md, "Compile cost that load cannot fake").
    """
    cpu = v.first_call_cpu_s
    if cpu is None or not cpu > 0:
        return v.first_call_s
    return min(v.first_call_s, cpu)


def windows(result: BenchResult, n_shapes: int) -> list[list[confidence.Window]]:
    """Per shape, the windows its samples were taken in: one per run (eager, that strategy).

    In same-window mode every run's eager column is the same round-robin window's, so pricing
    reduces to each strategy's own mean; otherwise each strategy is priced by its ratio to the
    eager calls interleaved with it, times eager pooled over all runs.
    """
    out: list[list[confidence.Window]] = [[] for _ in range(n_shapes)]
    for run in result.runs:
        if run.status != Status.PASS:
            continue
        for v in run.variations:
            if v.timed and 0 <= v.index < n_shapes:
                out[v.index].append(confidence.Window(
                    {confidence.EAGER: v.eager_samples, run.label: v.compiled_samples}))
    return out


def with_confidence(result: BenchResult, rec: Recommendation, n_shapes: int,
                    candidates: Sequence[Candidate]) -> Recommendation:
    """The recommendation with its bootstrap confidence, and words when it is below 0.9.

    Below 0.9 the leaders are within noise of each other, and the recommendation becomes the
    simplest of them to apply (:data:`SIMPLEST`), so that two runs of the same benchmark give
    the same answer (its confidence is then that strategy's own probability of being best).
    """
    ids = result.stream_ids
    contenders = [confidence.Contender(EAGER)]
    for run in result.runs:
        by = {v.index: v for v in run.variations}
        if run.status != Status.PASS or run.stream is None \
                or any(i not in by or not by[i].timed for i in range(n_shapes)):
            continue
        # the compiles the stream cost charged: with restarts, every process's (issue #19)
        compiles = [e.seconds for e in stream_events(run, ids, result.settings)]
        fixed, at = (run.prime_s, (0,)) if run.prime_s is not None else (0.0, ())
        contenders.append(confidence.Contender(run.label, compiles, fixed, at))
    if rec.strategy not in {c.name for c in contenders}:
        return rec
    repeat = result.settings.get("repeat")
    settle = confidence.confidence(windows(result, n_shapes), ids, contenders, rec.strategy,
                                   rounds=repeat if isinstance(repeat, int) else None)
    words = confidence.reason(settle)
    p_best = {k: round(v, 4) for k, v in settle.p_best.items()}
    pick = simplest(settle.leaders) if not settle.sure else rec.strategy
    totals = {c.name: c.total_s for c in candidates if c.passed and math.isfinite(c.total_s)}
    if pick != rec.strategy and pick in totals:
        # Leaders within noise of each other: which of them has the least point estimate is
        # the noise's choice, and flips from run to run (issue #18). Recommend the one that is
        # simplest to apply, the same whichever of them the noise put first.
        # the leaders and their chances said once, here (round 34: the words below said them
        # again under a "confidence" that was the point best's, beside the pick's own)
        lead = (f"{pick}: the simplest to apply of {', '.join(settle.leaders)}, which are "
                f"within noise of each other ({pick} {totals[pick]:.2f} s predicted, "
                f"{rec.strategy} {rec.total_s:.2f} s; {confidence.chances(settle)})")
        words = settle.advice
        # rec.reason ranks by predicted total, where the pick may be "next best": said once,
        # as what it is (issue #34: "recommendation: X … next best X")
        ranked = rec.reason.replace(f"; next best {pick}: ", f"; then {pick}: ", 1)
        return replace(rec, strategy=pick, total_s=totals[pick], runner_up=rec.strategy,
                       runner_up_total_s=rec.total_s, confidence=settle.p_best.get(pick, 0.0),
                       p_best=p_best,
                       reason=f"{lead}; by predicted total, {ranked}"
                       + (f"; {words}" if words else ""))
    return replace(rec, confidence=settle.confidence, p_best=p_best,
                   reason=f"{rec.reason}; {words}" if words else rec.reason)


# From the least to the most to apply (the rows' simplicity): nothing; torch.compile as it is;
# one argument; a stance; a config flag; per-input marks or a source list; a pad wrapper; a
# profiling run first.
SIMPLEST = tuple(s.name for s in sorted(table.TABLE, key=lambda s: s.simplicity))


def simplest(names: Sequence[str]) -> str:
    """The simplest to apply of ``names`` (by the rows' ``simplicity``; unknown names last)."""
    return table.simplest(list(names))


def stream_given(result: BenchResult) -> bool:
    """Whether the costed stream is the user's (``--shapes``, ``--sizes`` or ``--requests``)."""
    return result.shapes_source != "plan" or result.settings.get("requests") is not None


def plan_for(result: BenchResult, name: str) -> Plan:
    """How to serve the model as bench measured run ``name`` (a strategy, or a strategy under
    a compile mode: :func:`~dyncli.bench.core.strategy.label`; ``recommendation.apply``).

    The plan the run measured, with the compiles the stream cost predicts (a run read back from
    JSON has none: its plan is rebuilt from the settings, as the run built it); under a
    CUDA-graph mode, with the capture sizes or re-record limit of the run's chosen plan.
    """
    strategy, compile_mode = table.split(name)
    run = next((r for r in result.runs if r.label == name), None)
    if run is not None and run.plan is not None:
        plan = run.plan
    else:
        plan = plan_of(strategy, result.settings, result.dims, compile_mode=compile_mode)
        if run is not None and run.buckets is not None:  # --buckets auto: what it chose
            plan = replace(plan, buckets=run.buckets.chosen)
    if run is not None:
        plan = graph_plans.applied(run, plan)
    predicted = run.stream.compiles if run is not None and run.stream is not None else None
    return replace(plan, predicted_compiles=0 if strategy == EAGER else predicted)


def no_plan(result: BenchResult) -> str | None:
    """Why ``--emit`` can write no plan for ``result`` (None: it can: the recommendation's).

    A plan is the best of every strategy asked for. A run stopped (Ctrl-C) before one of them
    was measured cannot say that the best of the others is the best of all, so it writes none
    and says which were not measured; stopped after every one was measured (in a replay, the
    end's probe), the plan stands. Round 34: after Ctrl-C bench said "no strategy passed".
    """
    if result.interrupted:
        missing = [r.label for r in result.runs if r.status == Status.INTERRUPTED]
        if missing:
            said = ", ".join(missing)
            return (f"no plan written: the run was interrupted (Ctrl-C) before {said} "
                    f"{noun(len(missing), 'was', 'were')} measured, and a plan is the best "
                    "of every strategy asked for; run it to the end to write one")
    rec = result.recommendation
    if rec is not None and rec.apply is not None:
        return None
    if result.interrupted:
        return "no plan written: the run was interrupted (Ctrl-C) and recommends nothing"
    return "no recommendation to write (no strategy passed)"

"""From what bench measured to what a request stream costs, and the recommendation. No torch.

The runner measures each distinct shape once per strategy (its variation) and records where
each compile sits in the stream (``VariationResult.request``); :func:`apply` turns that into a
:class:`~dyncli.bench.traffic.StreamCost` per strategy and for eager, then picks the cheapest
strategy that passed (eager included: for a small model and a short stream, compiling may
never pay back).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from dyncli.bench import confidence, stream, traffic
from dyncli.bench.result import PASS, BenchResult, RunResult, VariationResult
from dyncli.bench.shapes import Variation, plan_variations
from dyncli.bench.stream import Shape, StreamError
from dyncli.bench.traffic import Candidate, CompileEvent, Recommendation, StreamCost
from dyncli.config import BenchConfig
from dyncli.errors import InputError, UsageError

EAGER = "eager"


def mean(samples: list[float]) -> float:
    """The mean of a shape's timed samples, in ms.

    A stream's cost is a sum over its requests, which N x the *mean* estimates; the median
    (right for speedups) under-counts the long tail that every real request stream pays: with
    it, ``--replay`` came out 10-25 % above the prediction on a busy 2-core machine.
    """
    return sum(samples) / len(samples) if samples else float("nan")


MAX_SHAPES_BYTES = 64 << 20  # a million one-request rows of batch and seq is ~15 MB


def read_shapes(path: str) -> list[Shape]:
    """The requests of a ``--shapes`` file; ``InputError`` naming the file when it is bad."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a shapes file")
    try:
        with p.open("rb") as fh:  # read at most the bound (a FIFO or /dev/zero has no size)
            data = fh.read(MAX_SHAPES_BYTES + 1)
        if len(data) > MAX_SHAPES_BYTES:
            raise InputError(f"{path}: over {MAX_SHAPES_BYTES >> 20} MB, more than a stream of "
                             f"{stream.MAX_REQUESTS:,} requests needs",
                             hint="Give each shape once with a count column")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such shapes file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    try:
        return stream.parse_stream(text, path)
    except StreamError as e:
        raise InputError(str(e), hint="CSV with a header row (batch,seq,count) or JSON lines "
                                      "like {\"batch\": 8, \"count\": 3}") from None


def user_stream(cfg: BenchConfig) -> tuple[list[Shape], str] | None:
    """The stream from ``--shapes`` or ``--sizes`` (None: use the seeded plan)."""
    if cfg.shapes and cfg.sizes:
        raise UsageError("--shapes and --sizes: give one request stream, not both")
    if cfg.shapes:
        return read_shapes(cfg.shapes), cfg.shapes
    if cfg.sizes:
        try:
            return stream.parse_sizes(cfg.sizes), "sizes"
        except StreamError as e:
            raise UsageError(str(e)) from None
    return None


def resolve(requests: list[Shape], base_batch: int, base_seq: int | None,
            n: int | None) -> list[tuple[int, int | None]]:
    """Requests with the model's base sizes filled in, cycled or cut to ``n``."""
    try:
        fitted = stream.fit(requests, n)
    except StreamError as e:
        raise UsageError(str(e)) from None
    return [(b if b is not None else base_batch, s if s is not None else base_seq)
            for b, s in fitted]


def stream_plan(cfg: BenchConfig, name: str, model_batch: int, model_seq: int | None,
                given: tuple[list[Shape], str] | None,
                result: BenchResult) -> tuple[list[Variation], list[int]]:
    """The variations to measure (distinct shapes) and each request's variation.

    Default: the seeded plan, one request per variation (repeated draws stay separate
    variations, as before). With --shapes/--sizes: the distinct shapes in first-sight order.
    """
    base_batch = cfg.batch_size or model_batch
    if given is None:
        plan = plan_variations(base_batch, cfg.variations, cfg.spread, cfg.seed, cfg.vary,
                               model_seq)
        n = cfg.requests if cfg.requests is not None else len(plan)
        if n < 1:
            raise UsageError(f"--requests must be >= 1, got {n}")
        plan = plan[:n]
        ids = [i % len(plan) for i in range(n)]
        result.shapes_source = "plan"
    else:
        requests, source = given
        if any(s is not None for _, s in requests) and model_seq is None:
            raise UsageError(f"{source}: gives seq, but {name} has no sequence dim "
                             "(only hf: models do)")
        resolved = resolve(requests, base_batch, model_seq, cfg.requests)
        shapes, ids = stream.distinct(resolved)
        plan = [Variation(i, b if b is not None else base_batch, s)
                for i, (b, s) in enumerate(shapes)]
        result.shapes_source = source
    result.requests, result.stream_ids = len(ids), ids
    return plan, ids


def run_cost(run: RunResult, ids: list[int], n_shapes: int) -> StreamCost | None:
    """The stream's cost under one run; None when a shape has no steady-state timing."""
    by = {v.index: v for v in run.variations}
    if any(i not in by or not by[i].timed for i in range(n_shapes)):
        return None
    latency = [mean(by[i].compiled_samples) for i in range(n_shapes)]
    events = [CompileEvent(v.request, charged_first_call_s(v) - mean(v.compiled_samples) / 1000.0,
                           v.compiles)
              for v in run.variations if v.compiles and v.request is not None
              and v.first_call_s == v.first_call_s]
    overrides = {0: run.prime_s} if run.prime_s is not None else None
    if run.prime_s is not None and run.prime_compiles and ids:
        # torch compiled inner frames during the "eager" first request: its seconds beyond an
        # eager call are compile seconds, and those compiles count (plain torch counts them)
        eager_s = mean(by[ids[0]].eager_samples) / 1000.0
        events.append(CompileEvent(0, max(0.0, run.prime_s - eager_s), run.prime_compiles))
        overrides = {0: min(run.prime_s, eager_s)}
    out = traffic.cost(ids, latency, events, overrides)
    padded = [by[i].padded_to for i in range(n_shapes)]
    if run.strategy == "pad" and all(p is not None for p in padded):
        real = [(by[i].batch_size or 0, by[i].seq_len or 1) for i in ids]
        pads = [((padded[i] or {}).get("batch") or by[i].batch_size or 0,
                 (padded[i] or {}).get("seq") or by[i].seq_len or 1) for i in ids]
        out.pad_waste = traffic.pad_waste(real, pads)
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
        eager_cost = traffic.cost(ids, [mean(s) for s in eager])
        candidates.append(Candidate(EAGER, eager_cost.total_s, True,
                                    tuple(traffic.weighted_samples(ids, eager)),
                                    eager_cost.weighted_latency_ms, 0.0))
    if eager_cost is not None and result.eager_stream is not None:
        eager_cost.replay = result.eager_stream.replay  # measured once, kept across re-costing
    result.eager_stream = eager_cost
    for run in result.runs:
        run.stream = run_cost(run, ids, n_shapes)
        if run.stream is None:
            continue
        if eager_cost is not None:
            run.stream.break_even, run.stream.break_even_projected = traffic.break_even(
                run.stream.curve, eager_cost.curve, run.stream.weighted_latency_ms,
                eager_cost.weighted_latency_ms)
        by = {v.index: v for v in run.variations}
        samples = traffic.weighted_samples(ids, [by[i].compiled_samples for i in range(n_shapes)])
        candidates.append(Candidate(run.strategy, run.stream.total_s, run.status == PASS,
                                    tuple(samples), run.stream.weighted_latency_ms,
                                    run.stream.compile_s, run.stream.break_even))
    for run in result.runs:  # a strategy that could not be costed is named, not dropped
        if run.stream is None and run.status not in (PASS,):
            candidates.append(Candidate(run.strategy, math.nan, False))
    result.recommendation = traffic.recommend(candidates, len(ids))
    if result.recommendation is not None:
        result.recommendation = with_confidence(result, result.recommendation, n_shapes)


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
        if run.status != PASS:
            continue
        for v in run.variations:
            if v.timed and 0 <= v.index < n_shapes:
                out[v.index].append(confidence.Window(
                    {confidence.EAGER: v.eager_samples, run.strategy: v.compiled_samples}))
    return out


def with_confidence(result: BenchResult, rec: Recommendation,
                    n_shapes: int) -> Recommendation:
    """The recommendation with its bootstrap confidence, and words when it is below 0.9."""
    ids = result.stream_ids
    shapes = windows(result, n_shapes)
    contenders = [confidence.Contender(EAGER)]
    for run in result.runs:
        if run.status != PASS or run.stream is None:
            continue
        by = {v.index: v for v in run.variations}
        compiles = [charged_first_call_s(v) - mean(v.compiled_samples) / 1000.0
                    for v in run.variations if v.compiles and v.request is not None
                    and v.first_call_s == v.first_call_s]
        fixed, at = (run.prime_s, (0,)) if run.prime_s is not None else (0.0, ())
        if any(i not in by or not by[i].timed for i in range(n_shapes)):
            continue
        contenders.append(confidence.Contender(run.strategy, compiles, fixed or 0.0, at))
    if rec.strategy not in {c.name for c in contenders}:
        return rec
    settle = confidence.confidence(shapes, ids, contenders, rec.strategy,
                                   rounds=int(result.settings.get("repeat") or 0) or None)
    words = confidence.reason(settle)
    return replace(rec, confidence=settle.confidence,
                   p_best={k: round(v, 4) for k, v in settle.p_best.items()},
                   reason=f"{rec.reason}; {words}" if words else rec.reason)

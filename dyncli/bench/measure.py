"""One strategy measured as its plan applies it: :func:`measure_strategy`. Needs torch.

Per strategy (one :class:`CountingBackend`, the model compiled by
:func:`~dyncli.bench.compiling.compile_plan`), per variation in the order the stream first
compiles them, through one :class:`~dyncli.bench.harness.Harness`:

1. clone the variation's inputs (made once, up front, from one seeded generator);
2. one untimed eager call — the reference output;
3. the first compiled call, timed apart: it compiles when this shape is new to the strategy;
   the compile count, the recompile reasons and the accuracy verdict come from it;
4. ``warmup`` untimed (eager, compiled) pairs, then ``repeat`` timed (eager, compiled) pairs
   on the same tensors — or, under the same-window driver, the steps are kept and timed later,
   round-robin with every other strategy (:mod:`dyncli.bench.window`).

Around that walk come the passes the strategy's row asks for (:mod:`dyncli.bench.passes`).
Failures are statuses, not exceptions: the other variations and strategies go on.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from dyncli.bench import (
    accuracy,
    caches,
    compiling,
    graph_watch,
    padding,
    passes,
    tensors,
    torch_compat,
)
from dyncli.bench.compile_watch import (
    CountingBackend,
    Watch,
    clean_reason,
    code_modules,
    settle_compile_workers,
    sources_since,
    watch,
)
from dyncli.bench.core import parallel
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan, plan_of
from dyncli.bench.core.buckets import from_probe
from dyncli.bench.core.caches import delta as cache_delta
from dyncli.bench.core.cpu_time import CompileCost, CpuSnapshot
from dyncli.bench.core.excess import excess
from dyncli.bench.core.graphs import RunGraphs
from dyncli.bench.core.measured import eager_detail, eager_share
from dyncli.bench.core.plan import StreamPlan
from dyncli.bench.core.result import (
    BenchResult,
    BucketChoice,
    Hooks,
    PgoPass,
    RunResult,
    VariationResult,
)
from dyncli.bench.core.settings import auto_buckets
from dyncli.bench.core.shapes import Variation
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.device import break_counts, failure_status, peak_memory, torch_counts
from dyncli.bench.harness import Harness
from dyncli.bench.timing import interleaved
from dyncli.bench.window import Kept, Window


@dataclass
class Bench:
    """What the strategies of one benchmark share.

    ``window`` is the same-window driver's state: set, every strategy keeps its compiled code
    (an isolated compile, no reset) and its steps are timed after the last strategy.
    """

    model_name: str  # as the user gave it (a child process rebuilds it from this)
    h: Harness
    stream: StreamPlan
    result: BenchResult
    hooks: Hooks
    fresh: bool  # an empty inductor cache per strategy
    total: int  # variations to walk, for progress
    warn: Callable[[str], None] = lambda _text: None
    done: int = 0
    window: Window | None = None
    _layout: Any = field(default=None, repr=False)

    def plan_for(self, name: str, compile_mode: str = table.DEFAULT_MODE) -> Plan:
        """The plan that measures strategy ``name`` under ``compile_mode``: the run's settings
        on the model's inputs (and, for a plan that pads — a padding row, or capture sizes — or
        may come to pad — a mode that records CUDA graphs, whose plan can be to pad up to a few
        captured sizes — the fill values, the varied dims and the output layout)."""
        settings, dims = self.result.settings, self.result.dims
        graphs = table.mode(compile_mode).cuda_graphs and self.h.device == "cuda"
        if not (table.find(name).pads or graphs):
            return plan_of(name, settings, dims, compile_mode=compile_mode)
        h, kinds = self.h, padding.varied(self.stream.variations)
        if self._layout is None:
            self._layout = padding.layout(h, kinds)
        return plan_of(name, settings, dims, compile_mode=compile_mode,
                       fills=padding.fills(h.built, h.dims), pad_dims=kinds,
                       pad_outputs=self._layout)

    def progress(self, strategy: str) -> None:
        self.done += 1
        if self.hooks.progress:
            self.hooks.progress(strategy, self.done, self.total)


def measure_strategy(b: Bench, plan: Plan, run: RunResult | None = None) -> RunResult:
    """Measure ``plan``'s strategy: its passes and the walk over the stream's shapes.

    Fills ``run`` (give one already in the result, so Ctrl-C keeps what it measured).
    """
    h, row = b.h, plan.row
    run = run if run is not None else RunResult(h.built.name, plan.strategy, h.cfg.mode,
                                                compile_mode=plan.compile_mode)
    n = len(b.stream.variations)
    reason = passes.not_applicable(h, plan)
    if reason:
        run.status, run.error = Status.NOT_APPLICABLE, reason
        b.done += n
        return run
    seed = None
    if table.PROFILE in row.passes:
        seed = passes.profile(h, b.stream, plan, run, isolated=b.window is not None)
        if seed is None:
            b.done += n
            return run
    try:
        if row.pads and auto_buckets(h.cfg.buckets):
            chosen = choose_buckets(b, plan, run)
            if chosen is None:
                return run
            plan = chosen
        run.plan = plan
        with caches.scope(plan.strategy, b.fresh, seed):
            loaded = walk(b, plan, run, keep=b.window is not None)
            if table.PROFILE in row.passes:
                run.passes.append(PgoPass("warm", run.compiles, run.compile_time_s,
                                          state_loaded=loaded))
        if h.cfg.replay and run.status != Status.NOT_APPLICABLE:
            if b.window is not None:  # all strategies together, after the same-window pass
                b.window.pending_replay[run.label] = seed
                seed = None
            else:
                passes.replay(h, b.stream, plan, run, b.fresh, seed)
    finally:
        if seed is not None:
            shutil.rmtree(seed.parent, ignore_errors=True)
    return run


def choose_buckets(b: Bench, plan: Plan, run: RunResult) -> Plan | None:
    """``--buckets auto``: a probe pass padded to powers of two, then the optimal buckets.

    The probe measures steady-state latency at the pow2 sizes and what a compile costs;
    :func:`~dyncli.bench.core.buckets.from_probe` interpolates the sizes between and solves
    for the stream's least predicted total. The chosen buckets are then measured for real by
    the pass that follows (what is reported). None when the probe could not run.
    """
    stream = b.stream
    kinds = padding.varied(stream.variations)
    if len(kinds) > 1:
        run.status = Status.NOT_APPLICABLE
        run.error = ("--buckets auto pads one varying dim; this stream varies batch and "
                     "sequence: give --buckets LIST")
        return None
    dim = kinds[0] if kinds else "batch"
    attr = "batch_size" if dim == "batch" else "seq_len"
    sizes = [getattr(stream.variations[i], attr) or 0 for i in stream.ids]
    probe = RunResult(run.model, run.strategy, run.mode, compile_mode=run.compile_mode)
    b.total += len(stream.variations)
    with caches.scope(plan.strategy, b.fresh):
        walk(b, replace(plan, buckets=None), probe, keep=False)  # timed now: not a contender
    targets = {v.index: getattr(v.padded_to, dim) for v in probe.variations
               if v.padded_to is not None and getattr(v.padded_to, dim) is not None}
    try:
        choice = from_probe(probe, sizes, targets, b.h.cfg.max_buckets)
    except ValueError as e:
        run.status = probe.status if probe.status != Status.PASS else Status.FAIL_TO_COMPILE
        run.error = f"--buckets auto: {e}"
        run.variations = probe.variations
        return None
    run.buckets = BucketChoice.from_dict(choice)
    return replace(plan, buckets=run.buckets.chosen)


def walk(b: Bench, plan: Plan, run: RunResult, keep: bool) -> bool:
    """The measured pass: every shape in the order the stream compiles them, timed now or kept
    (``keep``: for the same-window pass). True when torch loaded a PGO profile."""
    import torch

    h, strategy = b.h, table.label(plan.strategy, plan.compile_mode)
    backend = CountingBackend()
    # beside the strategies the same-window pass will time (kept or not: --buckets auto's
    # probe is timed now), never a reset: the strategies before this one keep their compiled
    # code. A reset after the probe made every earlier strategy compile again in the window
    # (automatic: 4 compiles of the tiny MLP instead of 2; static twice its limit)
    beside = b.window is not None
    if beside:
        compiling.forget_sizes()
    compiled = compiling.compile_plan(h.model, plan, backend, isolated=beside)
    if keep and b.window is not None:
        b.window.kept[strategy] = Kept(strategy, {}, backend.count)
    if h.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    h.in_calls = 0.0
    graphs0, hits0 = torch_counts()
    breaks0 = break_counts()
    gw = graph_watch.GraphWatch() if table.mode(plan.compile_mode).cuda_graphs \
        and h.device == "cuda" else None
    cg0 = graph_watch.counters() if gw is not None else (0, 0)
    t_run = time.perf_counter()
    w = Watch()
    loaded = False
    code0 = code_modules()
    try:
        with watch() as w, gw or contextlib.nullcontext():
            if table.PRIME in plan.row.passes:
                before = backend.compiles
                run.prime_s = passes.prime(h, compiled, b.stream.ids[0])
                run.prime_compiles = backend.compiles - before
            for variation, request in passes.compile_order(b.stream, plan.row):
                vr = _variation(b, plan, variation, compiled, backend, w, keep, gw)
                vr.request = request
                run.variations.append(vr)
                b.progress(strategy)
    except KeyboardInterrupt:
        run.status = Status.INTERRUPTED
        raise
    finally:
        graphs1, hits1 = torch_counts()
        run.torch_unique_graphs, run.fx_cache_hits = graphs1 - graphs0, hits1 - hits0
        run.compiles = backend.compiles
        run.backend_compile_s = backend.backend_seconds
        run.compile_time_s = sum(v.compile_time_s for v in run.variations)
        run.recompile_limit_hit = w.limit_hit
        run.limit_messages = list(w.limit_messages)
        run.peak_memory_bytes = peak_memory(h.device)
        if gw is not None:
            cg1 = graph_watch.counters()
            run.graphs = RunGraphs(gw.recordings, gw.record_s if gw.recordings is not None
                                   else None, graph_watch.pool_bytes(), cg1[0] - cg0[0],
                                   cg1[1] - cg0[1])
        run.wall_s = time.perf_counter() - t_run
        run.in_calls_s = h.in_calls
        run.finish()
        if run.variations:
            run.eager_share = eager_share({v.index: v.status for v in run.variations},
                                          b.stream.ids)
        _explain_excess(b, plan, run, breaks0)
        if h.device == "cpu":
            text = parallel.note(run.label, sources_since(code0), torch.get_num_threads())
            if text:
                b.warn(text)
        if table.PROFILE in plan.row.passes:
            loaded = torch_compat.pgo_state_loaded()
        compiling.between(beside)
    return loaded


def _explain_excess(b: Bench, plan: Plan, run: RunResult, breaks0: dict[str, int]) -> None:
    """Say why, when the strategy compiled more than its row implies (torch's own reasons)."""
    if not run.variations:
        return
    grew = {m: n - breaks0.get(m, 0) for m, n in break_counts().items()
            if n > breaks0.get(m, 0)}
    reasons = [r for v in run.variations for r in v.recompile_reasons]
    shapes = [(v.batch_size, v.seq_len) for v in run.variations]
    text = excess(plan.row, run.compiles, run.variations[0].compiles, grew, reasons, run.label,
                  shapes)
    if text:
        b.warn(text)


def _variation(b: Bench, plan: Plan, variation: Variation, compiled: Any,
               backend: CountingBackend, w: Watch, keep: bool,
               gw: graph_watch.GraphWatch | None = None) -> VariationResult:
    """One shape under one strategy: reference, first compiled call, timed pairs (or kept).

    Under a CUDA-graph mode on CUDA (``gw``) the first compiled call and the untimed calls
    after it, until one replays a graph, are observed (:func:`~dyncli.bench.graph_watch.settle`)."""
    h, cfg, strategy = b.h, b.h.cfg, table.label(plan.strategy, plan.compile_mode)
    inputs = h.args(variation.index)
    vr = VariationResult(variation.index, tensors.batch_of(*inputs, h.dims),
                         variation.seq_len, tensors.shapes_of(*inputs),
                         eager_first_call_s=h.eager_first.pop(variation.index, None))
    if plan.pad_buckets() is not None:  # a padding row, or capture sizes
        vr.padded_to = padding.target(plan, inputs)
    eager_fn = h.tapped(h.model, strategy, variation.index, "eager")
    comp_fn = h.tapped(compiled, strategy, variation.index, "compiled")

    def step(fn: Any, keep_grads: bool) -> Callable[[], Any]:
        return h.step(fn, inputs, keep_grads=keep_grads)

    h.phase = "first"
    try:
        ref, _ = h.call(step(eager_fn, True))
    except Exception as e:
        vr.status, vr.detail = failure_status(e, Status.EAGER_FAIL_TO_RUN), short_error(e)
        return vr
    before, graphs, limits, hits = (backend.compiles, backend.graph_calls,
                                    len(w.limit_messages), caches.hits())
    w.mark()
    snap = CpuSnapshot.now()
    pool0 = graph_watch.pool_bytes() if gw is not None else 0
    seen = gw.state() if gw is not None else (0, 0.0, 0)
    try:
        with gw.counting() if gw is not None else contextlib.nullcontext():
            res, vr.first_call_s = h.first_call(step(comp_fn, True))  # synchronized: all of it
    except Exception as e:
        vr.status, vr.detail = failure_status(e, Status.FAIL_TO_COMPILE), short_error(e)
        vr.compiles = backend.compiles - before
        return vr
    vr.compiles = backend.compiles - before
    vr.recompiled = vr.compiles > 0
    vr.cache_hits = cache_delta(hits, caches.hits())
    ran_eager = eager_detail(backend.graph_calls - graphs, w.limit_messages, limits)
    if vr.recompiled:
        settled = settle_compile_workers()
        vr.first_call_s += settled
        h.in_calls += settled
        vr.first_call_cpu_s = CompileCost.between(snap, CpuSnapshot.now()).cpu_s
    vr.compile_time_s = vr.first_call_s if vr.recompiled else 0.0
    vr.recompile_reasons = [clean_reason(r) for r in w.reasons_since()]
    verdict = accuracy.compare(ref, res)
    del ref, res
    if not verdict.ok:
        vr.status = Status.FAIL_ACCURACY
    elif ran_eager:  # what ran was eager: never timed, costed or recommended as compiled
        vr.status = Status.RAN_EAGER
    vr.detail = "; ".join(x for x in (ran_eager, verdict.detail) if x)
    if vr.padded_to and vr.padded_to.unpadded:
        vr.detail = "; ".join(x for x in ("above the largest bucket: ran unpadded",
                                          vr.detail) if x)
    eager_step, comp_step = step(eager_fn, False), step(comp_fn, False)
    if gw is not None:
        try:
            vr.graphs = graph_watch.settle(h, gw, comp_step, seen, vr.first_call_s, pool0)
        except Exception as e:
            vr.status, vr.detail = failure_status(e, Status.FAIL_TO_COMPILE), short_error(e)
            return vr
    if keep and b.window is not None:  # timed later, every strategy at once
        b.window.keep(strategy, variation.index, eager_step, comp_step)
    else:
        try:
            h.phase = "warmup"
            for _ in range(cfg.warmup):
                h.call(eager_step)
                h.call(comp_step)
            h.phase = "timed"
            t0 = time.perf_counter()
            try:
                samples = interleaved(h.clock, eager_step, comp_step, cfg.repeat)
            finally:
                h.in_calls += time.perf_counter() - t0
        except Exception as e:
            vr.status, vr.detail = failure_status(e, Status.FAIL_TO_COMPILE), short_error(e)
            return vr
        vr.set_samples(samples.eager_ms, samples.compiled_ms)
    late = backend.compiles - before - vr.compiles
    if late > 0:  # e.g. a stance that compiles on a later call: keep the totals true
        vr.compiles += late
        vr.recompiled = True
    return vr


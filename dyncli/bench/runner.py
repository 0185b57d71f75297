"""``dyncli bench``: eager vs inductor on actually varied shapes, one strategy after another.

Per strategy (each from ``torch._dynamo.reset()``, one :class:`CountingBackend`), per
variation in plan order, through one :class:`~dyncli.bench.harness.Harness`:

1. clone the variation's inputs (made once, up front, from one seeded generator);
2. one untimed eager call — the reference output;
3. the first compiled call, timed apart: it compiles when this shape is new to the strategy;
   the compile count, the recompile reasons and the accuracy verdict come from it;
4. ``warmup`` untimed (eager, compiled) pairs, then ``repeat`` timed (eager, compiled) pairs
   on the same tensors — the compiled side always runs the varied batch, never the base one.

Failures are statuses, not exceptions: the other variations and strategies go on.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench import accuracy, decide, interleave, models, padding, passes, strategies, tensors
from dyncli.bench.compile_watch import (
    CountingBackend,
    Watch,
    clean_reason,
    settle_compile_workers,
    watch,
)
from dyncli.bench.core import recommend, stats
from dyncli.bench.core.buckets import from_probe
from dyncli.bench.core.cost import parse_buckets
from dyncli.bench.core.cpu_time import CompileCost, CpuSnapshot
from dyncli.bench.core.plan import StreamPlan, stream_plan, user_stream
from dyncli.bench.core.result import BenchResult, Hooks, PgoPass, RunResult, VariationResult
from dyncli.bench.core.settings import auto_buckets
from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.device import (
    environment,
    failure_status,
    memory_bytes,
    peak_memory,
    resolve_device,
    torch_counts,
)
from dyncli.bench.harness import Harness, load
from dyncli.bench.timing import interleaved
from dyncli.config import BenchConfig
from dyncli.errors import ModelError, UsageError


@dataclass
class _Strategies:
    """The strategies of one benchmark, run one after another over one harness."""

    h: Harness
    plan: StreamPlan
    hooks: Hooks
    fresh: bool
    buckets: list[int] | None
    total: int
    done: int = 0
    pgo_loaded: bool = field(default=False)
    # same-window mode (a request stream is costed): every strategy keeps its compiled code
    # for one round-robin timing pass after the last strategy (dyncli.bench.decide)
    same: decide.SameWindow = field(default_factory=decide.SameWindow)
    probing: bool = False  # --buckets auto's probe pass of pad runs now

    def run(self, run: RunResult) -> None:
        """Fill ``run`` (already in the result, so Ctrl-C keeps what it measured)."""
        reason = passes.not_applicable(self.h, run.strategy)
        if reason:
            run.status, run.error = Status.NOT_APPLICABLE, reason
            self.done += len(self.plan.variations)
            return
        job = seed = None
        if run.strategy == "pgo":
            job = f"dyncli-bench-{uuid.uuid4().hex[:12]}"
            seed = passes.pgo_cold_pass(self.h, self.plan, self.buckets, run, job,
                                        keep_others=self.same.on)
            if seed is None:
                self.done += len(self.plan.variations)
                return
        if run.strategy == "pad" and auto_buckets(self.h.cfg.buckets) \
                and not self.choose_buckets(run):
            return
        try:
            with passes.cache(self.fresh or run.strategy == "pgo", seed):
                self.measure(run, job)
                if run.strategy == "pgo":
                    run.passes.append(PgoPass("warm", run.compiles, run.compile_time_s,
                                              state_loaded=self.pgo_loaded))
            if self.h.cfg.replay and run.status != Status.NOT_APPLICABLE:
                if self.same.on:  # all strategies together, after the same-window pass
                    self.same.pending_replay[run.strategy] = (job, seed)
                    seed = None
                else:
                    passes.replay(self.h, self.plan, self.buckets, run, self.fresh, job, seed)
        finally:
            if seed is not None:
                shutil.rmtree(seed.parent, ignore_errors=True)

    def choose_buckets(self, run: RunResult) -> bool:
        """``--buckets auto``: a probe pass padded to powers of two, then the optimal buckets.

        The probe measures steady-state latency at the pow2 sizes and what a compile costs;
        :func:`~dyncli.bench.core.buckets.from_probe` interpolates the sizes between and solves
        for the stream's least predicted total. The chosen buckets are then measured for real
        by the pad pass that follows (what is reported). False when the probe could not run.
        """
        plan = self.plan
        dim = "batch" if len({v.batch_size for v in plan.variations}) > 1 else "seq"
        if dim == "seq" and len({v.seq_len for v in plan.variations}) <= 1:
            dim = "batch"
        if dim == "batch" and len({v.seq_len for v in plan.variations}) > 1:
            run.status = Status.NOT_APPLICABLE
            run.error = ("--buckets auto pads one varying dim; this stream varies batch and "
                         "sequence: give --buckets LIST")
            return False
        sizes = [getattr(plan.variations[i], "batch_size" if dim == "batch" else "seq_len")
                 or 0 for i in plan.ids]
        probe = RunResult(run.model, run.strategy, run.mode)
        self.buckets = None  # pow2
        self.total += len(plan.variations)
        self.probing = True  # timed at once, not in the same-window pass: it is not a contender
        try:
            with passes.cache(self.fresh, None):
                self.measure(probe, None)
        finally:
            self.probing = False
            self.same.kept.pop(run.strategy, None)
        by = {v.index: v for v in probe.variations}
        targets = {i: getattr(v.padded_to, dim) for i, v in by.items()
                   if v.padded_to is not None and getattr(v.padded_to, dim) is not None}
        try:
            run.buckets = from_probe(probe, sizes, targets, self.h.cfg.max_buckets)
        except ValueError as e:
            run.status = probe.status if probe.status != Status.PASS else Status.FAIL_TO_COMPILE
            run.error = f"--buckets auto: {e}"
            run.variations = probe.variations
            return False
        self.buckets = list(run.buckets["chosen"])
        return True

    def measure(self, run: RunResult, job: str | None) -> None:
        """The measured pass of one strategy: every shape in stream order, timed."""
        import torch

        h, strategy = self.h, run.strategy
        backend = CountingBackend()
        if self.same.on:  # no reset: the strategies before this one keep their compiled code
            interleave.forget_sizes()
            compiled = interleave.isolated_compile(h.model, strategies.DYNAMIC_ARG[strategy],
                                                   backend)
            self.same.kept[strategy] = interleave.Kept(strategy, {}, decide._counter(backend))
        else:
            compiled = strategies.compile_model(h.model, strategy, backend)
        if h.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        h.in_calls = 0.0
        graphs0, hits0 = torch_counts()
        t_run = time.perf_counter()
        w = Watch()
        try:
            with strategies.strategy_config(strategy, h.cfg.dynamic_sources, job), watch() as w:
                if strategy == "eager-then-compile":
                    before = backend.compiles
                    run.prime_s = passes.prime(h, compiled, self.plan.ids[0])
                    run.prime_compiles = backend.compiles - before
                for variation, request in passes.walk(self.plan, strategy):
                    vr = self.variation(strategy, variation, compiled, backend, w)
                    vr.request = request
                    run.variations.append(vr)
                    self.done += 1
                    if self.hooks.progress:
                        self.hooks.progress(strategy, self.done, self.total)
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
            run.wall_s = time.perf_counter() - t_run
            run.in_calls_s = h.in_calls
            run.finish()
            if strategy == "pgo":
                from torch._dynamo import pgo

                self.pgo_loaded = getattr(pgo, "_INIT_CODE_STATE", None) is not None
            if self.same.on:
                interleave.forget_sizes()
            else:
                torch._dynamo.reset()

    def variation(self, strategy: str, variation: Variation, compiled: Any,
                  backend: CountingBackend, w: Watch) -> VariationResult:
        """One shape under one strategy: reference, first compiled call, timed pairs."""
        h, cfg = self.h, self.h.cfg
        inputs = h.args(variation.index, strategy)
        vr = VariationResult(variation.index, tensors.batch_of(*inputs, h.dims),
                             variation.seq_len, tensors.shapes_of(*inputs))
        eager_fn = h.tapped(h.model, strategy, variation.index, "eager")
        wrapped, vr.padded_to = passes.wrap(h, self.plan, self.buckets, strategy, compiled,
                                            variation)
        comp_fn = h.tapped(wrapped, strategy, variation.index, "compiled")

        def step(fn: Any, keep: bool) -> Callable[[], Any]:
            return h.step(fn, inputs, keep_grads=keep)

        h.phase = "first"
        try:
            ref, _ = h.call(step(eager_fn, True))
        except Exception as e:
            vr.status = failure_status(e, Status.EAGER_FAIL_TO_RUN)
            vr.detail = short_error(e)
            return vr
        if isinstance(wrapped, padding.PaddedModel):
            wrapped.expect(ref)
        before = backend.compiles
        w.mark()
        snap = CpuSnapshot.now()
        try:
            res, vr.first_call_s = h.call(step(comp_fn, True))
        except Exception as e:
            vr.status, vr.detail = failure_status(e, Status.FAIL_TO_COMPILE), short_error(e)
            vr.compiles = backend.compiles - before
            return vr
        vr.compiles = backend.compiles - before
        vr.recompiled = vr.compiles > 0
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
        vr.detail = verdict.detail
        if vr.padded_to and vr.padded_to.unpadded:
            vr.detail = "; ".join(x for x in ("above the largest bucket: ran unpadded",
                                              vr.detail) if x)
        eager_step, comp_step = step(eager_fn, False), step(comp_fn, False)
        if self.same.on and strategy in self.same.kept and not self.probing:
            # timed later, every strategy at once
            self.same.kept[strategy].steps[variation.index] = comp_step
            self.same.eager_steps.setdefault(variation.index, eager_step)
            late = backend.compiles - before - vr.compiles
            if late > 0:
                vr.compiles += late
                vr.recompiled = True
            return vr
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
        late = backend.compiles - before - vr.compiles
        if late > 0:  # e.g. a stance that compiles on a later call: keep the totals true
            vr.compiles += late
            vr.recompiled = True
        vr.eager_samples, vr.compiled_samples = samples.eager_ms, samples.compiled_ms
        vr.eager_ms = stats.median(samples.eager_ms)
        vr.compiled_ms = stats.median(samples.compiled_ms)
        vr.speedup = stats.speedup(samples.eager_ms, samples.compiled_ms)
        vr.p_value = stats.p_value(samples.eager_ms, samples.compiled_ms)
        return vr


def run_bench(model_name: str, cfg: BenchConfig, hooks: Hooks | None = None) -> BenchResult:
    """Benchmark ``model_name`` under every strategy of ``cfg``; never raises for a model failure.

    Raises :class:`ModelError` for names that do not exist and :class:`UsageError` for
    impossible settings (before any work); a model that exists but fails to build, run or
    compile becomes a status in the result. On Ctrl-C the result so far is returned with
    ``interrupted=True``.
    """
    hooks = hooks or Hooks()
    warnings: list[str] = []

    def warn(text: str) -> None:
        warnings.append(text)
        if hooks.warning:
            hooks.warning(text)

    models.check_name(model_name)
    given = user_stream(cfg)  # a bad --shapes file fails before any work
    device = resolve_device(cfg.device, warn)
    settings = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    result = BenchResult(model_name, environment(device, cfg.dtype), settings, warnings=warnings)
    if cfg.nproc > 1:
        from dyncli.bench.distributed import run_distributed

        return run_distributed(model_name, cfg, device, result, hooks)
    if hooks.started:  # checked: what follows (torch, the model, a compile) takes a while
        hooks.started()
    try:
        built, dims = load(model_name, cfg, device)
    except ModelError:
        raise
    except Exception as e:
        for s in cfg.strategy:
            result.runs.append(RunResult(model_name, s, cfg.mode,
                                         status=Status.MODEL_FAIL_TO_LOAD, error=short_error(e)))
        if hooks.run_done:
            hooks.run_done(result)
        return result
    if "seq" in cfg.vary and built.seq_len is None:
        raise UsageError(f"vary seq: {model_name} has no sequence dim (only hf: models do)")
    for text in dims.warnings:
        warn(text)
    result.dims = {"batch": {k: list(v) for k, v in dims.batch.items()},
                   "seq": {k: list(v) for k, v in dims.seq.items()}}
    plan = stream_plan(cfg, built.name, built.batch_size, built.seq_len, given)
    result.requests, result.stream_ids, result.shapes_source = len(plan.ids), plan.ids, plan.source
    _check_input_memory(built, dims, plan.variations, cfg.dtype, device)
    fresh = cfg.fresh_cache if cfg.fresh_cache is not None else (given is not None or cfg.replay)
    h = Harness.create(cfg, built, device, dims, plan.variations, cfg.seed, hooks.tap)
    import scipy.stats  # noqa: F401  (its ~0.5 s first import is setup, not a strategy's)

    runner = _Strategies(h, plan, hooks, fresh,
                         parse_buckets(cfg.buckets)
                         if "pad" in cfg.strategy and not auto_buckets(cfg.buckets) else None,
                         len(plan.variations) * len(cfg.strategy))
    # a request stream to cost (not the quickstart's plan, even with a fresh cache)
    runner.same.on = (given is not None or cfg.replay) and bool(plan.variations)
    if fresh:
        result.compiler_warmup_s = passes.warm_compiler(h, plan.ids[0])
    same = runner.same
    decide.probe(h, plan, same, "start")
    for strategy in cfg.strategy:
        run = RunResult(built.name, strategy, cfg.mode)
        result.runs.append(run)
        try:
            runner.run(run)
            decide.probe(h, plan, same, strategy)
            if (cfg.start == "warm" or cfg.requests_per_start) and run.status == Status.PASS:
                from dyncli.bench import restart

                if hooks.warning and strategy == cfg.strategy[0]:
                    hooks.warning("--start warm: each strategy also runs in two fresh "
                                  "processes (cold, then warm from its caches)")
                run.start = restart.measure(model_name, cfg, run)
        except KeyboardInterrupt:
            result.interrupted = True
            break
        finally:
            if not same.on:
                recommend.apply(result)
            if hooks.run_done:
                hooks.run_done(result)
    try:
        if same.on and not result.interrupted:
            decide.window_pass(h, plan, same, result, warn)
            if same.pending_replay:
                decide.replay_all(h, plan, runner.buckets, same, result)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        for _, seed in same.pending_replay.values():
            if seed is not None:
                shutil.rmtree(seed.parent, ignore_errors=True)
        if same.on:
            import torch

            torch._dynamo.reset()
        decide.probe(h, plan, same, "end")
        decide.load_summary(plan, same, result, warn)
        recommend.apply(result)
        if hooks.run_done:
            hooks.run_done(result)
    return result


def _check_input_memory(built: models.Built, dims: DimPlan, plan: list[Variation], dtype: str,
                        device: str) -> None:
    """Refuse shapes whose inputs alone would take over half the device's memory.

    Every shape's inputs are made up front, before any strategy runs, so a stream with a
    batch of 10^8 would otherwise fill the machine until the kernel kills the process (no
    status, no result). Sizes come from the user's traffic file: they are bounded here,
    before use, with the shape named.
    """
    memory = memory_bytes(device)
    if not memory:
        return
    sizes = [tensors.input_bytes(built, dims, v, dtype) for v in plan]
    if sum(sizes) <= memory // 2:
        return
    big = max(range(len(plan)), key=sizes.__getitem__)
    v = plan[big]
    shape = f"batch {v.batch_size}" + (f", seq {v.seq_len}" if v.seq_len is not None else "")
    raise UsageError(
        f"the inputs of {len(plan)} shape(s) would take {sum(sizes) / 2**30:.1f} GiB "
        f"({shape}: {sizes[big] / 2**30:.1f} GiB), more than half of the "
        f"{memory / 2**30:.0f} GiB of {'GPU' if device == 'cuda' else 'memory on this machine'}",
        hint="Use smaller sizes in --shapes/--sizes (or --batch-size, --spread)")


__all__ = ["BenchResult", "Hooks", "resolve_device", "run_bench"]

"""``dyncli bench``: eager vs inductor on actually varied shapes, one strategy after another.

Per strategy (each from ``torch._dynamo.reset()``, one :class:`CountingBackend`), per
variation in plan order:

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
from typing import Any

from dyncli.bench import (
    accuracy,
    costing,
    decide,
    interleave,
    machine,
    models,
    padding,
    stats,
    strategies,
    tensors,
    traffic,
)
from dyncli.bench.compile_watch import (
    CountingBackend,
    Watch,
    clean_reason,
    settle_compile_workers,
    watch,
)
from dyncli.bench.cpu_time import CompileCost, CpuSnapshot
from dyncli.bench.device import (
    environment,
    failure_status,
    memory_bytes,
    peak_memory,
    resolve_device,
    torch_counts,
)
from dyncli.bench.passes import StreamPasses
from dyncli.bench.passes import short_error as _short
from dyncli.bench.result import (
    NOT_APPLICABLE,
    PASS,
    BenchResult,
    Call,
    Hooks,
    RunResult,
    VariationResult,
)
from dyncli.bench.shapes import DimPlan, Variation, detect_dims
from dyncli.bench.stream import MAX_SIZE, StreamError
from dyncli.bench.timing import Clock, CpuClock, CudaClock, interleaved
from dyncli.config import BenchConfig
from dyncli.errors import ModelError, UsageError


class _Runner(StreamPasses):
    """State shared by the strategies of one benchmark."""

    def __init__(self, cfg: BenchConfig, built: models.Built, device: str, dims: DimPlan,
                 plan: list[Variation], hooks: Hooks, ids: list[int] | None = None,
                 fresh_cache: bool = False) -> None:
        import torch

        self.cfg, self.built, self.device, self.dims, self.plan = cfg, built, device, dims, plan
        self.hooks = hooks
        self.ids = ids if ids is not None else [v.index for v in plan]  # request -> shape
        self.fresh_cache = fresh_cache
        self.pgo_loaded = False
        self.buckets = traffic.parse_buckets(cfg.buckets) if "pad" in cfg.strategy else None
        self.model = strategies.prepare_model(built.model, cfg.mode, cfg.dtype, device)
        self.autocast = strategies.autocast_context(device, cfg.dtype)
        self.clock: Clock = CudaClock(torch, device) if device == "cuda" else CpuClock()
        gen = torch.Generator().manual_seed(cfg.seed)
        self.inputs = [tensors.make_inputs(built, dims, v, gen, cfg.dtype, device) for v in plan]
        self.phase = "first"
        self.in_calls = 0.0
        # same-window mode (a request stream is costed): every strategy keeps its compiled code
        # for one round-robin timing pass after the last strategy (dyncli.bench.decide)
        self.window = fresh_cache and len(plan) > 0
        self.kept: dict[str, interleave.Kept] = {}
        self.eager_steps: dict[int, Callable[[], Any]] = {}
        self.pending_replay: dict[str, tuple[str | None, Any]] = {}
        self.load = machine.LoadLog()
        self.probes: list[float] = []
        self.probe_loops: int | None = None
        import scipy.stats  # noqa: F401  (its ~0.5 s first import is setup, not a strategy's)

    def _fn(self, fn: Any, strategy: str, index: int, side: str) -> Any:
        tap = self.hooks.tap
        if tap is None:
            return fn

        def tapped(*args: Any, **kwargs: Any) -> Any:
            tap(Call(strategy, index, self.phase, side, args, kwargs))
            return fn(*args, **kwargs)
        return tapped

    def _call(self, step: Callable[[], Any]) -> tuple[Any, float]:
        t0 = time.perf_counter()
        try:
            return step(), time.perf_counter() - t0
        finally:
            self.in_calls += time.perf_counter() - t0

    def run_strategy(self, run: RunResult, done: list[int], total: int) -> None:
        """Fill ``run`` (already in the result, so Ctrl-C keeps what it measured)."""
        reason = self.not_applicable(run.strategy)
        if reason:
            run.status, run.error = NOT_APPLICABLE, reason
            done[0] += len(self.plan)
            return
        job = seed = None
        if run.strategy == "pgo":
            job = f"dyncli-bench-{uuid.uuid4().hex[:12]}"
            seed = self.pgo_cold_pass(run, job)
            if seed is None:
                done[0] += len(self.plan)
                return
        try:
            with self.cache(run.strategy, seed):
                self.measure(run, done, total, job)
                if run.strategy == "pgo":
                    run.passes.append({
                        "pass": "warm", "compiles": run.compiles,
                        "compile_time_s": run.compile_time_s,
                        "state_loaded": self.pgo_loaded})
            if self.cfg.replay and run.status != NOT_APPLICABLE:
                if self.window:  # all strategies together, after the same-window pass
                    self.pending_replay[run.strategy] = (job, seed)
                    seed = None
                else:
                    self.replay(run, job, seed)
        finally:
            if seed is not None:
                shutil.rmtree(seed.parent, ignore_errors=True)

    def measure(self, run: RunResult, done: list[int], total: int, job: str | None) -> None:
        """The measured pass of one strategy: every shape in stream order, timed."""
        import torch

        strategy = run.strategy
        backend = CountingBackend()
        if self.window:  # no reset: the strategies before this one keep their compiled code
            interleave.forget_sizes()
            compiled = interleave.isolated_compile(self.model, strategies.DYNAMIC_ARG[strategy],
                                                   backend)
            self.kept[strategy] = interleave.Kept(strategy, {}, lambda: backend.compiles)
        else:
            compiled = strategies.compile_model(self.model, strategy, backend)
        if self.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        self.in_calls = 0.0
        graphs0, hits0 = torch_counts()
        t_run = time.perf_counter()
        w = Watch()
        try:
            with strategies.strategy_config(strategy, self.cfg.dynamic_sources, job), \
                    watch() as w:
                if strategy == "eager-then-compile":
                    before = backend.compiles
                    run.prime_s = self.prime(compiled)
                    run.prime_compiles = backend.compiles - before
                for variation, request in self.walk(strategy):
                    vr = self._variation(strategy, variation, compiled, backend, w)
                    vr.request = request
                    run.variations.append(vr)
                    done[0] += 1
                    if self.hooks.progress:
                        self.hooks.progress(strategy, done[0], total)
        except KeyboardInterrupt:
            run.status = "interrupted"
            raise
        finally:
            graphs1, hits1 = torch_counts()
            run.torch_unique_graphs, run.fx_cache_hits = graphs1 - graphs0, hits1 - hits0
            run.compiles = backend.compiles
            run.backend_compile_s = backend.backend_seconds
            run.compile_time_s = sum(v.compile_time_s for v in run.variations)
            run.recompile_limit_hit = w.limit_hit
            run.limit_messages = list(w.limit_messages)
            run.peak_memory_bytes = peak_memory(self.device)
            run.wall_s = time.perf_counter() - t_run
            run.in_calls_s = self.in_calls
            run.finish()
            if strategy == "pgo":
                from torch._dynamo import pgo

                self.pgo_loaded = getattr(pgo, "_INIT_CODE_STATE", None) is not None
            if self.window:
                interleave.forget_sizes()
            else:
                torch._dynamo.reset()

    def _variation(self, strategy: str, variation: Variation, compiled: Any,
                   backend: CountingBackend, w: Watch) -> VariationResult:
        cfg, b = self.cfg, self.built
        args, kwargs = tensors.clone_inputs(*self.inputs[variation.index])
        strategies.mark_inputs(strategy, args, kwargs, self.dims)
        vr = VariationResult(variation.index, tensors.batch_of(args, kwargs, self.dims),
                             variation.seq_len, tensors.shapes_of(args, kwargs))
        eager_fn = self._fn(self.model, strategy, variation.index, "eager")
        wrapped, vr.padded_to = self.wrap(strategy, compiled, variation)
        comp_fn = self._fn(wrapped, strategy, variation.index, "compiled")

        def step(fn: Any, keep: bool) -> Callable[[], Any]:
            return strategies.make_step(fn, self.model, cfg.mode, args, kwargs, b.loss,
                                        b.num_classes, self.autocast, keep_grads=keep)

        self.phase = "first"
        try:
            ref, _ = self._call(step(eager_fn, True))
        except Exception as e:
            vr.accuracy, vr.detail = failure_status(e, "eager_fail_to_run"), _short(e)
            return vr
        if isinstance(wrapped, padding.PaddedModel):
            wrapped.expect(ref)
        before = backend.compiles
        w.mark()
        snap = CpuSnapshot.now()
        try:
            res, vr.first_call_s = self._call(step(comp_fn, True))
        except Exception as e:
            vr.accuracy, vr.detail = failure_status(e, "fail_to_compile"), _short(e)
            vr.compiles = backend.compiles - before
            return vr
        vr.compiles = backend.compiles - before
        vr.recompiled = vr.compiles > 0
        if vr.recompiled:
            settled = settle_compile_workers()
            vr.first_call_s += settled
            self.in_calls += settled
            vr.first_call_cpu_s = CompileCost.between(snap, CpuSnapshot.now()).cpu_s
        vr.compile_time_s = vr.first_call_s if vr.recompiled else 0.0
        vr.recompile_reasons = [clean_reason(r) for r in w.reasons_since()]
        verdict = accuracy.compare(ref, res)
        del ref, res
        if not verdict.ok:
            vr.accuracy = "fail_accuracy"
        vr.detail = verdict.detail
        if vr.padded_to and vr.padded_to.get("unpadded"):
            vr.detail = "; ".join(x for x in ("above the largest bucket: ran unpadded",
                                              vr.detail) if x)
        eager_step, comp_step = step(eager_fn, False), step(comp_fn, False)
        if self.window and strategy in self.kept:  # timed later, with every strategy at once
            self.kept[strategy].steps[variation.index] = comp_step
            self.eager_steps.setdefault(variation.index, eager_step)
            late = backend.compiles - before - vr.compiles
            if late > 0:
                vr.compiles += late
                vr.recompiled = True
            return vr
        try:
            self.phase = "warmup"
            for _ in range(cfg.warmup):
                self._call(eager_step)
                self._call(comp_step)
            self.phase = "timed"
            t0 = time.perf_counter()
            try:
                samples = interleaved(self.clock, eager_step, comp_step, cfg.repeat)
            finally:
                self.in_calls += time.perf_counter() - t0
        except Exception as e:
            vr.accuracy, vr.detail = failure_status(e, "fail_to_compile"), _short(e)
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

    _validate(cfg)
    models.check_name(model_name)
    given = costing.user_stream(cfg)  # a bad --shapes file fails before any work
    device = resolve_device(cfg.device, warn)
    settings = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    result = BenchResult(model_name, environment(device, cfg.dtype), settings, warnings=warnings)
    if cfg.nproc > 1:
        from dyncli.bench.distributed import run_distributed

        return run_distributed(model_name, cfg, device, result, hooks)
    try:
        built = models.build(model_name, device=device, batch_size=cfg.batch_size,
                          seq_len=cfg.seq_len, hf_config=cfg.hf_config,
                          training=cfg.mode == "training")
    except ModelError:
        raise
    except Exception as e:
        for s in cfg.strategy:
            result.runs.append(RunResult(model_name, s, cfg.mode, status="model_fail_to_load",
                                         error=_short(e)))
        if hooks.run_done:
            hooks.run_done(result)
        return result
    if "seq" in cfg.vary and built.seq_len is None:
        raise UsageError(f"--vary seq: {model_name} has no sequence dim (only hf: models do)")
    dims = detect_dims(tensors.named_shapes(built), built.batch_size, cfg.batch_dim, built.seq_len)
    for text in dims.warnings:
        warn(text)
    result.dims = {"batch": {k: list(v) for k, v in dims.batch.items()},
                   "seq": {k: list(v) for k, v in dims.seq.items()}}
    plan, ids = costing.stream_plan(cfg, built.name, built.batch_size, built.seq_len, given,
                                    result)
    _check_input_memory(built, dims, plan, cfg.dtype, device)
    fresh = cfg.fresh_cache if cfg.fresh_cache is not None else (given is not None or cfg.replay)
    runner = _Runner(cfg, built, device, dims, plan, hooks, ids, fresh)
    if fresh:
        result.compiler_warmup_s = runner.warm_compiler()
    decide.probe(runner, "start")
    done, total = [0], len(plan) * len(cfg.strategy)
    for strategy in cfg.strategy:
        run = RunResult(built.name, strategy, cfg.mode)
        result.runs.append(run)
        try:
            runner.run_strategy(run, done, total)
            decide.probe(runner, strategy)
        except KeyboardInterrupt:
            result.interrupted = True
            break
        finally:
            if not runner.window:
                costing.apply(result)
            if hooks.run_done:
                hooks.run_done(result)
    try:
        if runner.window and not result.interrupted:
            decide.window_pass(runner, result, warn)
            if runner.pending_replay:
                decide.replay_all(runner, result, runner.pending_replay, _short)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        for _, seed in runner.pending_replay.values():
            if seed is not None:
                shutil.rmtree(seed.parent, ignore_errors=True)
        if runner.window:
            import torch

            torch._dynamo.reset()
        decide.probe(runner, "end")
        _load_summary(runner, result, warn)
        costing.apply(result)
        if hooks.run_done:
            hooks.run_done(result)
    return result


def _load_summary(runner: _Runner, result: BenchResult, warn: Callable[[str], None]) -> None:
    """``load`` in the result, and a warning per sign that the machine was busy or changed."""
    summary = runner.load.summary()
    summary["eager_probe_ms"] = list(runner.probes)
    drift = machine.drift(runner.probes)
    summary["eager_drift"] = drift
    result.load = summary
    shape = runner.plan[decide.reference_shape(runner.ids)] if runner.plan else None
    what = (f"batch {shape.batch_size}" + (f" seq {shape.seq_len}" if shape.seq_len is not None
                                           else "")) if shape else ""
    texts = machine.load_warnings(summary, drift, what)
    if texts:
        warn(machine.UNSTABLE + ": " + "; ".join(texts))


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


def _validate(cfg: BenchConfig) -> None:
    from dyncli.bench.shapes import VARY_CHOICES
    from dyncli.config import RANK_SHAPES, STRATEGIES

    bad = [s for s in cfg.strategy if s not in STRATEGIES]
    if bad:
        raise UsageError(f"--strategy: unknown {', '.join(bad)}",
                         hint=f"Choose from: {', '.join(STRATEGIES)}")
    if not cfg.strategy:
        raise UsageError("--strategy: give at least one strategy")
    if "sources" in cfg.strategy and not cfg.dynamic_sources:
        raise UsageError("--strategy sources: no dynamic sources given",
                         hint="Pass --dynamic-sources \"L['x']:0\" or set bench.dynamic_sources "
                              "(dyncli suggest --format toml writes it)")
    if cfg.rank_shapes not in RANK_SHAPES:
        raise UsageError(f"--rank-shapes: unknown {cfg.rank_shapes}",
                         hint=f"Choose from: {', '.join(RANK_SHAPES)}")
    one_process = [s for s in cfg.strategy if s in ("pad", "pgo", "eager-then-compile")]
    streams = [f for f, v in (("--shapes", cfg.shapes), ("--sizes", cfg.sizes),
                              ("--requests", cfg.requests), ("--replay", cfg.replay)) if v]
    if cfg.nproc > 1 and (one_process or streams):
        raise UsageError(f"--nproc {cfg.nproc}: {', '.join(streams + one_process)} "
                         "run in one process only",
                         hint="Drop --nproc to cost a request stream or use pad, pgo or "
                              "eager-then-compile")
    if "collectives" in cfg.strategy and cfg.nproc < 2:
        raise UsageError("--strategy collectives: compiler collectives need ranks",
                         hint="Add --nproc 2 (or more)")
    bad = [v for v in cfg.vary if v not in VARY_CHOICES]
    if bad or not cfg.vary:
        raise UsageError(f"--vary: unknown {', '.join(bad) or '(empty)'}",
                         hint="Choose batch, seq or batch,seq")
    checks = [(cfg.variations >= 1, "--variations must be >= 1"),
              (0 <= cfg.spread < 1, "--spread must be in [0, 1)"),
              (cfg.repeat >= 2, "--repeat must be >= 2 (medians and p-values need samples)"),
              (cfg.warmup >= 0, "--warmup must be >= 0"),
              (cfg.variations <= 100_000, "--variations must be at most 100,000"),
              (cfg.batch_size is None or 1 <= cfg.batch_size <= MAX_SIZE,
               f"--batch-size must be in [1, {MAX_SIZE:,}]"),
              (cfg.seq_len is None or 1 <= cfg.seq_len <= MAX_SIZE,
               f"--seq-len must be in [1, {MAX_SIZE:,}]"),
              (0 <= cfg.seed < 2**63, "--seed must be in [0, 2^63)"),
              (cfg.requests is None or cfg.requests >= 1, "--requests must be >= 1"),
              (1 <= cfg.nproc <= 1024, "--nproc must be in [1, 1024]"),
              (cfg.timeout is None or cfg.timeout > 0, "--timeout must be > 0 seconds")]
    for ok, message in checks:
        if not ok:
            raise UsageError(message)
    try:
        traffic.parse_buckets(cfg.buckets)
    except StreamError as e:
        raise UsageError(str(e)) from None


__all__ = ["PASS", "BenchResult", "Hooks", "resolve_device", "run_bench"]

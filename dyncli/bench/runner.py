"""``dyncli bench``: eager vs inductor on actually varied shapes, strategy by strategy.

:func:`run_bench` is the single-model path, top to bottom:

1. check the name, read the request stream, pick the device (errors before any work);
2. build the model and find its batch and sequence dims; the shapes to measure and the
   request order (:mod:`dyncli.bench.core.plan`);
3. a :class:`~dyncli.bench.harness.Harness` (the model prepared, every shape's inputs made) and
   the compiler warm-up, unless each strategy gets a process of its own;
4. a driver (:mod:`dyncli.bench.drivers`) measures every strategy as its plan applies it
   (:func:`~dyncli.bench.measure.measure_strategy`) and publishes the streams' costs and the
   recommendation (:mod:`dyncli.bench.core.recommend`) as it goes.

``--nproc N`` goes to :mod:`dyncli.bench.distributed` after step 1. Failures are statuses, not
exceptions; on Ctrl-C the result so far is returned with ``interrupted=True``.
"""

from __future__ import annotations

from collections.abc import Callable

from dyncli.bench import drivers, manners, models, passes, tensors
from dyncli.bench.core import strategy as table
from dyncli.bench.core import unused
from dyncli.bench.core.plan import StreamPlan, stream_plan, user_stream
from dyncli.bench.core.result import BenchResult, Hooks, RunResult
from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.core.stream_file import Shape
from dyncli.bench.device import environment, memory_bytes, resolve_device
from dyncli.bench.harness import Harness, load
from dyncli.bench.measure import Bench
from dyncli.config import BenchConfig
from dyncli.errors import ModelError, UsageError


def run_bench(model_name: str, cfg: BenchConfig, hooks: Hooks | None = None, *,
              process_each: bool | None = None) -> BenchResult:
    """Benchmark ``model_name`` under every strategy of ``cfg``; never raises for a model failure.

    Raises :class:`ModelError` for names that do not exist and :class:`UsageError` for
    impossible settings (before any work); a model that exists but fails to build, run or
    compile becomes a status in the result. ``process_each``: each strategy in a fresh process
    of its own (None: :func:`~dyncli.bench.drivers.process_each_by_default`).
    """
    hooks = hooks or Hooks()
    warnings: list[str] = list(hooks.said)  # shown already: in the JSON, not shown again
    warn = hooks.warner(warnings)

    models.check_name(model_name)
    given = user_stream(cfg)  # a bad --shapes file fails before any work
    device = resolve_device(cfg.device, warn)
    with manners.manners(cfg.matmul_precision, warn):
        result = _run(model_name, cfg, hooks, process_each, device, given, warnings, warn)
        seen = len(warnings)
    if len(warnings) > seen and hooks.run_done:  # torch's warnings, said once each at the end
        hooks.run_done(result)
    return result


def _run(model_name: str, cfg: BenchConfig, hooks: Hooks, process_each: bool | None,
         device: str, given: tuple[list[Shape], str] | None, warnings: list[str],
         warn: Callable[[str], None]) -> BenchResult:
    """:func:`run_bench` from the device on, under the run's torch manners."""
    settings = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    result = BenchResult(model_name, environment(device, cfg.dtype), settings, warnings=warnings)
    if cfg.nproc > 1:
        from dyncli.bench.distributed import run_distributed

        return run_distributed(model_name, cfg, device, result, hooks)
    if hooks.started:  # checked: what follows (torch, the model, a compile) takes a while
        hooks.started()
    names = drivers.runs_of(cfg)
    try:
        driver = _prepare(model_name, cfg, hooks, process_each, device, given, result, warn,
                          names)
    except KeyboardInterrupt:  # building, warming up: nothing measured, and every run says so
        result.stop(names, model_name, cfg.mode)
        if hooks.run_done:  # the --json file, as after a strategy: never a pass
            hooks.run_done(result)
        return result
    if driver is not None:
        driver.run(names)
    return result


def _prepare(model_name: str, cfg: BenchConfig, hooks: Hooks, process_each: bool | None,
             device: str, given: tuple[list[Shape], str] | None, result: BenchResult,
             warn: Callable[[str], None], names: list[str]) -> drivers.Driver | None:
    """The model built, the stream planned, the compiler and device warmed up: the driver that
    measures the runs ``names`` (None when the model would not build)."""
    loaded = _load(model_name, cfg, device, result, hooks, given, warn)
    if loaded is None:
        return None
    built, dims, stream = loaded
    total = len(stream.variations) * len(names)
    kind = drivers.choose(cfg, stream, process_each, warn)
    result.measured = drivers.measured(cfg, kind)
    if kind == drivers.PROCESS_EACH:
        built.model = None  # each child builds its own; this one would only hold memory
        said = unused.settled(cfg, unused.Model(model_name, built.source, built.seq_len))
        return drivers.ProcessEach(model_name, built.name, cfg, result, hooks, total, said)
    fresh = result.measured.caches.fresh
    h = Harness.create(cfg, built, device, dims, stream.variations, cfg.seed, hooks.tap)
    import scipy.stats  # noqa: F401  (its ~0.5 s first import is setup, not a strategy's)

    # inductor's once-per-process costs would land on the first strategy's cold compiles
    # (unfair beside the others) and on the prediction a cold replay is checked against
    if fresh and (len(names) > 1 or given is not None or cfg.replay):
        result.compiler_warmup_s = passes.warm_compiler(h, stream.ids[0])
    settled, h.eager_first = manners.warm_device(h, first_seen(stream.ids))
    result.device_warmup = settled.as_dict()
    b = Bench(model_name, h, stream, result, hooks, fresh, total, warn)
    return drivers.SameWindow(b) if kind == drivers.SAME_WINDOW else drivers.Sequential(b)


def first_seen(ids: list[int]) -> list[int]:
    """The distinct shapes in the order the stream first meets them."""
    return list(dict.fromkeys(ids))


def _load(model_name: str, cfg: BenchConfig, device: str, result: BenchResult, hooks: Hooks,
          given: tuple[list[Shape], str] | None, warn: Callable[[str], None]
          ) -> tuple[models.Built, DimPlan, StreamPlan] | None:
    """The model, its dims and the stream to measure, recorded in ``result``; None (every
    strategy ``model_fail_to_load``) when the model would not build."""
    try:
        built, dims = load(model_name, cfg, device)
    except ModelError:
        raise
    except Exception as e:
        for name in drivers.runs_of(cfg):
            s, m = table.split(name)
            result.runs.append(RunResult(model_name, s, cfg.mode, status=Status.MODEL_FAIL_TO_LOAD,
                                         error=short_error(e), compile_mode=m))
        if hooks.run_done:
            hooks.run_done(result)
        return None
    if "seq" in cfg.vary and built.seq_len is None:
        raise UsageError(f"vary seq: {model_name} has no sequence dim (only hf: text and audio models do)")
    # warnings, not errors: autodyn.toml may set them for the project's hf models
    for text in unused.notes(cfg, unused.RUN, unused.Model(model_name, built.source,
                                                           built.seq_len), hooks.origins):
        warn(text)
    for text in dims.warnings:
        warn(text)
    result.dims = dims.as_dict()
    stream = stream_plan(cfg, built.name, built.batch_size, built.seq_len, given)
    result.requests, result.stream_ids, result.shapes_source = \
        len(stream.ids), stream.ids, stream.source
    _check_input_memory(built, dims, stream.variations, cfg.dtype, device)
    return built, dims, stream


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

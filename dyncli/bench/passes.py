"""The passes a strategy may need beside its measured one, for request streams.

- the compiler warm-up before any strategy (one-time process costs charged to no strategy);
- an empty inductor cache per strategy, seeded with PGO state for ``pgo``'s warm pass;
- ``pgo``'s cold pass, which records the profile the measured pass starts from;
- ``eager-then-compile``'s first request, which torch runs eager;
- ``--replay``: the whole stream for real, in order;
- the ``pad`` wrapper and the compile walk (shapes in the order the stream first shows them).

:class:`StreamPasses` is the base of the runner; it holds no state of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dyncli.bench import costing, interleave, models, padding, strategies, stream, tensors
from dyncli.bench.compile_watch import CountingBackend, settle_compile_workers
from dyncli.bench.result import NOT_APPLICABLE, RunResult
from dyncli.bench.shapes import DimPlan, Variation
from dyncli.bench.timing import Clock
from dyncli.config import BenchConfig


def short_error(err: BaseException) -> str:
    inner = getattr(err, "inner_exception", None)  # dynamo's BackendCompilerFailed wraps it
    if isinstance(inner, BaseException):
        return f"{type(err).__name__}: " + short_error(inner)
    text = f"{type(err).__name__}: {err}".strip()
    first = text.splitlines()[0] if text else type(err).__name__
    return first[:300]


class StreamPasses:
    """Methods of the runner for streams, pad, pgo, eager-then-compile and replay."""

    cfg: BenchConfig
    built: models.Built
    dims: DimPlan
    plan: list[Variation]
    ids: list[int]
    model: Any
    autocast: Callable[[], Any]
    inputs: list[tuple[tuple[Any, ...], dict[str, Any]]]
    clock: Clock
    fresh_cache: bool
    buckets: list[int] | None

    def _call(self, step: Callable[[], Any]) -> tuple[Any, float]:
        raise NotImplementedError  # the runner's: times a call and adds it to in_calls

    def walk(self, strategy: str) -> list[tuple[Variation, int | None]]:
        """Variations in the order their first compiled calls occur in the stream."""
        order, at = stream.compile_walk(self.ids, strategy == "eager-then-compile")
        return [(self.plan[i], at[i]) for i in order]

    def not_applicable(self, strategy: str) -> str | None:
        """Why a strategy cannot run on this model (None: it can)."""
        if strategy == "pad":
            if self.cfg.mode == "training":
                return ("pad: padded rows would change the loss and batch statistics in "
                        "training; pad is for inference")
            if not self.dims.batch and not self.dims.seq:
                return "pad: the model has no batch (or sequence) dim to pad"
        return None

    @contextmanager
    def cache(self, strategy: str, seed: Path | None = None) -> Iterator[None]:
        """An empty inductor cache for the strategy when asked (pgo: always), seeded with PGO state.

        ``torch._inductor.utils.fresh_cache`` points TORCHINDUCTOR_CACHE_DIR at a new temp dir
        and clears inductor's in-memory caches, so compiles are cold and their times honest.
        """
        if not (self.fresh_cache or strategy == "pgo" or seed is not None):
            yield
            return
        from torch._inductor.utils import fresh_cache

        with fresh_cache():
            if seed is not None:
                dest = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) / "dynamo"
                shutil.copytree(seed, dest, dirs_exist_ok=True)
            yield

    def pgo_cold_pass(self, run: RunResult, job: str) -> Path | None:
        """Compile the stream's shapes once, cold, under local PGO; keep the state it wrote.

        Returns a directory holding torch's ``code_state_*.pkl`` (copied out of the cold
        pass's temporary inductor cache) or None, with the run marked not applicable.
        """
        import torch

        t0 = time.perf_counter()
        backend = CountingBackend()
        window = getattr(self, "window", False)  # same-window mode: keep others' compiled code
        if window:
            interleave.forget_sizes()
            compiled = interleave.isolated_compile(self.model, strategies.DYNAMIC_ARG["pgo"],
                                                   backend)
        else:
            compiled = strategies.compile_model(self.model, "pgo", backend)
        compile_s = 0.0
        keep = Path(tempfile.mkdtemp(prefix="dyncli-pgo-")) / "dynamo"
        found: list[str] = []
        try:
            with self.cache("pgo"), strategies.strategy_config("pgo", [], job):
                for variation, _ in self.walk("pgo"):
                    args, kwargs = tensors.clone_inputs(*self.inputs[variation.index])
                    before = backend.compiles
                    fn = self.wrap("pgo", compiled, variation)[0]
                    step = strategies.make_step(fn, self.model, self.cfg.mode, args, kwargs,
                                                self.built.loss, self.built.num_classes,
                                                self.autocast)
                    try:
                        _, dt = self._call(step)
                    except Exception as e:
                        run.passes.append({"pass": "cold", "error": short_error(e)})
                        break
                    if backend.compiles > before:
                        compile_s += dt + settle_compile_workers()
                state = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) / "dynamo"
                found = sorted(str(p.name) for p in state.glob("code_state_*.pkl"))
                if found:
                    shutil.copytree(state, keep, dirs_exist_ok=True)
        finally:
            if window:
                interleave.forget_sizes()
            else:
                torch._dynamo.reset()
        run.passes.insert(0, {"pass": "cold", "compiles": backend.compiles,
                              "compile_time_s": compile_s, "wall_s": time.perf_counter() - t0,
                              "state_files": found})
        if not found:
            run.status = NOT_APPLICABLE
            run.error = ("pgo: torch wrote no PGO state in the cold pass (it writes only when a "
                         "compile changed the profile, under torch.compiler.config.job_id with "
                         "automatic_dynamic_local_pgo)")
            shutil.rmtree(keep.parent, ignore_errors=True)
            return None
        return keep

    def wrap(self, strategy: str, compiled: Any,
             variation: Variation) -> tuple[Any, dict[str, Any] | None]:
        """The callable a strategy runs for a variation (pad: pad inputs, slice outputs)."""
        if strategy != "pad":
            return compiled, None
        varies = (len({v.batch_size for v in self.plan}) > 1,
                  len({v.seq_len for v in self.plan}) > 1)
        to = padding.target(variation, self.buckets, self.dims, varies)
        fn = padding.PaddedModel(compiled, self.built, self.dims, variation, to)
        return fn, {"batch": to.batch, "seq": to.seq, "unpadded": to.unpadded}

    def warm_compiler(self) -> float:
        """Pay inductor's once-per-process costs before any strategy; seconds spent.

        The first compile of a model in a process carries start-up work (imports, lowerings
        met for the first time, the compile-worker pool) that later cold compiles do not: on
        2 cores a 2-layer MLP's first compile took 6.8 s, the same compile again from an empty
        cache 1.2 s. Uncorrected, whichever strategy ran first looked worst and --replay
        disagreed with the prediction by 4x. So the model is compiled here, static and dynamic,
        at the first shape, in throw-away caches; that is reported as ``compiler_warmup_s``,
        not charged to a strategy. A server pays it once too.
        """
        import torch
        from torch._inductor.utils import fresh_cache

        t0 = time.perf_counter()
        for dynamic in (False, True):  # static and symbolic-shape paths each have their own
            try:
                with fresh_cache():
                    # through the same backend wrapper as the strategies: inductor reached
                    # via lookup_backend had its own first-time cost (5.5 s vs 1.1 s after)
                    fn = torch.compile(self.model, dynamic=dynamic, backend=CountingBackend())
                    args, kwargs = tensors.clone_inputs(*self.inputs[self.ids[0]])
                    strategies.make_step(fn, self.model, self.cfg.mode, args, kwargs,
                                         self.built.loss, self.built.num_classes,
                                         self.autocast)()
                    settle_compile_workers()
            except Exception:  # a model that fails to compile fails in its strategies, with status
                pass
            finally:
                torch._dynamo.reset()
        return time.perf_counter() - t0

    def prime(self, compiled: Any) -> float:
        """eager-then-compile: the stream's first request, which torch runs eager; seconds."""
        args, kwargs = tensors.clone_inputs(*self.inputs[self.ids[0]])
        step = strategies.make_step(compiled, self.model, self.cfg.mode, args, kwargs,
                                    self.built.loss, self.built.num_classes, self.autocast)
        return self._call(step)[1]

    def replay(self, run: RunResult, job: str | None, seed: Path | None) -> None:
        """--replay: the whole stream for real, in order, from a reset and an empty cache."""
        import torch

        cost = costing.run_cost(run, self.ids, len(self.plan))
        if cost is None:
            return
        backend = CountingBackend()
        compiled = strategies.compile_model(self.model, run.strategy, backend)
        steps: dict[int, Callable[[], Any]] = {}
        for v in self.plan:
            args, kwargs = tensors.clone_inputs(*self.inputs[v.index])
            strategies.mark_inputs(run.strategy, args, kwargs, self.dims)
            fn = self.wrap(run.strategy, compiled, v)[0]
            if isinstance(fn, padding.PaddedModel):  # untimed: the shapes to slice back to
                fn.expect(strategies.make_step(self.model, self.model, self.cfg.mode, args,
                                               kwargs, self.built.loss, self.built.num_classes,
                                               self.autocast)())
            steps[v.index] = strategies.make_step(fn, self.model, self.cfg.mode, args, kwargs,
                                                  self.built.loss, self.built.num_classes,
                                                  self.autocast)
        try:
            with self.cache(run.strategy, seed), \
                    strategies.strategy_config(run.strategy, self.cfg.dynamic_sources, job):
                t0 = time.perf_counter()
                for sid in self.ids:
                    before = backend.compiles
                    steps[sid]()
                    if backend.compiles > before:
                        settle_compile_workers()
                    self.clock.synchronize()
                measured = time.perf_counter() - t0
        except Exception as e:
            run.replay = {"measured_s": float("nan"), "predicted_s": cost.total_s}
            run.error = run.error or f"replay: {short_error(e)}"
            return
        finally:
            torch._dynamo.reset()
        run.replay = {"measured_s": measured, "predicted_s": cost.total_s,
                      "compiles": backend.compiles}


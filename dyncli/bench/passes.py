"""The passes a strategy may need beside its measured one: functions over a :class:`Harness`.

- the compiler warm-up before any strategy (one-time process costs charged to no strategy);
- an empty inductor cache per strategy, seeded with PGO state for ``pgo``'s warm pass;
- ``pgo``'s cold pass, which records the profile the measured pass starts from;
- ``eager-then-compile``'s first request, which torch runs eager;
- ``--replay``: the whole stream for real, in order;
- the ``pad`` wrapper and the compile walk (shapes in the order the stream first shows them).
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

from dyncli.bench import interleave, padding, strategies, torch_compat
from dyncli.bench.compile_watch import CountingBackend, settle_compile_workers
from dyncli.bench.core import recommend, stream_file
from dyncli.bench.core.plan import StreamPlan
from dyncli.bench.core.result import PadTarget, PgoPass, Replay, RunResult
from dyncli.bench.core.shapes import Variation
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.harness import Harness


def walk(plan: StreamPlan, strategy: str) -> list[tuple[Variation, int | None]]:
    """Variations in the order their first compiled calls occur in the stream."""
    order, at = stream_file.compile_walk(plan.ids, strategy == "eager-then-compile")
    return [(plan.variations[i], at[i]) for i in order]


def not_applicable(h: Harness, strategy: str) -> str | None:
    """Why a strategy cannot run on this model and torch (None: it can)."""
    too_old = torch_compat.strategy_unsupported(strategy)
    if too_old:
        return too_old
    if strategy == "pad":
        if h.cfg.mode == "training":
            return ("pad: padded rows would change the loss and batch statistics in "
                    "training; pad is for inference")
        if not h.dims.batch and not h.dims.seq:
            return "pad: the model has no batch (or sequence) dim to pad"
    return None


@contextmanager
def cache(fresh: bool, seed: Path | None = None) -> Iterator[None]:
    """An empty inductor cache when ``fresh`` (or seeded), seeded with PGO state from ``seed``.

    torch's fresh-cache context (:func:`torch_compat.fresh_cache`) points TORCHINDUCTOR_CACHE_DIR
    at a new temp dir and clears inductor's in-memory caches, so compiles are cold and their
    times honest.
    """
    if not (fresh or seed is not None):
        yield
        return
    with torch_compat.fresh_cache():
        if seed is not None:
            dest = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) / "dynamo"
            shutil.copytree(seed, dest, dirs_exist_ok=True)
        yield


def wrap(h: Harness, plan: StreamPlan, buckets: list[int] | None, strategy: str, compiled: Any,
         variation: Variation) -> tuple[Any, PadTarget | None]:
    """The callable a strategy runs for a variation (pad: pad inputs, slice outputs)."""
    if strategy != "pad":
        return compiled, None
    varies = (len({v.batch_size for v in plan.variations}) > 1,
              len({v.seq_len for v in plan.variations}) > 1)
    to = padding.target(variation, buckets, h.dims, varies)
    return padding.PaddedModel(compiled, h.built, h.dims, variation, to), to


def pgo_cold_pass(h: Harness, plan: StreamPlan, buckets: list[int] | None, run: RunResult,
                  job: str, keep_others: bool = False) -> Path | None:
    """Compile the stream's shapes once, cold, under local PGO; keep the state it wrote.

    Returns a directory holding torch's ``code_state_*.pkl`` (copied out of the cold
    pass's temporary inductor cache) or None, with the run marked not applicable.
    ``keep_others`` (same-window mode): no ``torch._dynamo.reset()``, which would drop the
    strategies before it; an isolated compile and only the size memory cleared instead.
    """
    import torch

    t0 = time.perf_counter()
    backend = CountingBackend()
    if keep_others:
        interleave.forget_sizes()
        compiled = interleave.isolated_compile(h.model, strategies.DYNAMIC_ARG["pgo"], backend)
    else:
        compiled = strategies.compile_model(h.model, "pgo", backend)
    compile_s = 0.0
    keep = Path(tempfile.mkdtemp(prefix="dyncli-pgo-")) / "dynamo"
    found: list[str] = []
    try:
        with cache(True), strategies.strategy_config("pgo", [], job):
            for variation, _ in walk(plan, "pgo"):
                before = backend.compiles
                fn = wrap(h, plan, buckets, "pgo", compiled, variation)[0]
                try:
                    _, dt = h.call(h.step(fn, h.args(variation.index)))
                except Exception as e:
                    run.passes.append(PgoPass("cold", error=short_error(e)))
                    break
                if backend.compiles > before:
                    compile_s += dt + settle_compile_workers()
            state = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) / "dynamo"
            found = sorted(str(p.name) for p in state.glob("code_state_*.pkl"))
            if found:
                shutil.copytree(state, keep, dirs_exist_ok=True)
    finally:
        if keep_others:
            interleave.forget_sizes()
        else:
            torch._dynamo.reset()
    run.passes.insert(0, PgoPass("cold", backend.compiles, compile_s, time.perf_counter() - t0,
                                 found))
    if not found:
        run.status = Status.NOT_APPLICABLE
        run.error = ("pgo: torch wrote no PGO state in the cold pass (it writes only when a "
                     "compile changed the profile, under torch.compiler.config.job_id with "
                     "automatic_dynamic_local_pgo)")
        shutil.rmtree(keep.parent, ignore_errors=True)
        return None
    return keep


def warm_compiler(h: Harness, first: int) -> float:
    """Pay inductor's once-per-process costs before any strategy; seconds spent.

    The first compile of a model in a process carries start-up work (imports, lowerings
    met for the first time, the compile-worker pool) that later cold compiles do not: on
    2 cores a 2-layer MLP's first compile took 6.8 s, the same compile again from an empty
    cache 1.2 s. Uncorrected, whichever strategy ran first looked worst and --replay
    disagreed with the prediction by 4x. So the model is compiled here, static and dynamic,
    at the first request's shape (variation ``first``), in throw-away caches; that is
    reported as ``compiler_warmup_s``, not charged to a strategy. A server pays it once too.
    """
    import torch

    t0 = time.perf_counter()
    for dynamic in (False, True):  # static and symbolic-shape paths each have their own
        try:
            with torch_compat.fresh_cache():
                # through the same backend wrapper as the strategies: inductor reached
                # via lookup_backend had its own first-time cost (5.5 s vs 1.1 s after)
                fn = torch.compile(h.model, dynamic=dynamic, backend=CountingBackend())
                h.step(fn, h.args(first))()
                settle_compile_workers()
        except Exception:  # a model that fails to compile fails in its strategies, with status
            pass
        finally:
            torch._dynamo.reset()
    return time.perf_counter() - t0


def prime(h: Harness, compiled: Any, first: int) -> float:
    """eager-then-compile: the stream's first request, which torch runs eager; seconds.

    Its compiles (torch may compile inner frames during it) are counted by the caller.
    """
    return h.call(h.step(compiled, h.args(first)))[1]


def replay(h: Harness, plan: StreamPlan, buckets: list[int] | None, run: RunResult,
           fresh: bool, job: str | None, seed: Path | None) -> None:
    """--replay: the whole stream for real, in order, from a reset and an empty cache."""
    import torch

    predicted = recommend.run_cost(run, plan.ids, len(plan.variations))
    if predicted is None:
        return
    backend = CountingBackend()
    compiled = strategies.compile_model(h.model, run.strategy, backend)
    steps: dict[int, Callable[[], Any]] = {}
    for v in plan.variations:
        inputs = h.args(v.index, run.strategy)
        fn = wrap(h, plan, buckets, run.strategy, compiled, v)[0]
        if isinstance(fn, padding.PaddedModel):  # untimed: the shapes to slice back to
            fn.expect(h.step(h.model, inputs)())
        steps[v.index] = h.step(fn, inputs)
    try:
        with cache(fresh or run.strategy == "pgo", seed), \
                strategies.strategy_config(run.strategy, h.cfg.dynamic_sources, job):
            t0 = time.perf_counter()
            for sid in plan.ids:
                before = backend.compiles
                steps[sid]()
                if backend.compiles > before:
                    settle_compile_workers()
                h.clock.synchronize()
            measured = time.perf_counter() - t0
    except Exception as e:
        run.replay = Replay(float("nan"), predicted.total_s)
        run.error = run.error or f"replay: {short_error(e)}"
        return
    finally:
        torch._dynamo.reset()
    run.replay = Replay(measured, predicted.total_s, backend.compiles)

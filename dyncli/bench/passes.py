"""The passes a strategy may need beside its measured one: functions over a :class:`Harness`.

- whether it can run at all here (its row's torch, device and model needs);
- the compiler warm-up before any strategy (one-time process costs charged to no strategy);
- the caches each pass compiles from (:func:`dyncli.bench.caches.scope`: empty and its own
  per strategy unless ``--warm-cache``, seeded with PGO state for a profiled warm pass);
- the profiling pass (``pgo``'s cold pass), which records the profile the measured pass
  starts from;
- the stream's first request under a stance that runs it eager (``eager-then-compile``);
- ``--replay``: the whole stream for real, in order;
- the compile walk: shapes in the order the stream first compiles them.

Which of these a strategy gets is its row's (:mod:`dyncli.bench.core.strategy`); every compiled
call goes through its plan (:func:`~dyncli.bench.compiling.compile_plan`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from dyncli.bench import caches, compiling, interleave
from dyncli.bench.compile_watch import CountingBackend, settle_compile_workers
from dyncli.bench.core import recommend, stream_file
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.plan import StreamPlan
from dyncli.bench.core.result import PgoPass, Replay, RunResult
from dyncli.bench.core.shapes import Variation
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.harness import Harness


def compile_order(plan: StreamPlan, row: table.Strategy) -> list[tuple[Variation, int | None]]:
    """Variations in the order their first compiled calls occur in the stream."""
    order, at = stream_file.compile_walk(plan.ids, table.PRIME in row.passes)
    return [(plan.variations[i], at[i]) for i in order]


def not_applicable(h: Harness, plan: Plan) -> str | None:
    """Why ``plan``'s strategy cannot run on this torch, device and model (None: it can); the
    run's ``error``, printed after its name (``pad: not_applicable: …``), so it does not
    start with the name again."""
    import torch

    row = plan.row
    reason = plan.unsupported(torch.__version__, h.device)  # the row, the mode, CUDA graphs
    if reason:
        return reason
    if row.pads and h.cfg.mode == "training":
        return ("padded rows would change the loss and batch statistics in training; "
                "padding is for inference")
    if row.pads and not h.dims.batch and not h.dims.seq:
        return "the model has no batch (or sequence) dim to pad"
    return None


def profile(h: Harness, stream: StreamPlan, plan: Plan, run: RunResult,
            isolated: bool = False) -> Path | None:
    """Compile the stream's shapes once, cold, under the plan; keep the profile it wrote.

    Returns a directory holding torch's ``code_state_*.pkl`` (copied out of the pass's
    temporary inductor cache) or None, with the run marked not applicable. ``isolated``
    (same-window): no ``torch._dynamo.reset()``, which would drop the strategies before it; an
    isolated compile and only the size memory cleared instead.
    """
    t0 = time.perf_counter()
    backend = CountingBackend()
    if isolated:
        compiling.forget_sizes()
    compiled = compiling.compile_plan(h.model, plan, backend, isolated=isolated)
    compile_s = 0.0
    keep = Path(tempfile.mkdtemp(prefix="dyncli-pgo-")) / "dynamo"
    found: list[str] = []
    try:
        with caches.scope(plan.strategy, True) as root:
            for variation, _ in compile_order(stream, plan.row):
                before = backend.compiles
                try:
                    _, dt = h.call(h.step(compiled, h.args(variation.index)))
                except Exception as e:
                    run.passes.append(PgoPass("cold", error=short_error(e)))
                    break
                if backend.compiles > before:
                    compile_s += dt + settle_compile_workers()
            assert root is not None
            state = root / "dynamo"
            found = sorted(str(p.name) for p in state.glob("code_state_*.pkl"))
            if found:
                shutil.copytree(state, keep, dirs_exist_ok=True)
    finally:
        compiling.between(isolated)
    run.passes.insert(0, PgoPass("cold", backend.compiles, compile_s, time.perf_counter() - t0,
                                 found))
    if not found:
        run.status = Status.NOT_APPLICABLE
        run.error = ("torch wrote no PGO state in the cold pass (it writes "
                     "only when a compile changed the profile, under "
                     "torch.compiler.config.job_id with automatic_dynamic_local_pgo)")
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
            with caches.scope("warm-up", True):
                # through the strategies' own backend (CountingBackend): inductor reached
                # another way had first-time costs of its own (5.5 s vs 1.1 s after)
                fn = torch.compile(h.model, dynamic=dynamic, backend=CountingBackend())
                h.step(fn, h.args(first))()
                settle_compile_workers()
        except Exception:  # a model that fails to compile fails in its strategies, with status
            pass
        finally:
            compiling.fresh_start()
    return time.perf_counter() - t0


def prime(h: Harness, compiled: Any, first: int) -> float:
    """The stream's first request under a stance that runs it eager; seconds.

    Its compiles (torch may compile inner frames during it) are counted by the caller.
    """
    return h.call(h.step(compiled, h.args(first)))[1]


def replay(h: Harness, stream: StreamPlan, plan: Plan, run: RunResult, fresh: bool,
           seed: Path | None) -> None:
    """--replay: the whole stream for real, in order, from a reset and an empty cache: the
    interleaved replay's loop (:func:`dyncli.bench.interleave.replay_interleaved`) with one
    player, whose one turn is the whole stream."""
    predicted = recommend.run_cost(run, stream.ids, len(stream.variations))
    if predicted is None:
        return
    backend = CountingBackend()
    compiled = compiling.compile_plan(h.model, plan, backend)
    player = interleave.Player(
        plan.strategy, {v.index: h.step(compiled, h.args(v.index)) for v in stream.variations},
        compiles=lambda: backend.compiles, settle=settle_compile_workers)
    try:
        with caches.scope(plan.strategy, fresh, seed):
            interleave.replay_interleaved(stream.ids, [player], h.clock,
                                          chunk=max(1, len(stream.ids)), short_error=short_error,
                                          hits=caches.hits)
    except Exception as e:  # the cache directories themselves
        player.error = player.error or short_error(e)
    finally:
        compiling.fresh_start()
    if player.error:
        run.replay = Replay(float("nan"), predicted.total_s)
        run.error = run.error or f"replay: {player.error}"
        return
    run.replay = Replay(player.measured_s, predicted.total_s, backend.compiles,
                        compile_s=player.compile_s, cache_hits=player.cache_hits,
                        **player.gc.replay_fields())

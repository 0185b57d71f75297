"""The runner's same-window passes (issue #18): needs torch, works on a runner's state.

With a request stream (``--shapes``/``--sizes``/``--replay``), bench keeps every strategy's
compiled code alive (:mod:`dyncli.bench.interleave`), and after the last strategy:

1. :func:`window_pass` times, per shape, eager and every passed strategy round-robin in one
   window, loops per sample calibrated; those samples replace the per-strategy ones, so the
   stream costs, p-values and the recommendation compare measurements of the same moments;
2. :func:`replay_all` (``--replay``) replays the stream for every strategy *and eager*, each
   from an empty cache, taking turns in chunks, so the measured totals compare too.

:func:`probe` times eager on one fixed shape (the stream's most frequent) at moments across
the run: its drift says how much the machine changed (:mod:`dyncli.bench.machine`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from dyncli.bench import costing, interleave, loops, machine, padding, stats, strategies, tensors
from dyncli.bench.compile_watch import CountingBackend, settle_compile_workers
from dyncli.bench.result import PASS, BenchResult, RunResult
from dyncli.bench.timing import Clock


class RunnerState(Protocol):
    """What these passes read from the runner."""

    cfg: Any
    built: Any
    dims: Any
    plan: list[Any]
    ids: list[int]
    model: Any
    autocast: Callable[[], Any]
    inputs: list[tuple[tuple[Any, ...], dict[str, Any]]]
    clock: Clock
    kept: dict[str, interleave.Kept]
    eager_steps: dict[int, Callable[[], Any]]
    load: machine.LoadLog
    probes: list[float]
    probe_loops: int | None

    def wrap(self, strategy: str, compiled: Any,
             variation: Any) -> tuple[Any, dict[str, Any] | None]: ...


def _step(r: RunnerState, fn: Any, index: int, strategy: str | None = None) -> Callable[[], Any]:
    args, kwargs = tensors.clone_inputs(*r.inputs[index])
    if strategy is not None:
        strategies.mark_inputs(strategy, args, kwargs, r.dims)
    return strategies.make_step(fn, r.model, r.cfg.mode, args, kwargs, r.built.loss,
                                r.built.num_classes, r.autocast)


def _counter(backend: CountingBackend) -> Callable[[], int]:
    return lambda: backend.compiles


def reference_shape(ids: list[int]) -> int:
    """The stream's most frequent shape (the first on a tie)."""
    return Counter(ids).most_common(1)[0][0] if ids else 0


def probe(r: RunnerState, label: str) -> None:
    """Eager's per-call ms on the reference shape now, and a load reading."""
    sid = reference_shape(r.ids)
    step = r.eager_steps.get(sid) or _step(r, r.model, sid)
    try:
        if r.probe_loops is None:
            r.probe_loops = loops.calibrate(r.clock, step)
        r.probes.append(loops.timed_loops(r.clock, step, r.probe_loops))
    except Exception:  # the strategies report a model that fails; a probe never does
        pass
    r.load.read(label)


def window_pass(r: RunnerState, result: BenchResult, warn: Callable[[str], None]) -> None:
    """Round-robin per shape over eager and every kept strategy; fill the runs' samples."""
    kept = [k for run in result.runs if run.status == PASS and (k := r.kept.get(run.strategy))]
    if not kept or not r.eager_steps:
        return
    timing = interleave.same_window(r.clock, r.eager_steps, kept, r.cfg.repeat,
                                    after_shape=lambda sid: r.load.read(f"window {sid}"))
    result.same_window = True
    for run in result.runs:
        if run.strategy not in {k.strategy for k in kept}:
            continue
        for v in run.variations:
            window = timing.windows.get(v.index)
            if window is None or run.strategy not in window.columns:
                continue
            eager, comp = list(window.columns["eager"]), list(window.columns[run.strategy])
            v.eager_samples, v.compiled_samples = eager, comp
            v.loops = timing.loops[v.index][run.strategy]
            v.eager_ms, v.compiled_ms = stats.median(eager), stats.median(comp)
            v.speedup = stats.speedup(eager, comp)
            v.p_value = stats.p_value(eager, comp)
        late = timing.late_compiles.get(run.strategy, 0)
        if late:
            run.compiles += late
            warn(f"{run.strategy}: compiled {late} more time(s) in the same-window pass "
                 "(a shape its walk had compiled); those calls' times include it")
    sid = reference_shape(r.ids)
    ref = timing.windows.get(sid)
    if ref is not None:
        shape = r.plan[sid]
        what = f"eager, batch {shape.batch_size}" + (
            f" seq {shape.seq_len}" if shape.seq_len is not None else "")
        for text in machine.sample_warnings(list(ref.columns["eager"]), what):
            warn(text)


def replay_all(r: RunnerState, result: BenchResult, seeds: dict[str, tuple[str | None,
               Path | None]], short_error: Callable[[BaseException], str]) -> None:
    """--replay for every strategy and eager, interleaved in chunks, each from empty caches."""
    import torch

    costing.apply(result)  # the predictions to compare with
    runs = [run for run in result.runs if run.status == PASS and run.stream is not None]
    torch._dynamo.reset()
    players: list[interleave.Player] = []
    slots: list[interleave.Slot] = []
    by_name: dict[str, RunResult] = {}
    try:
        for run in runs:
            job, seed = seeds.get(run.strategy, (None, None))
            backend = CountingBackend()
            compiled = interleave.isolated_compile(r.model, strategies.DYNAMIC_ARG[run.strategy],
                                                   backend)
            steps: dict[int, Callable[[], Any]] = {}
            for v in r.plan:
                fn = r.wrap(run.strategy, compiled, v)[0]
                if isinstance(fn, padding.PaddedModel):  # untimed: the shapes to slice back to
                    fn.expect(_step(r, r.model, v.index)())
                steps[v.index] = _step(r, fn, v.index, run.strategy)

            def config(s: str = run.strategy, j: str | None = job) -> Any:
                return strategies.strategy_config(s, r.cfg.dynamic_sources, j)
            slot = interleave.Slot(run.strategy, config, seed)
            slots.append(slot)
            players.append(interleave.Player(run.strategy, steps, slot, _counter(backend),
                                             settle_compile_workers))
            by_name[run.strategy] = run
        eager = interleave.Player(costing.EAGER, {v.index: _step(r, r.model, v.index)
                                                  for v in r.plan})
        players.append(eager)
        interleave.replay_interleaved(r.ids, players, r.clock, short_error=short_error)
    finally:
        for slot in slots:
            slot.close()
        torch._dynamo.reset()
    for p in players:
        if p.name == costing.EAGER:
            if result.eager_stream is not None:
                result.eager_stream.replay = {"measured_s": p.measured_s if not p.error
                                              else math.nan,
                                              "predicted_s": result.eager_stream.total_s}
            continue
        run = by_name[p.name]
        assert run.stream is not None
        run.replay = {"measured_s": math.nan if p.error else p.measured_s,
                      "predicted_s": run.stream.total_s, "compiles": p.compiles(),
                      "interleaved": True}
        if p.error:
            run.error = run.error or f"replay: {p.error}"
    r.load.read("replay")

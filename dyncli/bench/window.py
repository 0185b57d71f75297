"""The same-window driver's state and passes (issue #18): functions over a Harness, need torch.

With a request stream (``--shapes``/``--sizes``/``--replay``), bench keeps every strategy's
compiled code alive (:mod:`dyncli.bench.interleave`): its walk records each shape's first
call, compiles and accuracy and leaves the steady-state timing to this module. After the last
strategy:

1. :func:`window_pass` times, per shape, eager and every passed strategy round-robin in one
   window, loops per sample calibrated; those are the runs' samples (the walk took none), so
   the stream costs, p-values and the recommendation compare measurements of the same moments;
2. :func:`replay_all` (``--replay``) replays the stream for every strategy *and eager*, each
   from an empty cache, taking turns in chunks, so the measured totals compare too.

:func:`probe` times eager on one fixed shape (the stream's most frequent) at moments across
the run: its drift says how much the machine changed (:mod:`dyncli.bench.core.machine`).
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench import caches, compiling, graph_watch, interleave, loops
from dyncli.bench.compile_watch import CountingBackend, settle_compile_workers
from dyncli.bench.core import machine, recommend
from dyncli.bench.core import strategy as table
from dyncli.bench.core.plan import StreamPlan
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.run_parts import Replay
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.device import failure_status
from dyncli.bench.harness import Harness
from dyncli.bench.interleave import Kept


@dataclass
class Window:
    """What every strategy keeps for the same-window pass, and the load log of the run.

    The load log and the eager probes are kept by every driver (they say how the machine moved
    across the run); ``kept`` and ``pending_replay`` only by the same-window driver.
    """

    kept: dict[str, Kept] = field(default_factory=dict)
    eager_steps: dict[int, Callable[[], Any]] = field(default_factory=dict)
    pending_replay: dict[str, Path | None] = field(default_factory=dict)  # pgo: its seed
    load: machine.LoadLog = field(default_factory=machine.LoadLog)
    probes: list[float] = field(default_factory=list)
    probe_loops: int | None = None

    def keep(self, strategy: str, sid: int, eager: Callable[[], Any],
             compiled: Callable[[], Any]) -> None:
        """A strategy's warmed step for shape ``sid``, and eager's (the first one kept)."""
        self.kept[strategy].steps[sid] = compiled
        self.eager_steps.setdefault(sid, eager)

    def drop_seeds(self) -> None:
        """Remove the PGO seeds the pending replays did not use."""
        import shutil

        for seed in self.pending_replay.values():
            if seed is not None:
                shutil.rmtree(seed.parent, ignore_errors=True)


def reference_shape(ids: list[int]) -> int:
    """The stream's most frequent shape (the first on a tie)."""
    return Counter(ids).most_common(1)[0][0] if ids else 0


def shape_words(plan: StreamPlan, sid: int) -> str:
    """``batch 8`` or ``batch 8 seq 128``."""
    v = plan.variations[sid]
    return f"batch {v.batch_size}" + (f" seq {v.seq_len}" if v.seq_len is not None else "")


def probe(h: Harness, plan: StreamPlan, r: Window, label: str) -> None:
    """Eager's per-call ms on the reference shape now, and a load reading."""
    if plan.variations:
        sid = reference_shape(plan.ids)
        try:
            step = r.eager_steps.get(sid) or h.step(h.model, h.args(sid))
            if r.probe_loops is None:
                r.probe_loops = loops.calibrate(h.clock, step)
            r.probes.append(loops.timed_loops(h.clock, step, r.probe_loops))
        except Exception:  # the strategies report a model that fails; a probe never does
            pass
    r.load.read(label)


def _failed_in_window(run: RunResult, errors: dict[int, BaseException] | None,
                      warn: Callable[[str], None]) -> None:
    """A strategy whose call raised in the same-window pass, at shapes its walk had passed:
    those shapes fail (not timed: no samples), and the run's status says so."""
    if not errors:
        return
    for v in run.variations:
        e = errors.get(v.index)
        if e is not None and v.status == Status.PASS:
            v.status = failure_status(e, Status.FAIL_TO_COMPILE)
            v.detail = f"raised in the same-window pass (its walk had passed): {short_error(e)}"
    run.finish()
    shapes = ", ".join(f"#{i}" for i in sorted(errors))
    warn(f"{run.label}: raised in the same-window pass at shape(s) {shapes}, which its walk "
         f"had passed: {short_error(next(iter(errors.values())))}; those shapes are not timed "
         f"and the run is {run.status}")


def window_pass(h: Harness, plan: StreamPlan, r: Window, result: BenchResult,
                warn: Callable[[str], None]) -> None:
    """Round-robin per shape over eager and every kept strategy; the runs' samples."""
    # every shape a strategy kept is timed: a strategy that ran eagerly (what ran, never
    # costed as compiled), and the shapes that passed of a run that failed at others (an OOM
    # above some batch); a shape that failed kept nothing
    kept = [k for run in result.runs if (k := r.kept.get(run.label)) is not None and k.steps]
    if not kept or not r.eager_steps:
        return
    h.phase = "timed"
    names = {k.strategy for k in kept}
    graphs = h.device == "cuda" and any(table.mode(run.compile_mode).cuda_graphs
                                        for run in result.runs if run.label in names)
    with graph_watch.GraphWatch() if graphs else contextlib.nullcontext() as gw:
        timing = interleave.same_window(
            h.clock, r.eager_steps, kept, h.cfg.repeat, after_shape=r.load.read,
            recordings=(lambda: (gw.recordings or 0, gw.record_s)) if gw is not None else None)
    result.same_window = True
    for run in result.runs:
        if run.label not in names:
            continue
        for v in run.variations:
            window = timing.windows.get(v.index)
            if window is None or run.label not in window.columns:
                continue
            v.set_samples(list(window.columns["eager"]), list(window.columns[run.label]))
            v.loops = timing.loops[v.index][run.label]
        _failed_in_window(run, timing.errors.get(run.label), warn)
        late = timing.late_compiles.get(run.label, 0)
        if late:
            run.compiles += late
            warn(f"{run.label}: compiled {late} more time(s) in the same-window pass "
                 "(a shape its walk had compiled); those calls' times include it, and its "
                 "stream's cost does not (it charges each shape's first compile)")
        _late_recordings(run, timing.late_recordings.get(run.label), warn)
    for sid, n in timing.timed_recordings.items():
        warn(f"{n} CUDA graph recording(s) inside the timed rounds of {shape_words(plan, sid)}: "
             "that shape's samples include them (not counted to a strategy)")
    skew = machine.skew_warning([(f"{label}, {shape_words(plan, i)}", list(samples))
                                 for i, window in sorted(timing.windows.items())
                                 for label, samples in window.columns.items()])
    if skew:
        warn(skew)
    sid = reference_shape(plan.ids)
    ref = timing.windows.get(sid)
    if ref is not None:
        for text in machine.sample_warnings(list(ref.columns["eager"]),
                                            f"eager, {shape_words(plan, sid)}"):
            warn(text)


def _late_recordings(run: RunResult, late: dict[int, tuple[int, float]] | None,
                     warn: Callable[[str], None]) -> None:
    """CUDA graphs a run recorded in the same-window pass, added to its shapes' and its own
    recordings: a shape served there under a graph compiled after the shape's own first calls
    (a dynamic graph that replaced a static one) records its size again; torch logs that
    recording too."""
    if not late or run.graphs is None:
        return
    for v in run.variations:
        n, seconds = late.get(v.index, (0, 0.0))
        if n and v.graphs is not None:
            v.graphs.recordings += n
            v.graphs.record_s += seconds
    n, seconds = sum(x[0] for x in late.values()), sum(x[1] for x in late.values())
    run.graphs.recordings = (run.graphs.recordings or 0) + n
    run.graphs.record_s = (run.graphs.record_s or 0.0) + seconds
    warn(f"{run.label}: recorded {n} more CUDA graph(s) in the same-window pass, before its "
         f"timed calls ({seconds:.3f} s; a shape served by a graph compiled after its first "
         "calls records its size again); counted in its recordings")


def replay_all(h: Harness, plan: StreamPlan, r: Window, result: BenchResult) -> None:
    """--replay for every strategy and eager, interleaved in chunks, each from the caches its
    measurement started from (empty ones of its own unless ``--warm-cache``)."""
    recommend.apply(result)  # the predictions to compare with
    runs = [run for run in result.runs
            if run.status == Status.PASS and run.stream is not None and run.plan is not None]
    compiling.fresh_start()
    players: list[interleave.Player] = []
    slots: list[interleave.Slot] = []
    by_name: dict[str, RunResult] = {}
    try:
        for run in runs:
            assert run.plan is not None
            backend = CountingBackend()
            compiled = compiling.compile_plan(h.model, run.plan, backend, isolated=True)
            steps = {v.index: h.step(compiled, h.args(v.index)) for v in plan.variations}
            slot = interleave.Slot(run.label, r.pending_replay.get(run.label),
                                   fresh=result.measured is None or result.measured.caches.fresh)
            slots.append(slot)
            players.append(interleave.Player(run.label, steps, slot, backend.count,
                                             settle_compile_workers))
            by_name[run.label] = run
        players.append(interleave.Player(recommend.EAGER, {
            v.index: h.step(h.model, h.args(v.index)) for v in plan.variations}))
        interleave.replay_interleaved(plan.ids, players, h.clock, short_error=short_error,
                                      hits=caches.hits)
    finally:
        for slot in slots:
            slot.close()
        compiling.fresh_start()
    for p in players:
        if p.name == recommend.EAGER:
            if result.eager_stream is not None:
                result.eager_stream.replay = Replay(
                    math.nan if p.error else p.measured_s, result.eager_stream.total_s,
                    interleaved=True, **p.gc.replay_fields())
            continue
        run = by_name[p.name]
        assert run.stream is not None
        run.replay = Replay(math.nan if p.error else p.measured_s, run.stream.total_s,
                            p.compiles(), interleaved=True, compile_s=p.compile_s,
                            cache_hits=p.cache_hits, **p.gc.replay_fields())
        if p.error:
            run.error = run.error or f"replay: {p.error}"
    r.load.read("replay")


def load_summary(plan: StreamPlan, r: Window, result: BenchResult,
                 warn: Callable[[str], None]) -> None:
    """``load`` in the result, and one warning if the machine was busy or changed."""
    summary = r.load.summary()
    summary["eager_probe_ms"] = list(r.probes)
    drift = machine.drift(r.probes)
    summary["eager_drift"] = drift
    result.load = summary
    what = shape_words(plan, reference_shape(plan.ids)) if plan.variations else ""
    texts = machine.load_warnings(summary, drift, what)
    if texts:
        warn(machine.UNSTABLE + ": " + "; ".join(texts))

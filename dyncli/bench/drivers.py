"""How the strategies of one benchmark are driven: one runner, three drivers. Needs torch.

Every driver measures each strategy with :func:`~dyncli.bench.measure.measure_strategy` (in
this process or in a child) and appends its run to the result; none rewrites another's numbers.

- :class:`SameWindow` (the default): every strategy keeps its compiled code (an isolated
  compile each); their walks record compiles and accuracy, and one round-robin pass after the
  last strategy times every shape over eager and all of them in the same window
  (:mod:`dyncli.bench.window`).
- :class:`ProcessEach` (the default where torch has no ``isolate_recompiles``, < 2.13): each
  strategy in a fresh process of its own (:mod:`dyncli.bench.child`), which times it
  round-robin with eager in its own window: in one process strategies would poison each other
  (one's cache entries count against the next one's recompile limit, issue #32).
- :class:`Sequential`: one strategy after another in this process, ``torch._dynamo.reset()``
  between them; each times its own (eager, compiled) pairs: only where this process was told
  to keep every run (a suite's worker, ``process_each=False``) on a torch that cannot keep
  them apart side by side; a warning says so.

A run is a strategy under one compile mode (``strategy@mode``, :func:`runs_of`); the child of
:class:`ProcessEach` gets both.

:func:`choose` picks one; the two lines that decide are :func:`same_window_for` and
:func:`process_each_by_default` (or the caller's ``process_each``); :func:`measured` records
which, why, and the caches the strategies compiled from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from dyncli.bench import caches, child, compiling, restart, torch_compat, window
from dyncli.bench.core import machine, recommend
from dyncli.bench.core import strategy as table
from dyncli.bench.core.measured import (
    PROCESS_EACH,
    SAME_WINDOW,
    SEQUENTIAL,
    Measured,
    apart_reason,
)
from dyncli.bench.core.plan import StreamPlan
from dyncli.bench.core.result import BenchResult, Hooks, RunResult
from dyncli.bench.core.status import Status
from dyncli.bench.measure import Bench, measure_strategy
from dyncli.config import BenchConfig

__all__ = ["PROCESS_EACH", "SAME_WINDOW", "SEQUENTIAL", "choose", "measured", "runs_of"]


def runs_of(cfg: BenchConfig) -> list[str]:
    """The runs to measure, named by :func:`~dyncli.bench.core.strategy.label`: every strategy
    under every compile mode, strategy by strategy."""
    return [table.label(s, m) for s in cfg.strategy for m in cfg.compile_mode]


def _apart(cfg: BenchConfig) -> bool:
    """Whether this process would have to keep two or more runs' compiles apart and this torch
    cannot (no ``isolate_recompiles``, < 2.13)."""
    return len(runs_of(cfg)) > 1 and not torch_compat.can_isolate_recompiles()


def same_window_for(cfg: BenchConfig, stream: StreamPlan) -> bool:
    """Whether this process times its runs round-robin in one window: whenever there are shapes
    to time (a request stream or the seeded plan) and it can keep the runs' compiled code apart
    (this torch has ``isolate_recompiles``, or there is one run)."""
    return bool(stream.variations) and not _apart(cfg)


def process_each_by_default(cfg: BenchConfig) -> bool:
    """Whether each run goes to a process of its own when the caller does not say: when there
    are two or more and this torch cannot keep them apart in one process (< 2.13)."""
    return _apart(cfg)


def choose(cfg: BenchConfig, stream: StreamPlan, process_each: bool | None,
           warn: Callable[[str], None] | None = None) -> str:
    """Which driver measures this benchmark; ``warn`` hears when the caller kept every run in
    this process (``process_each=False``) on a torch that cannot keep them apart there."""
    if process_each if process_each is not None else process_each_by_default(cfg):
        return PROCESS_EACH
    if same_window_for(cfg, stream):
        return SAME_WINDOW
    if warn and _apart(cfg):
        warn(f"{apart_reason(torch_compat.installed_text())}: kept in this process as asked, "
             "they were measured one after another, each from torch._dynamo.reset(), not side "
             "by side in one time window")
    return SEQUENTIAL


def measured(cfg: BenchConfig, driver: str) -> Measured:
    """The driver, why the runs were not timed in one window (when they were not and torch is
    why), and the caches their compiles started from."""
    why = None
    if driver != SAME_WINDOW and _apart(cfg):
        why = apart_reason(torch_compat.installed_text())
    return Measured(driver, why, caches.state(cfg.fresh_cache is not False))


class Driver(Protocol):
    """Measures ``names`` in order, appending one run each to the benchmark's result."""

    def run(self, names: list[str]) -> None: ...


class Sequential:
    """One strategy after another in this process, a reset between them."""

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.window = b.window or window.Window()  # the load log and eager probes

    def run(self, names: list[str]) -> None:
        b, cfg = self.b, self.b.h.cfg
        window.probe(b.h, b.stream, self.window, "start")
        try:
            for name in names:
                strategy, compile_mode = table.split(name)
                run = RunResult(b.h.built.name, strategy, cfg.mode, compile_mode=compile_mode)
                b.result.runs.append(run)
                try:
                    measure_strategy(b, b.plan_for(strategy, compile_mode), run)
                    window.probe(b.h, b.stream, self.window, name)
                    if (cfg.start == "warm" or cfg.requests_per_start) \
                            and run.status == Status.PASS:
                        if b.hooks.warning and name == names[0]:
                            b.hooks.warning("--start warm: each strategy also runs in two fresh "
                                            "processes (cold, then warm from its caches)")
                        run.start = restart.measure(b.model_name, cfg, run)
                finally:
                    self.strategy_done()
            self.after()
        except KeyboardInterrupt:  # what was not timed is not measured, never a pass
            b.result.stop(names, b.h.built.name, cfg.mode)
        finally:
            self.finish()

    def publish(self) -> None:
        """The streams and the recommendation as measured so far, to the front end."""
        recommend.apply(self.b.result)
        if self.b.hooks.run_done:
            self.b.hooks.run_done(self.b.result)

    def strategy_done(self) -> None:
        self.publish()

    def after(self) -> None:
        """What comes after the last strategy (the same-window passes)."""

    def finish(self) -> None:
        b = self.b
        window.probe(b.h, b.stream, self.window, "end")
        window.load_summary(b.stream, self.window, b.result, b.warn)
        self.publish()


class SameWindow(Sequential):
    """Every strategy keeps its compiled code; one round-robin timing pass after the last."""

    def __init__(self, b: Bench) -> None:
        b.window = window.Window()
        super().__init__(b)

    def strategy_done(self) -> None:
        if self.b.hooks.run_done:  # costed once every strategy is timed, in one window
            self.b.hooks.run_done(self.b.result)

    def after(self) -> None:
        b = self.b
        window.window_pass(b.h, b.stream, self.window, b.result, b.warn)
        if self.window.pending_replay:
            window.replay_all(b.h, b.stream, self.window, b.result)

    def finish(self) -> None:
        self.window.drop_seeds()
        compiling.fresh_start()
        super().finish()


class ProcessEach:
    """Each strategy in a fresh process of its own, one after another (the child protocol).

    The child times its one strategy round-robin with eager in one window (the same-window
    driver) and writes its run (with the plan it measured); this process reads it back, with
    the first child's eager replay and every child's eager probes: how far eager's latency
    moved across the processes says how far absolute latencies of different strategies
    compare. This process makes no harness: the child builds the model and its inputs.
    """

    def __init__(self, model_name: str, built_name: str, cfg: BenchConfig, result: BenchResult,
                 hooks: Hooks, total: int, said: dict[str, Any] | None = None) -> None:
        self.model_name, self.built_name = model_name, built_name
        self.said = said or {}  # options this process said were unused: the children's default
        self.cfg, self.result, self.hooks = cfg, result, hooks
        self.total, self.done = total, 0
        self.loads: list[dict[str, Any]] = []

    def run(self, names: list[str]) -> None:
        seen = set(self.result.warnings)
        try:
            for name in names:
                self.result.runs.append(self._one(name, seen))
                recommend.apply(self.result)
                if self.hooks.run_done:
                    self.hooks.run_done(self.result)
        except KeyboardInterrupt:  # the runs not started are said so
            self.result.stop(names, self.built_name, self.cfg.mode)
            recommend.apply(self.result)
            if self.hooks.run_done:
                self.hooks.run_done(self.result)
        finally:
            self._load_summary()

    def _load_summary(self) -> None:
        """The children's load readings and eager probes as one ``load``; a warning when
        eager's latency moved across the processes."""
        if not self.loads:
            return
        self.result.load = load = machine.combine(self.loads)
        drift = load.get("eager_drift")
        if isinstance(drift, float) and drift > machine.DRIFT:
            text = (f"{machine.UNSTABLE}: eager's latency on one shape moved {drift:.2g}x "
                    "across the strategies' processes: absolute latencies of different "
                    "strategies are not comparable; each speedup (against eager in its own "
                    "process) is")
            self.result.warnings.append(text)
            if self.hooks.warning:
                self.hooks.warning(text)

    def _one(self, name: str, seen: set[str]) -> RunResult:
        strategy, compile_mode = table.split(name)
        settings = {k: getattr(self.cfg, k) for k in self.cfg.__dataclass_fields__}
        settings.update(strategy=[strategy], compile_mode=[compile_mode], emit=None,
                        emit_file=None, fail_on=[], **self.said)
        offset = self.done

        def progress(strategy: str, done: int, _total: int) -> None:
            self.done = offset + done
            if self.hooks.progress:
                self.hooks.progress(strategy, self.done, self.total)

        ended = child.run_child(self.model_name, settings, on_progress=progress)
        got = ended.result
        run = next((r for r in got.runs if r.label == name), None) if got else None
        if run is None or run.status == Status.INTERRUPTED:  # it did not finish: why it ended
            status, error = ended.failure() or (Status.FAIL_TO_COMPILE,
                                                "the process wrote no result")
            run = RunResult(self.built_name, strategy, self.cfg.mode, status=status, error=error,
                            compile_mode=compile_mode)
        if got is not None:
            if got.load is not None:
                self.loads.append(got.load)
            if self.result.eager_stream is None and got.eager_stream is not None \
                    and got.eager_stream.replay:  # eager replayed once, in the first child
                self.result.eager_stream = got.eager_stream
            if self.result.device_warmup is None:  # every child warms its device: the first's
                self.result.device_warmup = got.device_warmup
            if got.compiler_warmup_s is not None:
                self.result.compiler_warmup_s = (self.result.compiler_warmup_s or 0.0) \
                    + got.compiler_warmup_s
            for text in got.warnings:
                if text not in seen:
                    seen.add(text)
                    self.result.warnings.append(text)
                    if self.hooks.warning:
                        self.hooks.warning(text)
        if ended.interrupted:
            run.status = Status.INTERRUPTED
            self.result.runs.append(run)
            raise KeyboardInterrupt
        return run

"""One suite model in its own child process, and what its end means (see :mod:`.suite`).

:func:`run_model` runs the model through the child protocol (:mod:`dyncli.bench.child`: its
own process group, progress lines, stderr tail, the group killed past the timeout) and turns
how it ended into a :class:`ModelOutcome`: its runs, and statuses for the strategies it did
not finish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dyncli.bench.child import Ended, run_child
from dyncli.bench.core import strategy as table
from dyncli.bench.core.result import RunResult
from dyncli.bench.core.status import Status, worst
from dyncli.bench.core.suite_result import ModelOutcome
from dyncli.bench.core.suites import SuiteEntry


def run_model(entry: SuiteEntry, settings: dict[str, Any],
              info: Callable[[str], None]) -> ModelOutcome:
    """Benchmark one model in a child process; its end, whatever it was, becomes a status.

    On Ctrl-C the child is stopped and ``KeyboardInterrupt(outcome)`` carries what it had
    written.
    """
    last = [""]

    def progress(strategy: str, done: int, total: int) -> None:
        if strategy != last[0]:  # one line per strategy: a suite's log stays short
            last[0] = strategy
            info(f"    {entry.name}: {strategy} (variations done: {done}/{total})")

    ended = run_child(entry.model, settings, timeout=settings.get("timeout"),
                      on_progress=progress)
    out = outcome(entry, settings, ended)
    if ended.interrupted:
        raise KeyboardInterrupt(out)
    return out


def outcome(entry: SuiteEntry, settings: dict[str, Any], ended: Ended) -> ModelOutcome:
    """The model's outcome: the child's runs under the suite's name, and the strategies it did
    not finish with the reason it stopped."""
    child = ended.result
    runs = child.runs if child else []
    for r in runs:
        r.model = entry.name
    failure = ended.failure()
    error = ""
    if failure:  # the strategies the child did not finish get the reason it stopped
        status, error = failure
        finished = {r.label for r in runs if r.status != Status.INTERRUPTED}
        runs = [r for r in runs if r.label in finished]
        modes = settings.get("compile_mode") or [table.DEFAULT_MODE]
        for strategy in settings["strategy"]:
            for compile_mode in modes:
                if table.label(strategy, compile_mode) not in finished:
                    runs.append(RunResult(entry.name, strategy, settings["mode"],
                                          status=status, error=error,
                                          compile_mode=compile_mode))
    model_status = worst(r.status for r in runs)
    result = ModelOutcome(entry.name, entry.model, model_status, settings, runs,
                          error or _run_errors(runs), ended.returncode, ended.wall_s,
                          ended.tail if (failure or model_status != Status.PASS) else "")
    if child:
        result.environment = child.environment
        result.dims = child.dims
        result.warnings = child.warnings
    return result


def _run_errors(runs: list[RunResult]) -> str:
    return "; ".join(f"{r.label}: {r.error}" for r in runs if r.error)

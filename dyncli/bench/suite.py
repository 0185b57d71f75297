"""``dyncli bench --suite``: many models, each in its own process, merged into one result.

Each model runs in a child Python (:mod:`dyncli.bench.worker`, through the child protocol of
:mod:`dyncli.bench.child`) that benchmarks it as ``dyncli bench MODEL`` would and writes the
single-model JSON after every strategy. The parent turns whatever ended the child into that model's status, so one model's crash, OOM kill or
hang never stops the suite:

- the child finished: its runs, statuses as measured (``model_fail_to_load`` when it could not
  build the model, with the child's ``Error:`` line);
- killed by SIGKILL (what the kernel's OOM killer sends): ``OOM`` for the strategies it did
  not finish;
- ran past ``timeout`` seconds: the process group is killed, ``timeout``;
- any other death (a segfault in a compiler, an escaped exception): ``fail_to_compile`` once
  the model was running, ``model_fail_to_load`` before; the stderr tail says which.

After each model the merged document (the single-bench schema with every model's runs in
``runs`` and one ``models[]`` entry per model) is rewritten atomically, and the CSV with it;
``resume`` keeps the models an earlier, interrupted run of the same file completed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dyncli.bench.child import read_doc
from dyncli.bench.core.status import Status
from dyncli.bench.core.suite_result import ModelOutcome, SuiteInfo, SuiteResult
from dyncli.bench.core.suites import Suite, effective_settings, load
from dyncli.bench.suite_child import run_model
from dyncli.config import Resolved
from dyncli.errors import UsageError


@dataclass
class SuiteHooks:
    """Callbacks to the front end: a line of progress, and the result after each model."""

    info: Callable[[str], None] = lambda _text: None
    model_done: Callable[[SuiteResult], None] = lambda _result: None
    said: tuple[str, ...] = ()  # warnings the command showed (its options): in the JSON too


def run_suite(suite: Suite, base: dict[str, Any], explicit: set[str], *,
              previous: dict[str, Any] | None = None,
              hooks: SuiteHooks | None = None) -> SuiteResult:
    """Benchmark every model of ``suite``, each in a child process; never raises for a model.

    ``base`` holds the resolved ``[bench]`` settings, ``explicit`` the keys the user gave by
    environment or flag (a suite's own values do not override those). ``previous`` is an
    earlier suite document: its complete models are kept, not rerun.
    """
    hooks = hooks or SuiteHooks()
    done = _completed(previous, suite) if previous is not None else {}
    todo = [e for e in suite.entries if e.name not in done]
    resumed = tuple(e.name for e in suite.entries if e.name in done)
    info = SuiteInfo(suite.name, suite.source, suite.description, len(suite.entries), resumed)
    result = SuiteResult(info, {k: v for k, v in base.items() if k not in ("resume",)},
                         warnings=list(hooks.said))
    if resumed:
        hooks.info(f"resume: {len(resumed)} model(s) already complete, {len(todo)} to run")
    t0, finished = time.monotonic(), 0
    for entry in suite.entries:
        if entry.name in done:
            result.outcomes.append(done[entry.name])
            continue
        position = len(result.outcomes) + 1
        settings = effective_settings(base, explicit, suite, entry)
        hooks.info(f"[{position}/{len(suite.entries)}] {entry.name}: starting "
                   f"({', '.join(settings['strategy'])})")
        try:
            outcome = run_model(entry, settings, hooks.info)
        except KeyboardInterrupt as stop:
            outcome = stop.args[0] if stop.args and isinstance(stop.args[0], ModelOutcome) \
                else ModelOutcome(entry.name, entry.model, Status.INTERRUPTED, settings)
            result.outcomes.append(outcome)
            result.interrupted = True
            hooks.model_done(result)
            break
        result.outcomes.append(outcome)
        finished += 1
        elapsed = time.monotonic() - t0
        left = sum(1 for e in suite.entries[position:] if e.name not in done)
        eta = f" · ETA {_clock(elapsed / finished * left)}" if left else ""
        hooks.info(f"[{position}/{len(suite.entries)}] {entry.name}: {outcome.status} in "
                   f"{outcome.wall_s:.0f} s · elapsed {_clock(elapsed)}{eta}")
        hooks.model_done(result)
    return result


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


# Statuses ``resume`` runs again: Ctrl-C, and a model that did not build, which costs seconds
# to retry and is often fixed between runs (a missing package or file). A timeout or an OOM
# kill would cost as much again and usually recur, so those count as complete.
RERUN_ON_RESUME = (Status.INTERRUPTED, Status.MODEL_FAIL_TO_LOAD)


def _completed(previous: dict[str, Any], suite: Suite) -> dict[str, ModelOutcome]:
    """Models of ``previous`` that are complete (see ``RERUN_ON_RESUME``), by name."""
    try:
        earlier = SuiteResult.from_dict(previous)
    except ValueError:
        raise UsageError("--resume: the --json file is not a suite result",
                         hint="Resume only a file written by dyncli bench --suite") from None
    if earlier.suite.name != suite.name:
        shown = earlier.suite.name[:100]
        raise UsageError(f"--resume: the --json file is a run of suite '{shown}', "
                         f"not '{suite.name}'")
    return {o.name: o for o in earlier.outcomes if o.status not in RERUN_ON_RESUME}


def run_resolved(resolved: Resolved, json_path: str | None,
                 hooks: SuiteHooks | None = None) -> SuiteResult:
    """The suite ``resolved.config.suite`` with the resolved ``[bench]`` settings.

    Keys that came from the environment or a flag beat the suite's own values. With
    ``resume`` the models complete in ``json_path`` are kept.
    """
    import dataclasses

    cfg = resolved.config
    suite = load(cfg.suite)
    previous = None
    if cfg.resume:
        if not json_path or json_path == "-":
            raise UsageError("--resume needs --json PATH: the file to resume")
        if Path(json_path).is_file():
            previous = read_doc(Path(json_path))
            if previous is None:
                raise UsageError(f"--resume: {json_path} is not a JSON document",
                                 hint="Drop --resume to start the suite over")
    explicit = {k for k, origin in resolved.origins.items()
                if origin == "command line" or origin.startswith("environment")}
    base = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
    return run_suite(suite, base, explicit, previous=previous, hooks=hooks)

"""``dyncli bench --suite``: many models, each in its own process, merged into one result.

Each model runs in a child Python (:mod:`dyncli.bench.suite_worker`) that benchmarks it as
``dyncli bench MODEL`` would and writes the single-model JSON after every strategy. The parent
turns whatever ended the child into that model's status, so one model's crash, OOM kill or
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench.suite_child import ModelOutcome, read_doc, run_model
from dyncli.bench.suites import Suite, effective_settings, load
from dyncli.config import Resolved
from dyncli.errors import UsageError
from dyncli.output import envelope


@dataclass
class SuiteResult:
    """Every model of a suite run, in suite order."""

    suite: Suite
    settings: dict[str, Any]
    outcomes: list[ModelOutcome] = field(default_factory=list)
    interrupted: bool = False
    resumed: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        """Whether any model produced timings."""
        return any(v.get("eager_samples_ms") and v.get("compiled_samples_ms")
                   for o in self.outcomes for r in o.runs for v in r.get("variations", []))

    @property
    def failed(self) -> bool:
        """Whether any model did not pass."""
        return self.interrupted or any(o.status != "pass" for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: the bench schema, every model's runs, plus ``models[]``."""
        env = next((o.environment for o in self.outcomes if o.environment), None)
        return envelope("bench", {
            "model": None,
            "suite": {"name": self.suite.name, "source": self.suite.source,
                      "description": self.suite.description, "models": len(self.suite.entries),
                      "resumed": self.resumed},
            "interrupted": self.interrupted,
            "environment": env,
            "settings": self.settings,
            "dims": {},
            "warnings": [f"{o.name}: {w}" for o in self.outcomes for w in o.warnings],
            "runs": [r for o in self.outcomes for r in o.runs],
            "models": [o.to_dict() for o in self.outcomes],
        })


@dataclass
class SuiteHooks:
    """Callbacks to the front end: a line of progress, and the result after each model."""

    info: Callable[[str], None] = lambda _text: None
    model_done: Callable[[SuiteResult], None] = lambda _result: None


def run_suite(suite: Suite, base: dict[str, Any], explicit: set[str], *,
              previous: dict[str, Any] | None = None,
              hooks: SuiteHooks | None = None) -> SuiteResult:
    """Benchmark every model of ``suite``, each in a child process; never raises for a model.

    ``base`` holds the resolved ``[bench]`` settings, ``explicit`` the keys the user gave by
    environment or flag (a suite's own values do not override those). ``previous`` is an
    earlier suite document: its complete models are kept, not rerun.
    """
    hooks = hooks or SuiteHooks()
    result = SuiteResult(suite, {k: v for k, v in base.items() if k not in ("resume",)})
    done = _completed(previous, suite) if previous is not None else {}
    todo = [e for e in suite.entries if e.name not in done]
    result.resumed = [e.name for e in suite.entries if e.name in done]
    if result.resumed:
        hooks.info(f"resume: {len(result.resumed)} model(s) already complete, "
                   f"{len(todo)} to run")
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
                else ModelOutcome(entry.name, entry.model, "interrupted", settings)
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
RERUN_ON_RESUME = ("interrupted", "model_fail_to_load")


def _completed(previous: dict[str, Any], suite: Suite) -> dict[str, ModelOutcome]:
    """Models of ``previous`` that are complete (see ``RERUN_ON_RESUME``), by name."""
    meta = previous.get("suite")
    if not isinstance(previous.get("models"), list) or not isinstance(meta, dict):
        raise UsageError("--resume: the --json file is not a suite result",
                         hint="Resume only a file written by dyncli bench --suite")
    if meta.get("name") != suite.name:
        shown = str(meta.get("name"))[:100]
        raise UsageError(f"--resume: the --json file is a run of suite '{shown}', "
                         f"not '{suite.name}'")
    raw_runs = previous.get("runs")
    runs = [r for r in raw_runs if isinstance(r, dict)] if isinstance(raw_runs, list) else []
    out = {}
    for entry in previous["models"]:
        if not isinstance(entry, dict) or entry.get("status") in (None, *RERUN_ON_RESUME):
            continue
        try:
            outcome = ModelOutcome.from_dict(entry, [r for r in runs
                                                     if r.get("model") == entry.get("model")])
        except ValueError:
            continue  # a damaged entry: that model runs again
        out[outcome.name] = outcome
    return out


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

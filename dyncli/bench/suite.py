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

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from dyncli.bench.result import FAILURES, RunResult
from dyncli.bench.suite_worker import PROGRESS_PREFIX
from dyncli.bench.suites import Suite, SuiteEntry, effective_settings, load
from dyncli.config import Resolved
from dyncli.errors import UsageError
from dyncli.output import envelope

# Model statuses, most severe first; a model's status is the worst of its runs' (the order
# of a single bench's, which has timeout since --nproc).
STATUSES = FAILURES
TAIL_LINES = 20
TAIL_CHARS = 2000
_KILL_GRACE_S = 5.0


@dataclass
class ModelOutcome:
    """What one model's child process left: its runs (JSON dicts) and how it ended."""

    name: str
    model: str
    status: str
    settings: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    exit_code: int | None = None
    wall_s: float = 0.0
    stderr_tail: str = ""
    environment: dict[str, Any] | None = None
    dims: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``models[]`` entry of the suite document."""
        return {"model": self.name, "source": self.model, "status": self.status,
                "error": self.error or None, "exit_code": self.exit_code, "wall_s": self.wall_s,
                "stderr_tail": self.stderr_tail or None, "settings": self.settings,
                "environment": self.environment, "dims": self.dims, "warnings": self.warnings,
                "strategies": [r.get("strategy") for r in self.runs]}

    @classmethod
    def from_dict(cls, entry: dict[str, Any], runs: list[dict[str, Any]]) -> ModelOutcome:
        """Rebuild a finished model from a suite document (for ``resume``)."""
        return cls(entry["model"], entry.get("source", entry["model"]), entry["status"],
                   entry.get("settings", {}), runs, entry.get("error") or "",
                   entry.get("exit_code"), float(entry.get("wall_s") or 0.0),
                   entry.get("stderr_tail") or "", entry.get("environment"),
                   entry.get("dims") or {}, entry.get("warnings") or [])


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
    if not isinstance(previous.get("models"), list) or "suite" not in previous:
        raise UsageError("--resume: the --json file is not a suite result",
                         hint="Resume only a file written by dyncli bench --suite")
    if previous["suite"].get("name") != suite.name:
        raise UsageError(f"--resume: the --json file is a run of suite "
                         f"'{previous['suite'].get('name')}', not '{suite.name}'")
    runs = [r for r in previous.get("runs", []) if isinstance(r, dict)]
    out = {}
    for entry in previous["models"]:
        if not isinstance(entry, dict) or entry.get("status") in (None, *RERUN_ON_RESUME):
            continue
        mine = [r for r in runs if r.get("model") == entry.get("model")]
        out[entry["model"]] = ModelOutcome.from_dict(entry, mine)
    return out


# ---------------------------------------------------------------- one model, one process


def _worker_command(spec: Path, out: Path) -> list[str]:
    """``python -c`` that imports this dyncli (the same checkout as the parent, always)."""
    root = str(Path(__file__).resolve().parents[2])
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from dyncli.bench.suite_worker import main; sys.exit(main(sys.argv[2], sys.argv[3]))")
    return [sys.executable, "-c", code, root, str(spec), str(out)]


class _Tail:
    """Reads a child's stderr on a thread: keeps the last lines, reports progress lines."""

    def __init__(self, stream: IO[str], on_progress: Callable[[str], None]) -> None:
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self.progressed = False
        self._stream, self._on_progress = stream, on_progress
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            if line.startswith(PROGRESS_PREFIX):
                self.progressed = True
                self._on_progress(line[len(PROGRESS_PREFIX):].strip())
            else:
                self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        self._thread.join(timeout=2.0)
        return "\n".join(self.lines)[-TAIL_CHARS:]


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Stop the child and whatever it started (inductor's compile workers): TERM, then KILL."""
    for sig, wait_s in ((signal.SIGTERM, _KILL_GRACE_S), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_model(entry: SuiteEntry, settings: dict[str, Any],
              info: Callable[[str], None]) -> ModelOutcome:
    """Benchmark one model in a child process; its end, whatever it was, becomes a status.

    On Ctrl-C the child is stopped and ``KeyboardInterrupt(outcome)`` carries what it had
    written.
    """
    timeout = settings.get("timeout")
    with tempfile.TemporaryDirectory(prefix="dyncli-suite-") as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "result.json"
        spec.write_text(json.dumps({"model": entry.model, "settings": settings}),
                        encoding="utf-8")
        last = [""]

        def progress(text: str) -> None:
            strategy, done, total = ([*text.split(), "", "", ""])[:3]
            if strategy != last[0]:  # one line per strategy: a suite's log stays short
                last[0] = strategy
                info(f"    {entry.name}: {strategy} (variations done: {done}/{total})")

        t0 = time.monotonic()
        proc = subprocess.Popen(_worker_command(spec, out), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
        assert proc.stderr is not None
        tail = _Tail(proc.stderr, progress)
        timed_out = interrupted = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
        except KeyboardInterrupt:
            interrupted = True
            _kill_group(proc)
        outcome = _outcome(entry, settings, proc.returncode, _read_doc(out), tail.text(),
                           tail.progressed, timed_out, interrupted, timeout)
        outcome.wall_s = time.monotonic() - t0
    if interrupted:
        raise KeyboardInterrupt(outcome)
    return outcome


def _read_doc(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _error_line(tail: str) -> str:
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    for line in lines:
        if line.startswith("Error: "):
            return line[len("Error: "):]
    return lines[-1].strip()[:300] if lines else ""


def _outcome(entry: SuiteEntry, settings: dict[str, Any], rc: int | None,
             doc: dict[str, Any] | None, tail: str, progressed: bool, timed_out: bool,
             interrupted: bool, timeout: float | None) -> ModelOutcome:
    runs = [r for r in (doc or {}).get("runs", []) if isinstance(r, dict)]
    for r in runs:
        r["model"] = entry.name
    status, error = "", ""
    if interrupted:
        status, error = "interrupted", "stopped by Ctrl-C"
    elif timed_out:
        status, error = "timeout", f"still running after {timeout:g} s; killed"
    elif rc == -signal.SIGKILL:
        status, error = "OOM", "killed by SIGKILL (the kernel's out-of-memory killer sends it)"
    elif rc == 2:
        status, error = "model_fail_to_load", _error_line(tail)
    elif rc not in (0, None):
        died = f"signal {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() \
            else f"exit code {rc}"
        lowered = tail.lower()
        if "out of memory" in lowered or "memoryerror" in lowered:
            status = "OOM"
        else:
            status = "fail_to_compile" if runs or progressed else "model_fail_to_load"
        error = f"worker died ({died}): {_error_line(tail)}"
    if status:  # the strategies the child did not finish get the reason it stopped
        finished = {r.get("strategy") for r in runs if r.get("status") != "interrupted"}
        runs = [r for r in runs if r.get("strategy") in finished]
        for strategy in settings["strategy"]:
            if strategy not in finished:
                runs.append(_missing_run(entry.name, strategy, settings["mode"], status, error))
    statuses = [r.get("status", "pass") for r in runs]
    worst = [s for s in STATUSES if s in statuses]
    outcome = ModelOutcome(entry.name, entry.model, worst[0] if worst else "pass", settings,
                           runs, error or _run_errors(runs), rc, 0.0,
                           tail if (status or worst) else "")
    if doc:
        outcome.environment = doc.get("environment")
        outcome.dims = doc.get("dims") or {}
        outcome.warnings = [w for w in doc.get("warnings", []) if isinstance(w, str)]
    return outcome


def _run_errors(runs: list[dict[str, Any]]) -> str:
    return "; ".join(f"{r.get('strategy')}: {r['error']}" for r in runs if r.get("error"))


def _missing_run(name: str, strategy: str, mode: str, status: str, error: str) -> dict[str, Any]:
    from dyncli.bench.result import run_payload

    return run_payload(RunResult(name, strategy, mode, status=status, error=error))


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
            previous = _read_doc(Path(json_path))
            if previous is None:
                raise UsageError(f"--resume: {json_path} is not a JSON document",
                                 hint="Drop --resume to start the suite over")
    explicit = {k for k, origin in resolved.origins.items()
                if origin == "command line" or origin.startswith("environment")}
    base = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
    return run_suite(suite, base, explicit, previous=previous, hooks=hooks)

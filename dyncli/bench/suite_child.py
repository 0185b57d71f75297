"""One suite model in its own child process, and what its end means (see :mod:`.suite`).

:func:`run_model` starts the child (:mod:`dyncli.bench.suite_worker`) in its own process
group, streams its progress lines, keeps the tail of its stderr, kills the group past the
timeout, and turns how it ended into a :class:`ModelOutcome`: its runs, and statuses for the
strategies it did not finish.
"""

from __future__ import annotations

import json
import math
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
from dyncli.bench.suites import SuiteEntry
from dyncli.logparse.safe import loads

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
        """Rebuild a finished model from a suite document (for ``resume``).

        The file may have been edited or damaged: ``model`` and ``status`` must be strings
        (else ``ValueError``: the model runs again); other fields of the wrong type read as
        absent.
        """
        def typed(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = entry.get(key)
            return value if isinstance(value, kind) and not isinstance(value, bool) else default

        model, status = entry.get("model"), entry.get("status")
        if not isinstance(model, str) or not isinstance(status, str):
            raise ValueError("a models[] entry without a model name or status")
        wall = typed("wall_s", (int, float), 0.0)
        return cls(model, typed("source", str, model), status, typed("settings", dict, {}), runs,
                   typed("error", str, ""), typed("exit_code", int, None),
                   float(wall) if math.isfinite(wall) else 0.0, typed("stderr_tail", str, ""),
                   typed("environment", dict, None), typed("dims", dict, {}),
                   typed("warnings", list, []))


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
        outcome = _outcome(entry, settings, proc.returncode, read_doc(out), tail.text(),
                           tail.progressed, timed_out, interrupted, timeout)
        outcome.wall_s = time.monotonic() - t0
    if interrupted:
        raise KeyboardInterrupt(outcome)
    return outcome


def read_doc(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path`` (a child's result, or a suite document to resume); None
    when it is missing, over 256 MB, not JSON or not an object."""
    try:
        if path.stat().st_size > 256 << 20:  # a suite document is a few MB
            return None
        doc = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # safe.loads: deep nesting and huge ints are ValueErrors
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

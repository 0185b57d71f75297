"""One suite model in its own child process, and what its end means (see :mod:`.suite`).

:func:`run_model` starts the child (:mod:`dyncli.bench.suite_worker`) in its own process
group, streams its progress lines, keeps the tail of its stderr, kills the group past the
timeout, and turns how it ended into a :class:`ModelOutcome`: its runs, and statuses for the
strategies it did not finish.
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
from pathlib import Path
from typing import IO, Any

from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status, worst
from dyncli.bench.core.suite_result import ModelOutcome
from dyncli.bench.core.suites import SuiteEntry
from dyncli.bench.suite_worker import PROGRESS_PREFIX
from dyncli.logparse.safe import loads

TAIL_LINES = 20
TAIL_CHARS = 2000
_KILL_GRACE_S = 5.0


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
    child = None
    if doc is not None:
        try:
            child = BenchResult.from_dict(doc)
        except ValueError:
            child = None
    runs = child.runs if child else []
    for r in runs:
        r.model = entry.name
    status, error = None, ""
    if interrupted:
        status, error = Status.INTERRUPTED, "stopped by Ctrl-C"
    elif timed_out:
        status, error = Status.TIMEOUT, f"still running after {timeout:g} s; killed"
    elif rc == -signal.SIGKILL:
        status, error = Status.OOM, "killed by SIGKILL (the kernel's out-of-memory killer sends it)"
    elif rc == 2:
        status, error = Status.MODEL_FAIL_TO_LOAD, _error_line(tail)
    elif rc not in (0, None):
        died = f"signal {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() \
            else f"exit code {rc}"
        lowered = tail.lower()
        if "out of memory" in lowered or "memoryerror" in lowered:
            status = Status.OOM
        else:
            status = Status.FAIL_TO_COMPILE if runs or progressed else Status.MODEL_FAIL_TO_LOAD
        error = f"worker died ({died}): {_error_line(tail)}"
    if status:  # the strategies the child did not finish get the reason it stopped
        finished = {r.strategy for r in runs if r.status != Status.INTERRUPTED}
        runs = [r for r in runs if r.strategy in finished]
        for strategy in settings["strategy"]:
            if strategy not in finished:
                runs.append(RunResult(entry.name, strategy, settings["mode"], status=status,
                                      error=error))
    model_status = worst(r.status for r in runs)
    outcome = ModelOutcome(entry.name, entry.model, model_status, settings, runs,
                           error or _run_errors(runs), rc, 0.0,
                           tail if (status or model_status != Status.PASS) else "")
    if child:
        outcome.environment = child.environment
        outcome.dims = child.dims
        outcome.warnings = child.warnings
    return outcome


def _run_errors(runs: list[RunResult]) -> str:
    return "; ".join(f"{r.strategy}: {r.error}" for r in runs if r.error)

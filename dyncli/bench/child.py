"""The one way bench runs a benchmark in a child process: suites, restarts, a process per strategy.

:func:`run_child` writes a spec file (``{"model": NAME, "settings": {BenchConfig fields}}``),
starts ``python -c`` that runs :func:`dyncli.bench.worker.main` (by name: this module never
imports the worker, so the parent's modules and the child's entry point form no circle) in a
process group of its own, streams the child's progress lines, keeps the tail of its stderr,
stops the whole group (the child and inductor's compile workers: TERM, then KILL) past the
timeout or on Ctrl-C, and reads back the JSON document the child writes after every strategy.
:meth:`Ended.failure` says what a child's end means for the strategies it did not finish.

:func:`write_doc` and :func:`read_doc` are the protocol's files (atomic writes; bounded, safe
reads), also how ``--nproc`` reads its ranks back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status
from dyncli.logparse.safe import loads
from dyncli.output import write_json

# The child writes these lines to stderr; the parent recognises them to tell "the model was
# built and ran" from "it died first": ``PREFIX strategy done total``.
PROGRESS_PREFIX = "dyncli-child-progress"
TAIL_LINES = 20
TAIL_CHARS = 2000
MAX_DOC_BYTES = 256 << 20  # a suite document is a few MB
_KILL_GRACE_S = 5.0


def worker_command(spec: Path, out: Path) -> list[str]:
    """``python -c`` that imports this dyncli (the same checkout as the parent, always)."""
    root = str(Path(__file__).resolve().parents[2])
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from dyncli.bench.worker import main; sys.exit(main(sys.argv[2], sys.argv[3]))")
    return [sys.executable, "-c", code, root, str(spec), str(out)]


def progress_line(strategy: str, done: int, total: int) -> str:
    """The line a child writes to stderr after each variation."""
    return f"{PROGRESS_PREFIX} {strategy} {done} {total}\n"


def write_doc(path: str | Path, doc: Mapping[str, Any]) -> None:
    """``doc`` as JSON at ``path``, atomically (NaN written as null, as every document)."""
    write_json(path, dict(doc))


def read_doc(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path`` (a child's result, a rank's, or a suite document to resume);
    None when it is missing, over 256 MB, not JSON or not an object."""
    try:
        if path.stat().st_size > MAX_DOC_BYTES:
            return None
        doc = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # safe.loads: deep nesting and huge ints are ValueErrors
        return None
    return doc if isinstance(doc, dict) else None


class _Tail:
    """Reads a child's stderr on a thread: keeps the last lines, reports progress lines."""

    def __init__(self, stream: IO[str], on_progress: Callable[[str, int, int], None]) -> None:
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self.progressed = False
        self._stream, self._on_progress = stream, on_progress
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            if line.startswith(PROGRESS_PREFIX):
                self.progressed = True
                strategy, done, total = ([*line[len(PROGRESS_PREFIX):].split(), "", "0", "0"])[:3]
                if done.isdigit() and total.isdigit():
                    self._on_progress(strategy, int(done), int(total))
            else:
                self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        self._thread.join(timeout=2.0)
        return "\n".join(self.lines)[-TAIL_CHARS:]


def kill_group(proc: subprocess.Popen[str]) -> None:
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


@dataclass
class Ended:
    """How a child ended: its exit code, the document it wrote, its stderr tail."""

    returncode: int | None
    doc: dict[str, Any] | None
    tail: str
    progressed: bool  # it wrote a progress line: the model was built and ran
    timed_out: bool
    interrupted: bool
    timeout: float | None
    wall_s: float

    @property
    def result(self) -> BenchResult | None:
        """The child's document read back (None: none, or not a bench document)."""
        if self.doc is None:
            return None
        try:
            return BenchResult.from_dict(self.doc)
        except ValueError:
            return None

    @property
    def runs(self) -> list[RunResult]:
        """The runs the child wrote."""
        result = self.result
        return result.runs if result else []

    def error_line(self) -> str:
        """The child's ``Error:`` line, else its last stderr line."""
        lines = [ln for ln in self.tail.splitlines() if ln.strip()]
        for line in lines:
            if line.startswith("Error: "):
                return line[len("Error: "):]
        return lines[-1].strip()[:300] if lines else ""

    def failure(self) -> tuple[Status, str] | None:
        """The status and reason for the strategies the child did not finish; None: it ran.

        Ctrl-C: ``interrupted``; past the timeout: ``timeout``; SIGKILL (the kernel's
        out-of-memory killer sends it): ``OOM``; exit 2 (it could not run): ``model_fail_to_load``
        with the child's ``Error:`` line; any other death: ``OOM`` when the tail says so, else
        ``fail_to_compile`` once the model ran and ``model_fail_to_load`` before.
        """
        rc = self.returncode
        if self.interrupted:
            return Status.INTERRUPTED, "stopped by Ctrl-C"
        if self.timed_out:
            return Status.TIMEOUT, f"still running after {self.timeout:g} s; killed"
        if rc == -signal.SIGKILL:
            return Status.OOM, "killed by SIGKILL (the kernel's out-of-memory killer sends it)"
        if rc == 2:
            return Status.MODEL_FAIL_TO_LOAD, self.error_line()
        if rc in (0, None):
            return None
        died = f"signal {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals() \
            else f"exit code {rc}"
        lowered = self.tail.lower()
        if "out of memory" in lowered or "memoryerror" in lowered:
            status = Status.OOM
        else:
            status = Status.FAIL_TO_COMPILE if self.runs or self.progressed \
                else Status.MODEL_FAIL_TO_LOAD
        return status, f"worker died ({died}): {self.error_line()}"


def run_child(model: str, settings: Mapping[str, Any], *, timeout: float | None = None,
              env: Mapping[str, str] | None = None,
              on_progress: Callable[[str, int, int], None] | None = None) -> Ended:
    """Benchmark ``model`` with ``settings`` in a child process; how it ended, never raising
    for the child's sake (Ctrl-C stops the child and comes back as ``interrupted``)."""
    with tempfile.TemporaryDirectory(prefix="dyncli-child-") as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "result.json"
        write_doc(spec, {"model": model, "settings": dict(settings)})
        t0 = time.monotonic()
        proc = subprocess.Popen(worker_command(spec, out), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True,
                                env=dict(env) if env is not None else None)
        assert proc.stderr is not None
        tail = _Tail(proc.stderr, on_progress or (lambda _s, _d, _t: None))
        timed_out = interrupted = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
        except KeyboardInterrupt:
            interrupted = True
            kill_group(proc)
        return Ended(proc.returncode, read_doc(out), tail.text(), tail.progressed, timed_out,
                     interrupted, timeout, time.monotonic() - t0)

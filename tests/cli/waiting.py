"""Waiting for a child process to reach a state, rather than sleeping a guessed time (issue #34).

A test that signals a child must signal it *in* the state it tests: on a busy machine the
interpreter's own start-up can take seconds, and a SIGINT that lands before the child's
handlers exist tests nothing (a traceback from ``site``, status -2). Linux shows where a
sleeping process waits in ``/proc/PID/wchan`` (``anon_pipe_read``: reading a pipe;
``hrtimer_nanosleep``: in ``time.sleep``); :func:`wait_blocked` polls it.

A child must also start with Ctrl-C's default action: a shell runs a background job (``pytest
… &``, a CI step's ``&``) with SIGINT *ignored*, children inherit that, and Python keeps an
inherited SIG_IGN, so the signal a test sends would be dropped (diagnose then read to the end
of its input and exited 0). :func:`default_sigint` is the ``preexec_fn`` that restores it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# syscall numbers of read(2), for kernels that hide wchan (x86-64, aarch64)
_READ = {"x86_64": "0", "aarch64": "63"}


def default_sigint() -> None:
    """``preexec_fn``: the child starts with SIGINT's default action (not an inherited SIG_IGN)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def where(pid: int) -> str:
    """The kernel function process ``pid`` sleeps in ("" when running or unknown)."""
    try:
        wchan = Path(f"/proc/{pid}/wchan").read_text().strip()
    except OSError:
        return ""
    return "" if wchan == "0" else wchan


def _reading_stdin(pid: int) -> bool:
    import platform

    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == _READ.get(platform.machine()) and fields[1] == "0x0"


def wait_blocked(proc: subprocess.Popen[str], *waits: str, timeout: float = 180.0) -> None:
    """Return once ``proc`` sleeps in a kernel function whose name holds one of ``waits``
    ("pipe_read": reading a pipe); fail if it exits first or ``timeout`` passes."""
    if not sys.platform.startswith("linux"):
        pytest.skip("waits for a process state in /proc (Linux)")
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the child exited ({proc.returncode}) before it waited in {waits}")
        seen = where(proc.pid)
        if any(w in seen for w in waits) or ("pipe_read" in waits and not seen
                                             and _reading_stdin(proc.pid)):
            return
        time.sleep(0.02)
    pytest.fail(f"the child did not wait in {waits} within {timeout:.0f} s (last: {seen!r})")

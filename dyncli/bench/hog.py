"""A bounded CPU hog that toggles on and off: load that changes during a benchmark, on demand.

For the test and ``benchmarks/bench_window.py`` (issue #18): bench's decision must not depend
on when each strategy ran, so they bench once quiet and once beside this. Each worker is a
child process that busy-loops ``on_s`` seconds, sleeps ``off_s``, and repeats; it ends by
itself after ``limit_s`` seconds in all, or as soon as its parent is gone, so a crashed test
never leaves it spinning. :meth:`Hog.stop` (or leaving the ``with`` block) ends the workers by
their own pids.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import TracebackType

_CODE = r"""
import os, sys, time
on, off, limit, parent = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
end = time.monotonic() + limit
x = 0
while time.monotonic() < end and os.getppid() == parent:
    stop = min(end, time.monotonic() + on)
    while time.monotonic() < stop:
        for _ in range(20000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    stop = min(end, time.monotonic() + off)
    while time.monotonic() < stop and os.getppid() == parent:
        time.sleep(min(0.1, max(0.0, stop - time.monotonic())))
"""


class Hog:
    """``workers`` child processes, each busy ``on_s`` / idle ``off_s``, for at most ``limit_s``."""

    def __init__(self, on_s: float = 4.0, off_s: float = 4.0, limit_s: float = 600.0,
                 workers: int = 1) -> None:
        if not (on_s > 0 and off_s >= 0 and 0 < limit_s <= 3600 and 1 <= workers <= 64):
            raise ValueError("Hog: on_s > 0, off_s >= 0, 0 < limit_s <= 3600, 1 <= workers <= 64")
        self.on_s, self.off_s, self.limit_s, self.workers = on_s, off_s, limit_s, workers
        self.procs: list[subprocess.Popen[bytes]] = []
        self.started: float | None = None

    def start(self) -> Hog:
        """Start the workers (all at once, so they are on and off together)."""
        args = [str(self.on_s), str(self.off_s), str(self.limit_s), str(os.getpid())]
        for _ in range(self.workers):
            self.procs.append(subprocess.Popen([sys.executable, "-c", _CODE, *args],
                                               stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        self.started = time.monotonic()
        return self

    @property
    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [p.pid for p in self.procs]

    def running(self) -> bool:
        """Whether any worker is still alive."""
        return any(p.poll() is None for p in self.procs)

    def stop(self, grace_s: float = 2.0) -> None:
        """End every worker: SIGTERM, then SIGKILL after ``grace_s``; reap them."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + grace_s
        for p in self.procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def __enter__(self) -> Hog:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

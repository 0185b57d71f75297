"""CPU seconds per test and per test file of a pytest run: where CI's time goes.

CI is bound by CPU on two cores (docs/torch-versions.md), so the question for a shorter run is
which tests use the CPU, not which take the longest wall time: beside other work a test's wall
time says little. This module is both a pytest plugin and its summary.

As a plugin (``-p pytest_cpu`` with this folder on PYTHONPATH; under xdist each worker writes
its own file) it records, for each test, the CPU seconds (user + system) of the pytest process,
of the child processes it waited for (``getrusage`` of self and children) and of those still
running (``/proc``: each live descendant's own CPU and that of the children it waited for),
before and after the test's setup, call and teardown, and the wall seconds::

    PYTEST_CPU_OUT=/tmp/cpu PYTHONPATH=.:benchmarks .venv/bin/python -m pytest -p pytest_cpu \\
        -n auto --dist loadfile tests/integration/test_bench_stream.py

Then ``python benchmarks/pytest_cpu.py /tmp/cpu [N]`` prints the N costliest files and tests
(default 15). A child that outlives its test is counted in the tests that ran while it worked:
the fix tests' zygote (tests/integration/logged.py, a Python that imported torch, reaped at
exit) in the test that started it, each program forked from it in the test that ran it (the
zygote waits for its forks, so their CPU is the zygote's children's), a compile-worker pool
likewise. Before round 28 only reaped children counted: the zygote and every fork of it were in
no test (the fix tests read 2-6 CPU-s low each). Without /proc (not Linux), reaped children
only. The machine's own counters (/proc/stat) are the whole run's.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import time
from collections import Counter
from typing import Any

ENV = "PYTEST_CPU_OUT"
_rows: list[tuple[str, float, float]] = []


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _children(pid: int) -> list[int]:
    """The live children of ``pid`` (every thread's), from /proc; none where it cannot say."""
    out: list[int] = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path, encoding="ascii") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:  # the thread ended
            continue
    return out


def _live_cpu(pid: int) -> float:
    """CPU seconds of ``pid``'s live descendants: each one's own and that of the children it
    waited for (utime, stime, cutime, cstime of /proc/PID/stat). A child that has ended is in
    its parent's cutime once waited for, in this process's RUSAGE_CHILDREN if ours: counted
    once, here or there (a zombie's /proc entry still holds its times)."""
    ticks = 0
    todo = _children(pid)
    while todo:
        child = todo.pop()
        try:
            with open(f"/proc/{child}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # ended and reaped meanwhile
            continue
        ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        todo += _children(child)
    return ticks / _TICK


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + _live_cpu(os.getpid())


try:
    import pytest
except ImportError:  # the summary needs no pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
        cpu, wall = _cpu(), time.perf_counter()
        yield
        _rows.append((item.nodeid, _cpu() - cpu, time.perf_counter() - wall))

    def pytest_sessionfinish(session: Any) -> None:
        out = os.environ.get(ENV)
        if out and _rows:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            with open(f"{out}.{worker}.json", "w", encoding="utf-8") as f:
                json.dump({"rows": _rows}, f)


def summary(prefix: str, top: int = 15) -> str:
    """The costliest files and tests of the run written under ``prefix``."""
    files: Counter[str] = Counter()
    tests: list[tuple[float, float, str]] = []
    for path in sorted(glob.glob(f"{glob.escape(prefix)}.*.json")):
        with open(path, encoding="utf-8") as f:
            for nodeid, cpu, wall in json.load(f)["rows"]:
                files[nodeid.split("::")[0]] += cpu
                tests.append((cpu, wall, nodeid))
    if not tests:
        raise SystemExit(f"{prefix}: no {prefix}.*.json written (was {ENV} set for the run?)")
    lines = [f"{sum(files.values()):.0f} CPU-s in {len(tests)} tests; by file:"]
    lines += [f"{cpu:8.1f}  {name}" for name, cpu in files.most_common(top)]
    lines.append("by test (CPU-s, wall s):")
    lines += [f"{cpu:8.1f} {wall:7.1f}  {nodeid}" for cpu, wall, nodeid in
              sorted(tests, reverse=True)[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: python benchmarks/pytest_cpu.py PREFIX [N]")
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 15))

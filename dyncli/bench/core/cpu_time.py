"""Wall and CPU seconds of a compile: this process and inductor's compile workers. No torch.

A compile's wall time on a busy machine is stretched by every other process that wants the
cores; its CPU time is what the compile itself burned and moves far less with load. Inductor
compiles in this process (dynamo, AOT, lowering: Python) and in worker processes (C++ / Triton
codegen; ``torch._inductor.compile_worker``, a pool that outlives each compile and whose own
pool forks grandchildren). So CPU time here is:

* this process, every thread (``RUSAGE_SELF``), plus waited-for children (``RUSAGE_CHILDREN``:
  only children that exited and were reaped);
* every live descendant, from ``/proc/<pid>/stat`` (utime + stime + cutime + cstime, in clock
  ticks): the worker pool is alive between compiles, so getrusage never sees it. No psutil.

What the cost model charges, :attr:`CompileCost.charged_s`, is ``min(wall, cpu)``:

* quiet machine, compile workers in parallel: CPU exceeds wall, and wall is what the stream
  waits — charge wall;
* busy machine: wall exceeds CPU by the time spent waiting for a core, which is the load, not
  the compile — charge CPU, which a load cannot inflate.

A compile whose wall exceeds its CPU by :data:`DIVERGE` (and 0.1 s) is flagged: it waited
for the CPU (or for I/O), and its wall time says more about the machine than the strategy.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

DIVERGE = 1.5
MAX_PIDS = 65536  # bound on /proc entries scanned


def _tick() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0


def _stat(pid: int, proc: str) -> tuple[int, float] | None:
    """(ppid, utime+stime+cutime+cstime in ticks) of a process, None if it is gone."""
    try:
        with open(f"{proc}/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'
    tail = text.rpartition(")")[2].split()
    try:
        return int(tail[1]), float(sum(int(x) for x in tail[11:15]))
    except (IndexError, ValueError):
        return None


def descendants_cpu_s(pid: int | None = None, proc: str = "/proc") -> float:
    """CPU seconds (with their reaped children) of every live descendant of ``pid``."""
    pid = os.getpid() if pid is None else pid
    try:
        names = os.listdir(proc)
    except OSError:
        return 0.0
    parent: dict[int, int] = {}
    ticks: dict[int, float] = {}
    for name in names[:MAX_PIDS]:
        if not name.isdigit():
            continue
        got = _stat(int(name), proc)
        if got is not None:
            parent[int(name)], ticks[int(name)] = got
    children: dict[int, list[int]] = {}
    for p, pp in parent.items():
        children.setdefault(pp, []).append(p)
    total, todo, seen = 0.0, list(children.get(pid, [])), set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += ticks.get(p, 0.0)
        todo.extend(children.get(p, []))
    return total / _tick()


@dataclass(frozen=True)
class CpuSnapshot:
    """Wall clock and CPU seconds at one moment."""

    wall: float
    self_cpu: float
    workers_cpu: float  # reaped children + live descendants

    @classmethod
    def now(cls) -> CpuSnapshot:
        """Read the clocks."""
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(time.perf_counter(), me.ru_utime + me.ru_stime,
                   kids.ru_utime + kids.ru_stime + descendants_cpu_s())


@dataclass
class CompileCost:
    """One compile's wall and CPU seconds, and what the cost model charges."""

    wall_s: float = 0.0
    self_cpu_s: float = 0.0
    workers_cpu_s: float = 0.0

    @property
    def cpu_s(self) -> float:
        """This process plus the compile workers."""
        return self.self_cpu_s + self.workers_cpu_s

    @property
    def charged_s(self) -> float:
        """``min(wall, cpu)``: wall on a quiet machine, CPU where waiting for a core padded it."""
        return min(self.wall_s, self.cpu_s) if self.cpu_s > 0 else self.wall_s

    @property
    def diverges(self) -> bool:
        """Wall well above CPU: the compile waited for the machine."""
        return self.wall_s > DIVERGE * self.cpu_s + 0.1

    def add(self, other: CompileCost) -> None:
        """Accumulate another measurement (e.g. the worker-pool wait after a compile)."""
        self.wall_s += other.wall_s
        self.self_cpu_s += other.self_cpu_s
        self.workers_cpu_s += other.workers_cpu_s

    @classmethod
    def between(cls, a: CpuSnapshot, b: CpuSnapshot) -> CompileCost:
        """The cost between two snapshots (negative drifts, e.g. a worker gone, clamp to 0)."""
        return cls(max(0.0, b.wall - a.wall), max(0.0, b.self_cpu - a.self_cpu),
                   max(0.0, b.workers_cpu - a.workers_cpu))

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of one compile's cost."""
        return {"wall_s": self.wall_s, "cpu_s": self.cpu_s, "self_cpu_s": self.self_cpu_s,
                "workers_cpu_s": self.workers_cpu_s, "charged_s": self.charged_s,
                "diverges": self.diverges}


@contextmanager
def measure() -> Iterator[CompileCost]:
    """Measure the block's wall and CPU seconds into the yielded :class:`CompileCost`."""
    cost = CompileCost()
    a = CpuSnapshot.now()
    try:
        yield cost
    finally:
        got = CompileCost.between(a, CpuSnapshot.now())
        cost.wall_s, cost.self_cpu_s, cost.workers_cpu_s = (got.wall_s, got.self_cpu_s,
                                                            got.workers_cpu_s)

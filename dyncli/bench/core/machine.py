"""How busy the machine was while bench measured, and pyperf-like "unstable run" warnings.

Pure readers of ``/proc`` (Linux; elsewhere every figure is None) and pure checks. Three
signals, each cheap and independent of the others:

* the load average (``/proc/loadavg``): runnable tasks within spans of the run (the minute
  before each span taken out of the kernel's decaying average), less this process's own CPU
  rate over the span: bench's own threads are in the load average too, and on two cores they
  alone held it at 1.6-1.9;
* CPU time of the whole machine (``/proc/stat``'s ``cpu`` line) less this process's own
  (and its children's): the share of the cores that *other* processes used, and the share the
  hypervisor stole (``steal``);
* the drift of eager's latency for one fixed shape across the run: the only signal that also
  sees a GPU's clocks and neighbours. Eager is timed in every window, so it is free.

pyperf warns when a result "may be unstable": a standard deviation above 10 % of the mean, a
maximum 50 % above it or a minimum 50 % below it. :func:`sample_warnings` applies the same
checks to a set of samples; :func:`load_warnings` words the three signals above.
"""

from __future__ import annotations

import math
import os
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DRIFT = 1.25  # eager's window medians max/min above this: the load changed during the run
BUSY = 0.25  # other processes used more than this share of the cores
BUSY_LOAD = 1.0  # the load average less this run's own exceeds a core's worth of other work


@dataclass(frozen=True)
class CpuTimes:
    """Machine-wide jiffies from ``/proc/stat``: all, idle (with iowait) and stolen."""

    total: float
    idle: float
    steal: float


def read_loadavg(path: str = "/proc/loadavg") -> float | None:
    """The 1-minute load average, None where it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            return float(fh.read(128).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_cpu_times(path: str = "/proc/stat") -> CpuTimes | None:
    """The aggregate ``cpu`` line, in seconds; None where it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            line = fh.readline(4096)
        parts = line.split()
        if not parts or parts[0] != "cpu":
            return None
        v = [float(x) for x in parts[1:11]]
    except (OSError, ValueError):
        return None
    v += [0.0] * (10 - len(v))
    # user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user
    tick = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
    total = sum(v[:8])
    return CpuTimes(total / tick, (v[3] + v[4]) / tick, v[7] / tick)


def own_cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (user + system)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@dataclass
class Reading:
    """One look at the machine."""

    wall: float
    load: float | None
    cpu: CpuTimes | None
    own_cpu: float
    label: str = ""


LOAD_WINDOW_S = 60.0  # the 1-minute load average's time constant
LOAD_SPAN_S = 30.0  # the shortest span between readings the load average is read over


def others_load(readings: Sequence[Reading]) -> tuple[float, float] | None:
    """Others' load during the run, and this run's own: (others, own) over the busiest span.

    The load average is a minute-long decaying average of runnable tasks (the kernel samples
    them every 5 s), so a reading also holds the minute before it: work that ended as the run
    began, and the run's own startup. Over a span of at least ``LOAD_SPAN_S`` between two
    readings, the average number of runnable tasks *within* the span is
    ``(L_end - L_start * d) / (1 - d)`` with ``d = exp(-span / 60)``; this run's own share of it
    is its CPU rate over the span (its threads and reaped children), and the rest is others'.
    The span where others' was highest is kept. None when no span is long enough.
    """
    loaded = [r for r in readings if r.load is not None]
    best: tuple[float, float] | None = None
    start = 0
    for end in range(1, len(loaded)):
        a, b = loaded[start], loaded[end]
        span = b.wall - a.wall
        if span < LOAD_SPAN_S:
            continue
        assert a.load is not None and b.load is not None
        d = math.exp(-span / LOAD_WINDOW_S)
        runnable = (b.load - a.load * d) / (1 - d)
        own = max(0.0, (b.own_cpu - a.own_cpu) / span)
        pair = (max(0.0, runnable - own), own)
        best = pair if best is None else max(best, pair)
        start = end
    return best


@dataclass
class LoadLog:
    """Readings taken during a run (:meth:`read` at each window) and what they add up to."""

    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    readings: list[Reading] = field(default_factory=list)

    def read(self, label: str = "", extra_own_cpu: float = 0.0) -> Reading:
        """Take a reading now (``extra_own_cpu``: CPU of our live workers, not yet reaped)."""
        r = Reading(time.perf_counter(), read_loadavg(), read_cpu_times(),
                    own_cpu_s() + extra_own_cpu, label)
        self.readings.append(r)
        return r

    def summary(self) -> dict[str, Any]:
        """``load``: the figures of the JSON (None where unknown)."""
        loads = [r.load for r in self.readings if r.load is not None]
        out: dict[str, Any] = {"cores": self.cores, "readings": len(self.readings),
                               "load_min": min(loads) if loads else None,
                               "load_max": max(loads) if loads else None,
                               "own_load": None, "others_load": None,
                               "others_cpu_share": None, "steal_share": None}
        # bench's own threads are runnable tasks in the load average too (on two cores the
        # quickstart alone held it at 1.6-1.9): "busy" by load is others' share of it
        pair = others_load(self.readings)
        if pair is not None:
            out["others_load"], out["own_load"] = pair
        timed = [r for r in self.readings if r.cpu is not None]
        if len(timed) >= 2:
            a, b = timed[0], timed[-1]
            assert a.cpu is not None and b.cpu is not None
            total = b.cpu.total - a.cpu.total
            if total > 0:
                busy = total - (b.cpu.idle - a.cpu.idle) - (b.cpu.steal - a.cpu.steal)
                ours = b.own_cpu - a.own_cpu
                out["others_cpu_share"] = max(0.0, min(1.0, (busy - ours) / total))
                out["steal_share"] = max(0.0, (b.cpu.steal - a.cpu.steal) / total)
        return out


def drift(window_medians: Sequence[float]) -> float | None:
    """max / min of eager's per-window medians for one shape (None under two windows)."""
    clean = [m for m in window_medians if m > 0 and math.isfinite(m)]
    if len(clean) < 2:
        return None
    return max(clean) / min(clean)


def sample_warnings(samples: Sequence[float], what: str) -> list[str]:
    """pyperf's stability checks on one set of samples, as sentences naming ``what``."""
    clean = [s for s in samples if math.isfinite(s)]
    if len(clean) < 2:
        return []
    mean = statistics.fmean(clean)
    if mean <= 0:
        return []
    out = []
    sd = statistics.stdev(clean)
    if sd > 0.10 * mean:
        out.append(f"{what}: the standard deviation ({sd:.3g} ms) is {sd / mean:.0%} of the "
                   f"mean ({mean:.3g} ms)")
    if max(clean) >= 1.5 * mean:
        out.append(f"{what}: the maximum ({max(clean):.3g} ms) is "
                   f"{max(clean) / mean - 1:.0%} greater than the mean ({mean:.3g} ms)")
    if min(clean) <= 0.5 * mean:
        out.append(f"{what}: the minimum ({min(clean):.3g} ms) is "
                   f"{1 - min(clean) / mean:.0%} smaller than the mean ({mean:.3g} ms)")
    return out


SKEW = 1.5  # a shape's mean this far above its median: a few samples decide its price


def skew_warning(cases: Sequence[tuple[str, Sequence[float]]]) -> str | None:
    """One sentence naming the sample sets (``(what, samples)``) whose mean is ``SKEW`` times
    their median or more; None when none is. The stream's cost prices a shape at the mean of
    its samples (the tail a stream pays), so one stall decides it at a small ``--repeat``.
    Round 35: a one-layer BART, ``--repeat 3``, eager at batch 1 seq 12 read 89.69, 4.64 and
    5.42 ms (load 0.6-1.8): eager was priced 9.97 ms a request and 199.44 s for 20000 requests,
    and its replay took 70.73 s. Only the stream's most frequent shape was checked for
    stability, and this was another."""
    said = []
    for what, samples in cases:
        clean = [x for x in samples if math.isfinite(x)]
        if len(clean) < 2:
            continue
        mean, median = statistics.fmean(clean), statistics.median(clean)
        if median > 0 and mean >= SKEW * median:
            said.append(f"{what} (mean {mean:.3g} ms, median {median:.3g} ms, slowest "
                        f"{max(clean):.3g} ms)")
    if not said:
        return None
    more = f" and {len(said) - 3} more" if len(said) > 3 else ""
    return ("the stream's cost prices each shape at the mean of its samples, and a few slow "
            "samples decide it for " + "; ".join(said[:3]) + more
            + ": a larger --repeat dilutes them")


def load_warnings(summary: dict[str, Any], eager_drift: float | None,
                  drift_shape: str = "") -> list[str]:
    """One warning per signal that says the machine was busy or changed during the run."""
    out: list[str] = []
    cores = summary.get("cores") or 1
    lo, hi = summary.get("load_min"), summary.get("load_max")
    own = summary.get("own_load")  # (set with others_load, from spans of 30 s or more)
    if hi is not None and lo is not None:
        said = f"the machine was busy: load average {lo:.1f}-{hi:.1f} on {cores} cores"
        if own is None:  # no span long enough: the cores are the bar
            if hi > cores:
                out.append(said)
        elif summary["others_load"] > BUSY_LOAD:  # bench's own threads are runnable tasks too
            out.append(f"{said}, this run's own work about {own:.1f} of it")
    others = summary.get("others_cpu_share")
    if others is not None and others > BUSY:
        out.append(f"other processes used {others:.0%} of the CPU time during the run")
    steal = summary.get("steal_share")
    if steal is not None and steal > 0.05:
        out.append(f"the hypervisor stole {steal:.0%} of the CPU time")
    if eager_drift is not None and eager_drift > DRIFT:
        shape = f" ({drift_shape})" if drift_shape else ""
        out.append(f"eager's latency for one shape{shape} moved {eager_drift:.2g}x across the "
                   "run: absolute times are not comparable between moments; the decision "
                   "compares strategies within each window")
    return out


def combine(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several processes' ``load`` summaries as one (strategies measured a process each): the
    extremes of the load, the largest share other processes took, every eager probe in order
    and their drift across the processes."""
    def values(key: str) -> list[float]:
        return [v for s in summaries if isinstance(v := s.get(key), (int, float))
                and not isinstance(v, bool)]

    lows, highs, others = values("load_min"), values("load_max"), values("others_cpu_share")
    # each process's own load goes with its own readings: the busiest process's pair is kept
    pairs = [(s["others_load"], s["own_load"]) for s in summaries
             if isinstance(s.get("others_load"), (int, float))
             and isinstance(s.get("own_load"), (int, float))]
    others_load, own_load = max(pairs) if pairs else (None, None)
    steal = values("steal_share")
    probes = [float(p) for s in summaries if isinstance(s.get("eager_probe_ms"), list)
              for p in s["eager_probe_ms"] if isinstance(p, (int, float))]
    cores = values("cores")
    return {"cores": int(max(cores)) if cores else None,
            "readings": int(sum(values("readings"))),
            "load_min": min(lows) if lows else None, "load_max": max(highs) if highs else None,
            "own_load": own_load, "others_load": others_load,
            "others_cpu_share": max(others) if others else None,
            "steal_share": max(steal) if steal else None,
            "eager_probe_ms": probes, "eager_drift": drift(probes), "processes": len(summaries)}


UNSTABLE = "the benchmark result may be unstable"

"""Every INTERVAL seconds: the machine's busy cores and the processes that used the most CPU.

A process of its own (no thread inside a measured process), for benchmarks/gpu_round.sh: on the
H200 every timing of a launch-bound model (resnet18 eager at batch 16, resnet50 at 25-32) ran
~1.5x slower for seconds at a time, and whether another process (inductor's compile workers,
a child of ours) was busy then is what this log says, beside nvidia-smi's clock log.

    python benchmarks/cpu_sampler.py OUT.csv [--interval 0.25] [--top 3]

One CSV line per sample: unix time, busy cores (all cores' user+system+irq over the interval,
in cores), then ``pid:name:cores`` for the top processes. Runs until killed. Linux (/proc) only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as fh:
        v = [float(x) for x in fh.readline().split()[1:9]]
    return sum(v) - v[3] - v[4] - v[7], sum(v)


def procs() -> dict[int, tuple[str, float]]:
    """pid -> (name, utime + stime jiffies) for every readable process."""
    out: dict[int, tuple[str, float]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as fh:
                text = fh.read(4096)
        except OSError:
            continue
        lp, rp = text.find("("), text.rfind(")")
        fields = text[rp + 2:].split()
        if lp < 0 or rp < 0 or len(fields) < 13:
            continue
        out[int(name)] = (text[lp + 1:rp], float(fields[11]) + float(fields[12]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--interval", type=float, default=0.25)
    p.add_argument("--top", type=int, default=3)
    a = p.parse_args(argv)
    with open(a.out, "w", buffering=1, encoding="utf-8") as fh:
        busy0, total0 = cpu_busy()
        seen = procs()
        cores = os.cpu_count() or 1
        while True:
            time.sleep(a.interval)
            busy1, total1 = cpu_busy()
            now = procs()
            span = (total1 - total0) / cores  # jiffies per core in the interval
            deltas = sorted(((t - seen.get(pid, (n, t))[1], pid, n)
                             for pid, (n, t) in now.items()), reverse=True)[:a.top]
            tops = " ".join(f"{pid}:{n.replace(' ', '_')}:{d / span:.2f}"
                            for d, pid, n in deltas if d > 0 and span > 0)
            fh.write(f"{time.time():.2f},{(busy1 - busy0) / span if span else 0:.2f},{tops}\n")
            busy0, total0, seen = busy1, total1, now
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does bench's "the machine was busy" by load average say what others did during the run?

bench's own threads are runnable tasks in the load average, and the average decays over a
minute, so a reading also holds work that ended before the run began. This runs what a bench
timing phase does to the CPU (torch matmuls on every intra-op thread, a load reading every
``--every`` seconds, as bench reads one per window) for ``--seconds`` under four conditions,
and prints for each what :mod:`dyncli.bench.core.machine` makes of the readings, with the
old rule (before round 29: the load average above the cores) beside the new one:

* ``quiet``: nothing else started;
* ``after``: a CPU hog (a busy worker per core) runs for ``--seconds`` and ends just before;
* ``hog1``: one busy worker beside the run;
* ``hog``: a busy worker per core beside the run.

    python benchmarks/load_signal.py [--seconds 90] [--every 5] [--conditions quiet,after,hog1,hog]

The machine's own other work counts as others' (it is): run it when nothing else does, or say
what did.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dyncli.bench.core import machine  # noqa: E402
from dyncli.bench.hog import Hog  # noqa: E402


def work(seconds: float, every: float) -> machine.LoadLog:
    """Matmuls on torch's intra-op threads for ``seconds``, a load reading every ``every``."""
    import torch

    a = torch.randn(384, 384)
    log = machine.LoadLog()
    log.read("start")
    end = time.perf_counter() + seconds
    next_read = time.perf_counter() + every
    while time.perf_counter() < end:
        for _ in range(20):
            a = torch.tanh(a @ a)
        if time.perf_counter() >= next_read:
            log.read()
            next_read += every
    log.read("end")
    return log


def verdicts(s: dict[str, object], cores: int) -> tuple[bool, bool]:
    """(old rule, new rule): did each say the machine was busy by load?"""
    hi = s["load_max"]
    old = isinstance(hi, float) and hi > cores
    new = any(t.startswith("the machine was busy") for t in machine.load_warnings(s, None))
    return old, new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--conditions", default="quiet,after,hog1,hog")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    import torch

    print(f"{cores} cores, torch {torch.__version__}, {torch.get_num_threads()} intra-op "
          f"threads, {args.seconds:.0f} s per condition, a reading every {args.every:.0f} s")
    print(f"{'condition':<9} {'load':>9} {'own':>5} {'others':>6} {'cpu share':>9}  "
          f"{'old: busy':>9} {'new: busy':>9}")
    for cond in args.conditions.split(","):
        if cond == "after":
            with Hog(on_s=5.0, off_s=0.0, limit_s=args.seconds + 30, workers=cores):
                time.sleep(args.seconds)
        hog = {"hog1": 1, "hog": cores}.get(cond)
        if hog:
            with Hog(on_s=5.0, off_s=0.0, limit_s=args.seconds + 30, workers=hog):
                log = work(args.seconds, args.every)
        else:
            log = work(args.seconds, args.every)
        s = log.summary()
        old, new = verdicts(s, cores)
        share = s["others_cpu_share"]
        print(f"{cond:<9} {s['load_min']:>4.1f}-{s['load_max']:<4.1f} "
              f"{s['own_load'] or 0:>5.2f} {s['others_load'] or 0:>6.2f} "
              f"{(share or 0):>9.0%}  {old!s:>9} {new!s:>9}", flush=True)
        time.sleep(5)


if __name__ == "__main__":
    main()

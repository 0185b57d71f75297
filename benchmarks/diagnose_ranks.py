"""Benchmark: dyncli diagnose on a TORCH_TRACE dir of 64 rank files, serial vs --jobs N.

Builds ``--ranks`` files (default 64) of ``--rank-mb`` MB each (default 4) under /tmp, named
as torch names per-rank traces (``dedicated_log_torch_trace_rank_<r>_<id>.log``), each the
captured traces of tests/data/traces repeated (rank r starts at a different trace, so the
files differ). Never committed. Then runs ``dyncli diagnose DIR --jobs J --json OUT`` for
J = 1 (serial, streaming) and each ``--jobs`` value, each as its own child process, and
reports wall time and peak memory: the peak of the summed RSS of the whole process tree
(the CLI and its workers, sampled every 10 ms from /proc) and the largest single process
(``ru_maxrss``), and the CPU seconds of the tree. The load average is printed too: on a
shared machine the other processes decide how much of ``--jobs`` N can run at once. The JSON
documents of every run must be identical.

Usage (from the repo root)::

    .venv/bin/python benchmarks/diagnose_ranks.py
    .venv/bin/python benchmarks/diagnose_ranks.py --ranks 64 --rank-mb 4 --jobs 2,4 --repeat 3

Numbers go into docs/diagnose-trace.md ("distributed").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "data" / "traces"
WORK = Path("/tmp/dyncli-bench-ranks")


def build(ranks: int, rank_mb: float) -> Path:
    """``ranks`` rank files of ``rank_mb`` MB each (rebuilt only when the recipe changed)."""
    sources = sorted(p for p in TRACES.glob("*/dedicated_log_torch_trace_*.log") if "rank_" not in p.name)
    if not sources:
        raise SystemExit(f"no traces under {TRACES}")
    out = WORK / f"{ranks}x{rank_mb:g}mb"
    if out.is_dir() and len(list(out.iterdir())) == ranks:
        return out
    out.mkdir(parents=True, exist_ok=True)
    blobs = [p.read_bytes() for p in sources]
    for rank in range(ranks):
        order = blobs[rank % len(blobs):] + blobs[:rank % len(blobs)]
        with (out / f"dedicated_log_torch_trace_rank_{rank}_b{rank:04d}.log").open("wb") as fh:
            written, i = 0, 0
            while written < rank_mb * 2**20:
                fh.write(order[i % len(order)])
                written += len(order[i % len(order)])
                i += 1
    return out


def _tree_rss(root: int) -> int:
    """Summed RSS (bytes) of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1] is the ppid
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")  # field 24 of stat: rss pages
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def measure(argv: list[str]) -> dict[str, float]:
    """Wall seconds, peak tree RSS and largest-process RSS (MiB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err[-500:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "tree_peak_mib": peak[0] / 2**20, "max_process_mib": usage.ru_maxrss / 1024}


def main() -> int:
    """Build the rank files, run serial and parallel ``--repeat`` times, print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rank-mb", type=float, default=4.0)
    parser.add_argument("--jobs", default=str(len(os.sched_getaffinity(0))),
                        help="comma list of --jobs values to compare with 1 (default: the cores)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (median reported)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    directory = build(args.ranks, args.rank_mb)
    size = sum(p.stat().st_size for p in directory.iterdir()) / 2**20
    print(f"{directory}: {args.ranks} rank files, {size:.0f} MiB, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    results, documents = {}, {}
    for jobs in [1, *(int(j) for j in args.jobs.split(",") if int(j) != 1)]:
        out = WORK / f"diagnosis_j{jobs}.json"
        argv = [sys.executable, "-m", "dyncli", "diagnose", str(directory), "--jobs", str(jobs),
                "--json", str(out)]
        runs = sorted((measure(argv) for _ in range(args.repeat)), key=lambda r: r["wall_s"])
        mid = runs[len(runs) // 2]
        documents[jobs] = out.read_bytes()
        results[f"jobs={jobs}"] = {k: round(v, 2) for k, v in mid.items()}
        print(f"--jobs {jobs:<3d} {mid['wall_s']:7.2f} s  {size / mid['wall_s']:6.1f} MiB/s  "
              f"cpu {mid['cpu_s']:6.2f} s  "
              f"peak RSS (all processes) {mid['tree_peak_mib']:7.1f} MiB  "
              f"largest process {mid['max_process_mib']:7.1f} MiB", flush=True)
    same = len(set(documents.values())) == 1
    print("JSON identical across --jobs:", same, f"(load average now {os.getloadavg()[0]:.1f})")
    if args.json:
        args.json.write_text(json.dumps({"ranks": args.ranks, "size_mib": round(size, 1),
                                         "cores": os.cpu_count(), "identical": same,
                                         "results": results}, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

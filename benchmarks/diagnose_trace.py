"""Benchmark: dyncli diagnose vs tlparse on one big TORCH_TRACE file, in one run.

Builds a trace of at least ``--size-mb`` MB (default 500) under /tmp by repeating the real
traces in tests/data/traces (never committed), then runs, one after the other, each as its
own child process measured with ``os.wait4`` (wall time, and peak RSS: the largest of that
child and of the processes it waited for, e.g. dyncli's parsing child):

1. a bare Python loop that only reads the file's lines (the I/O floor),
2. ``dyncli diagnose FILE --json OUT`` (the whole CLI: parse, analyze, render JSON), with
   its default ``--jobs``, then with ``--jobs 1`` (one process) and ``--jobs 2`` (the parsing
   child, whatever the load),
3. ``tlparse FILE -o DIR --overwrite --no-browser`` (tlparse 0.4.x, Rust).

Usage (from the repo root)::

    .venv/bin/python benchmarks/diagnose_trace.py                 # 500 MB
    .venv/bin/python benchmarks/diagnose_trace.py --size-mb 100 --repeat 3

Numbers go into docs/diagnose-trace.md. Each copy of the captured traces starts its compile
ids again, which dyncli reads as a new reset generation (as after ``torch._dynamo.reset()``):
the file describes ~8.5 compiles per MB, and per-compile state grows with it. dyncli runs
with its default ``--jobs`` (the cores): a file this big is parsed in a child process while
the CLI's process analyzes (``dyncli.diagnose.trace_pipe``); ``--jobs 1`` is the
one-process row. Record ``/proc/loadavg`` beside every figure: on shared cores the
ratio to tlparse moves with the load.

dyncli's modules are byte-compiled first (``compileall``), as ``pip install`` does: with
``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` (a fresh checkout or worktree), every run
would compile them again (~0.08 s of each dyncli run, measured), which no installed copy pays.
The load average is printed before and after the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "data" / "traces"
WORK = Path("/tmp/dyncli-bench-trace")
READ_LOOP = "import sys\nn=0\nwith open(sys.argv[1],'rb') as f:\n    for line in f: n+=1\nprint(n)"


def build(size_mb: int) -> Path:
    """Concatenate the captured single-process traces until the file has ``size_mb`` MB."""
    sources = sorted(p for p in TRACES.glob("*/dedicated_log_torch_trace_*.log") if "rank_" not in p.name)
    if not sources:
        raise SystemExit(f"no traces under {TRACES}")
    blob = b"".join(p.read_bytes() for p in sources)
    target = WORK / f"dedicated_log_torch_trace_{size_mb}mb.log"
    if target.exists() and target.stat().st_size >= size_mb * 2**20:
        return target
    WORK.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        written = 0
        while written < size_mb * 2**20:
            out.write(blob)
            written += len(blob)
    return target


def measure(argv: list[str]) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB, exit code, CPU seconds) of one child process (CPU: user +
    system of it and of the processes it waited for: on shared cores the figure that the
    load moves least)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        print(f"  {argv[0]} failed ({proc.returncode}): {err[-500:]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, proc.returncode, usage.ru_utime + usage.ru_stime


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def main() -> int:
    """Build the trace, run the three contenders ``--repeat`` times, print the median."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool (median reported)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    trace = build(args.size_mb)
    size = trace.stat().st_size / 2**20
    tlparse = shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent))
    tools = {
        "python read loop": [sys.executable, "-c", READ_LOOP, str(trace)],
        "dyncli diagnose": [sys.executable, "-m", "dyncli", "diagnose", str(trace),
                            "--json", str(WORK / "diagnosis.json")],
        # one process: what a single core gives (the default parses in a child beside it)
        "dyncli --jobs 1": [sys.executable, "-m", "dyncli", "diagnose", str(trace),
                            "--json", str(WORK / "diagnosis-j1.json"), "--jobs", "1"],
        # the parsing child whatever the load (the default uses it only while a core is idle)
        "dyncli --jobs 2": [sys.executable, "-m", "dyncli", "diagnose", str(trace),
                            "--json", str(WORK / "diagnosis-j2.json"), "--jobs", "2"],
    }
    if tlparse:
        tools["tlparse"] = [tlparse, str(trace), "-o", str(WORK / "tl_out"), "--overwrite",
                            "--no-browser"]
    else:
        print("tlparse not found: install the dev extra (pip install tlparse)", file=sys.stderr)
    with trace.open("rb") as fh:
        print(f"trace: {trace} ({size:.0f} MiB, {sum(1 for _ in fh)} lines)")
    # as installed: byte-compiled (see the module docstring)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "dyncli")], check=True,
                   capture_output=True)
    print(f"load average before: {_loadavg()}")
    results = {}
    for name, argv in tools.items():
        runs = sorted((measure(argv) for _ in range(args.repeat)), key=lambda r: r[0])
        wall, rss, code, cpu = runs[len(runs) // 2]
        results[name] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                         "peak_rss_mib": round(rss, 1), "mib_per_s": round(size / wall, 1),
                         "exit": code, "walls": [round(r[0], 2) for r in runs]}
        print(f"{name:18s} {wall:8.2f} s  {size / wall:7.1f} MiB/s  CPU {cpu:6.2f} s"
              f"  peak RSS {rss:7.1f} MiB  exit {code}", flush=True)
    print(f"load average after: {_loadavg()}")
    shutil.rmtree(WORK / "tl_out", ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"size_mib": round(size, 1), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

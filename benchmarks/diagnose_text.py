"""Throughput and peak memory of ``dyncli diagnose`` on a big TORCH_LOGS text log.

Builds a log of at least ``--size-mb`` (default 1024) MB under /tmp by repeating the real
logs of tests/data/logs (never committed), then measures, each in a fresh subprocess so that
peak RSS is its own:

  bare       a Python loop that only reads the same lines as bytes (``for line in open(path, "rb")``)
  bare-text  the same loop in text mode (``for line in open(path)``: what most log readers do)
  floor   what any Python reader of dyncli's design does at least: each line looked at once
          (does it repeat the previous line's prefix?), the prefix regex on those that do not
  parse   dyncli's text parser alone (``Source.parts()`` -> events, counted)
  full    the whole ``diagnose_logs`` (input + parser + analysis -> Diagnosis)

and prints MB/s, seconds and peak RSS, plus the ratio to the bare loop. A mode's seconds are
its reading alone; the imports before it (dyncli's start-up, which has a target of its own)
are timed apart and shown as "+N ms start-up", and the ratio is given both ways. Targets
(issue 22): full >= 0.5x the bare loop's speed, peak RSS <= 64 MB. ``/proc/loadavg`` is
printed before and after the runs: timings on a busy machine are not quiet-machine figures.

    .venv/bin/python benchmarks/diagnose_text.py [--size-mb 1024] [--path /tmp/dyncli_big.log] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"

# mode -> (imports, timed as start-up; the reading, timed as the mode's seconds)
MODES = {
    "bare": ("", """
n = 0
with open(PATH, "rb") as fh:
    for line in fh:
        n += 1
result = n
"""),
    "bare-text": ("", """
n = 0
with open(PATH, encoding="utf-8", errors="replace") as fh:
    for line in fh:
        n += 1
result = n
"""),
    # The least any reader of this design does: every line of the blocks looked at once (does
    # it repeat the previous line's prefix?), the prefix regex on each line that does not.
    "floor": ("""
import io
from dyncli.inputs import open_input
from dyncli.logparse.glog import GLOG_RE
""", """
match, last, n = GLOG_RE.match, b"\\x00", 0
with open_input(PATH) as source:
    for part in source.parts():
        for raw in io.BytesIO(part) if type(part) is bytes else part:
            if raw.startswith(last):
                continue
            n += 1
            m = match(raw)
            last = raw[:m.end()] if m is not None else b"\\x00"
result = {"record starts": n}
"""),
    "parse": ("""
from dyncli.inputs import open_input
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import TextLogParser
""", """
stats = ParseStats()
n = 0
with open_input(PATH) as source:
    for _ in TextLogParser(stats).parse_parts(source.parts()):
        n += 1
result = {"events": n, "lines": stats.lines, "unrecognized": stats.unrecognized}
"""),
    "full": ("""
from dyncli.diagnose.read import diagnose_logs
""", """
d = diagnose_logs([PATH])
result = {"lines": d.stats.lines, "frames": len(d.frames), "recompiles": len(d.recompiles),
          "unrecognized": d.stats.unrecognized}
"""),
}

RUNNER = """
import json, resource, sys, time
PATH = sys.argv[1]
t0 = time.perf_counter()
{setup}
t1 = time.perf_counter()
{body}
t2 = time.perf_counter()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": t2 - t1, "startup": t1 - t0, "peak_rss_mb": rss_kb / 1024,
                  "result": result}}))
"""


def loadavg() -> str:
    """The 1/5/15-minute load averages (what else ran), or "?" where there is no /proc."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def build(path: Path, size_mb: int) -> int:
    """Concatenate the captured logs until ``path`` holds at least ``size_mb`` MB."""
    target = size_mb * 1024 * 1024
    if path.exists() and path.stat().st_size >= target:
        return path.stat().st_size
    chunk = b"".join(p.read_bytes() for p in sorted(LOGS.glob("*.log")))
    with path.open("wb") as fh:
        written = 0
        while written < target:
            fh.write(chunk)
            written += len(chunk)
    return path.stat().st_size


def measure(mode: str, path: Path) -> dict[str, object]:
    """Run one mode in a fresh interpreter; return its timing, RSS and result."""
    setup, body = MODES[mode]
    code = RUNNER.format(setup=setup, body=body)
    out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    """Build the log, run the modes interleaved ``--repeat`` times, report each one's best run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--path", type=Path, default=Path("/tmp/dyncli_diagnose_big.log"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    size = build(args.path, args.size_mb)
    mb = size / 1e6
    print(f"log: {args.path} {mb:.0f} MB (captured logs repeated); python {platform.python_version()}, "
          f"{os.cpu_count()} cpu(s)")
    modes = ("bare", "bare-text", "floor", "parse", "full")
    load_before = loadavg()
    runs: dict[str, list[dict[str, object]]] = {m: [] for m in modes}
    for _ in range(args.repeat):  # interleaved, so load drift on a shared machine hits all modes
        for mode in modes:
            runs[mode].append(measure(mode, args.path))
    load_after = loadavg()
    rows = {}
    for mode in modes:
        best = min(runs[mode], key=lambda r: float(r["seconds"]))  # type: ignore[arg-type]
        best["mb_per_s"] = mb / float(best["seconds"])  # type: ignore[arg-type]
        rows[mode] = best
        print(f"{mode:9s} {best['seconds']:8.2f} s  {best['mb_per_s']:7.1f} MB/s  "
              f"(+{1000 * float(best['startup']):3.0f} ms start-up)  "  # type: ignore[arg-type]
              f"peak RSS {best['peak_rss_mb']:6.1f} MB  {best['result']}", flush=True)
    bare, full = float(rows["bare"]["seconds"]), float(rows["full"]["seconds"])  # type: ignore[arg-type]
    with_startup = bare / (full + float(rows["full"]["startup"]))  # type: ignore[arg-type]
    ratio = bare / full
    ratio_text = float(rows["bare-text"]["seconds"]) / full  # type: ignore[arg-type]
    print(f"full / bare speed: {ratio:.2f} ({with_startup:.2f} with start-up), full / bare-text: "
          f"{ratio_text:.2f} (target >= 0.5); full peak RSS {rows['full']['peak_rss_mb']:.0f} MB "
          f"(target <= 64)")
    print(f"load average before: {load_before}, after: {load_after}")
    if args.json:
        args.json.write_text(json.dumps({"size_bytes": size, "modes": rows, "ratio": ratio,
                                         "ratio_with_startup": with_startup,
                                         "ratio_text": ratio_text, "load_before": load_before,
                                         "load_after": load_after,
                                         "measured_at": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

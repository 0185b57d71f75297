"""Throughput and peak memory of ``dyncli diagnose`` on a big TORCH_LOGS text log.

Builds a log of at least ``--size-mb`` (default 1024) MB under /tmp by repeating the real
logs of tests/data/logs (never committed), then measures, each in a fresh subprocess so that
peak RSS is its own:

  bare       a Python loop that only reads the same lines as bytes (``for line in open(path, "rb")``)
  bare-text  the same loop in text mode (``for line in open(path)``: what most log readers do)
  parse   dyncli's text parser alone (lines -> events, counted)
  full    the whole ``diagnose_logs`` (logsource + parser + analysis -> Diagnosis)

and prints MB/s, seconds and peak RSS, plus the ratio to the bare loop. Targets (issue 4):
full >= 1/3 of the bare loop's MB/s, peak RSS < 150 MB.

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

MODES = {
    "bare": """
n = 0
with open(PATH, "rb") as fh:
    for line in fh:
        n += 1
result = n
""",
    "bare-text": """
n = 0
with open(PATH, encoding="utf-8", errors="replace") as fh:
    for line in fh:
        n += 1
result = n
""",
    "parse": """
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import parse_lines
stats = ParseStats()
n = 0
with open(PATH, "rb") as fh:
    for _ in parse_lines(fh, stats):
        n += 1
result = {"events": n, "lines": stats.lines, "unrecognized": stats.unrecognized}
""",
    "full": """
from dyncli.diagnose.read import diagnose_logs
d = diagnose_logs([PATH])
result = {"lines": d.stats.lines, "frames": len(d.frames), "recompiles": len(d.recompiles),
          "unrecognized": d.stats.unrecognized}
""",
}

RUNNER = """
import json, resource, sys, time
PATH = sys.argv[1]
t0 = time.perf_counter()
{body}
secs = time.perf_counter() - t0
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": secs, "peak_rss_mb": rss_kb / 1024, "result": result}}))
"""


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
    code = RUNNER.format(body=MODES[mode])
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
    modes = ("bare", "bare-text", "parse", "full")
    runs: dict[str, list[dict[str, object]]] = {m: [] for m in modes}
    for _ in range(args.repeat):  # interleaved, so load drift on a shared machine hits all modes
        for mode in modes:
            runs[mode].append(measure(mode, args.path))
    rows = {}
    for mode in modes:
        best = min(runs[mode], key=lambda r: float(r["seconds"]))  # type: ignore[arg-type]
        best["mb_per_s"] = mb / float(best["seconds"])  # type: ignore[arg-type]
        rows[mode] = best
        print(f"{mode:9s} {best['seconds']:8.2f} s  {best['mb_per_s']:7.1f} MB/s  "
              f"peak RSS {best['peak_rss_mb']:6.1f} MB  {best['result']}", flush=True)
    ratio = rows["full"]["mb_per_s"] / rows["bare"]["mb_per_s"]  # type: ignore[operator]
    ratio_text = rows["full"]["mb_per_s"] / rows["bare-text"]["mb_per_s"]  # type: ignore[operator]
    print(f"full / bare speed: {ratio:.2f}, full / bare-text: {ratio_text:.2f} (target >= 0.33); "
          f"full peak RSS {rows['full']['peak_rss_mb']:.0f} MB (target < 150)")
    if args.json:
        args.json.write_text(json.dumps({"size_bytes": size, "modes": rows, "ratio": ratio, "ratio_text": ratio_text,
                                         "measured_at": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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

With ``--mixed`` the log is instead a recorded torch log followed by the program's own output
(``build_mixed``): tqdm bars rewritten with ``\r``, ``Epoch 3/10 loss=0.123`` prints, logging's
INFO lines, JSON lines, a Python warning and blank lines, the torch log repeated between every
~4 MB of them: the lines a training job's stderr mostly holds, which no torch prefix starts.

It prints MB/s, seconds and peak RSS, plus the ratio to the bare loop. A mode's seconds are
its reading alone; the imports before it (dyncli's start-up, which has a target of its own)
are timed apart and shown as "+N ms start-up", and the ratio is given both ways. Targets
(issue 22): full >= 0.5x the bare loop's speed, peak RSS <= 64 MB. ``/proc/loadavg`` is
printed before and after the runs: timings on a busy machine are not quiet-machine figures.

    .venv/bin/python benchmarks/diagnose_text.py [--size-mb 1024] [--path /tmp/dyncli_big.log] [--json out.json]
    .venv/bin/python benchmarks/diagnose_text.py --mixed --size-mb 20 --path /tmp/dyncli_mixed.log
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


MIXED_TORCH_LOG = ROOT / "tests" / "data" / "2.15.0" / "logs" / "graph_break_frames.log"


def program_output(step: int) -> bytes:
    """One step's worth of what a training program prints besides torch's records: a tqdm bar
    redrawn with ``\\r`` (one line to a reader), a print, logging's default-format INFO line,
    a JSON metrics line; now and then a Python warning and blank lines."""
    epoch, batch = divmod(step, 100)
    bar = b"".join(b"\rEpoch %d:  %3d%%|%-20s| %d/100 [00:%02d<00:%02d, 12.34it/s, loss=0.%03d]"
                   % (epoch, b, b"#" * (b // 5), b, b % 60, (100 - b) % 60, (step * 7 + b) % 1000)
                   for b in range(batch, batch + 3))
    out = [bar + b"\n",
           b"Epoch %d/10 loss=0.%03d acc=0.%03d\n" % (epoch % 10 + 1, step % 1000, (step * 3) % 1000),
           b"2025-01-01 12:%02d:%02d,%03d INFO trainer: step %d lr=3.0e-04 grad_norm=1.%02d\n"
           % (step // 60 % 60, step % 60, step % 1000, step, step % 100),
           b'{"step": %d, "loss": 0.%03d, "tokens_per_s": %d, "split": "train"}\n'
           % (step, step % 1000, 10000 + step % 977)]
    if step % 50 == 0:
        out += [b"/usr/lib/python3.11/site-packages/torch/utils/data/dataloader.py:558: "
                b"UserWarning: This DataLoader will create 8 worker processes in total.\n",
                b"  warnings.warn(_create_warning_msg(\n", b"\n"]
    if step % 7 == 0:
        out.append(b"\n")
    return b"".join(out)


def build_mixed(path: Path, size_mb: int) -> int:
    """A recorded torch log, then the program's output (``program_output``), the torch log
    again after every ~4 MB of it, until ``path`` holds at least ``size_mb`` MB."""
    target = size_mb * 1024 * 1024
    torch_log = MIXED_TORCH_LOG.read_bytes()
    step = 0
    with path.open("wb") as fh:
        written = 0
        while written < target:
            fh.write(torch_log)
            written += len(torch_log)
            block = []
            size = 0
            while size < 4 * 1024 * 1024 and written + size < target:
                chunk = program_output(step)
                block.append(chunk)
                size += len(chunk)
                step += 1
            fh.write(b"".join(block))
            written += size
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
    ap.add_argument("--mixed", action="store_true",
                    help="a torch log with the program's own output after it (build_mixed)")
    args = ap.parse_args()
    size = build_mixed(args.path, args.size_mb) if args.mixed else build(args.path, args.size_mb)
    mb = size / 1e6
    with args.path.open("rb") as fh:
        lines = sum(1 for _ in fh)
    what = "a torch log and program output" if args.mixed else "captured logs repeated"
    print(f"log: {args.path} {mb:.1f} MB, {lines} lines ({what}); python {platform.python_version()}, "
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
              f"{1e6 * float(best['seconds']) / lines:6.2f} µs/line  "  # type: ignore[arg-type]
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

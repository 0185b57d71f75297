"""Wall time of a whole ``dyncli bench --suite`` run, per model, with the machine's load.

Runs the command as a user would (a fresh process, each model in its own child), then reads
the JSON it wrote: total wall time, each model's wall time, status and compile seconds, and
the 1-minute load average before and after (on a shared machine the load explains the spread).

    .venv/bin/python benchmarks/suite_time.py [SUITE] [--strategy static,automatic] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default="cpu-small")
    parser.add_argument("--strategy", default="static,automatic")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=".", help="directory for suite.json and suite.csv")
    args = parser.parse_args()
    out = Path(args.out)
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "dyncli", "bench", "--suite", args.suite,
                           "--strategy", args.strategy, "--device", args.device,
                           "--json", str(out / "suite.json"), "--csv", str(out / "suite.csv")],
                          check=False)
    wall = time.monotonic() - t0
    doc = json.loads((out / "suite.json").read_text())
    print(f"suite {args.suite}, --strategy {args.strategy}: {wall / 60:.1f} min wall, "
          f"exit {proc.returncode}, load {load0:.1f} before / {os.getloadavg()[0]:.1f} after")
    for model in doc["models"]:
        runs = [r for r in doc["runs"] if r["model"] == model["model"]]
        compile_s = sum(r.get("compile_time_s") or 0.0 for r in runs)
        print(f"  {model['model']:<28} {model['status']:<20} {model['wall_s']:7.1f} s "
              f"(compile {compile_s:6.1f} s)")


if __name__ == "__main__":
    main()

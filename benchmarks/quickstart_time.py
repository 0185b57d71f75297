"""The README quickstart (``dyncli bench resnet50``) timed on two checkouts, interleaved.

Answers "is this version slower than that one at the quickstart": each round runs the command
once per checkout (alternating, so drifting load hits both alike), each from an empty inductor
cache as on a fresh machine, and records wall time, compile seconds and median speedup from
the JSON it wrote. Both checkouts run in this interpreter (``PYTHONPATH`` = the checkout),
from one scratch working directory.

    .venv/bin/python benchmarks/quickstart_time.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3]

(``git worktree add /tmp/v01 <rev>`` gives an old checkout.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _once(checkout: Path, out: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        # cwd: one scratch directory for both checkouts (run from each checkout's own
        # directory, resnet50's compiled latency differed by up to 10 %, docs/bench.md)
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "PYTHONPATH": str(checkout)}
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "dyncli", "bench", "resnet50",
                               "--json", str(out)], cwd=out.parent, env=env, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"{checkout}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    run = json.loads(out.read_text())["runs"][0]
    return {"wall_s": wall, "compile_s": run["compile_time_s"],
            "speedup": run["speedup"]["median"], "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for side in ("old", "new"):
                r = _once(getattr(args, side).resolve(), Path(tmp) / f"{side}{i}.json")
                results[side].append(r)
                print(f"{side} {i + 1}: {r['wall_s']:.1f} s wall, {r['compile_s']:.1f} s compiling, "
                      f"speedup {r['speedup']:.2f}, load {r['load']:.1f}", flush=True)
    for side, rs in results.items():
        print(f"{side}: median wall {statistics.median(r['wall_s'] for r in rs):.1f} s, "
              f"compile {statistics.median(r['compile_s'] for r in rs):.1f} s, "
              f"speedup {statistics.median(r['speedup'] for r in rs):.2f}")


if __name__ == "__main__":
    main()

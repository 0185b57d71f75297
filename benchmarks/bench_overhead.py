"""How much of a ``dyncli bench`` run is the harness itself (target: under 5%).

Overhead = wall time of a strategy's run minus the wall time spent inside model calls
(the eager reference call, the first compiled call that compiles, warm-up and timed calls):
what is left is cloning inputs, marking dims, comparing outputs, statistics and bookkeeping.
Model building and input generation happen once per benchmark and are reported apart.

    .venv/bin/python benchmarks/bench_overhead.py [MODEL] [--variations N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time

from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="resnet18")
    parser.add_argument("--variations", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--strategy", default="static,automatic,mark-dynamic,dynamic")
    args = parser.parse_args()
    cfg = BenchConfig(variations=args.variations, repeat=args.repeat, warmup=args.warmup,
                      strategy=args.strategy.split(","), device="cpu", batch_size=args.batch_size)
    t0 = time.perf_counter()
    result = run_bench(args.model, cfg)
    total = time.perf_counter() - t0
    rows = []
    for run in result.runs:
        overhead = run.wall_s - run.in_calls_s
        rows.append({"strategy": run.strategy, "wall_s": round(run.wall_s, 3),
                     "in_model_calls_s": round(run.in_calls_s, 3),
                     "overhead_s": round(overhead, 4),
                     "overhead_pct": round(100 * overhead / run.wall_s, 2)})
    in_runs = sum(r.wall_s for r in result.runs)
    summary = {"model": args.model, "settings": vars(args), "total_s": round(total, 2),
               "setup_s (build model + make inputs, once)": round(total - in_runs, 2),
               "overhead_pct_all_runs": round(
                   100 * sum(r.wall_s - r.in_calls_s for r in result.runs) / in_runs, 2),
               "runs": rows}
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

"""Run-to-run spread of the median speedup ``dyncli bench`` reports for a fixed model.

Runs the same benchmark N times in one process (each strategy starts from
``torch._dynamo.reset()``; inductor's on-disk cache makes repeat compiles cheap, which does not
affect steady-state timings) and reports the median speedup of every run, their mean, std,
min, max and coefficient of variation.

    .venv/bin/python benchmarks/bench_spread.py [MODEL] [--runs N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics

from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="resnet18")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--variations", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--strategy", default="automatic")
    args = parser.parse_args()
    cfg = BenchConfig(variations=args.variations, repeat=args.repeat, warmup=2,
                      strategy=[args.strategy], device="cpu")
    medians = []
    for _ in range(args.runs):
        result = run_bench(args.model, cfg)
        medians.append(result.runs[0].speedup.median)
    mean = statistics.fmean(medians)
    std = statistics.stdev(medians) if len(medians) > 1 else 0.0
    print(json.dumps({
        "model": args.model, "settings": vars(args),
        "median_speedups": [round(m, 4) for m in medians],
        "mean": round(mean, 4), "std": round(std, 4),
        "min": round(min(medians), 4), "max": round(max(medians), 4),
        "cv_pct": round(100 * std / mean, 2)}, indent=2))


if __name__ == "__main__":
    main()

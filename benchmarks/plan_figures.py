"""The figures issue #19 asks for: --buckets auto against pow2 and no padding (predicted, and
the chosen buckets replayed for real), and --start warm against cold compile seconds.

    .venv/bin/python benchmarks/plan_figures.py buckets [MODEL] [--sizes ...] [--requests N]
    .venv/bin/python benchmarks/plan_figures.py warm [MODEL] [--strategy static,dynamic]

``buckets`` benches ``pad`` with ``--buckets auto`` and ``--replay`` on a stream of at least
ten distinct sizes and prints the chosen buckets, each plan's predicted total and the replay's
error. ``warm`` benches with ``--start warm`` and prints, per strategy, the cold and the warm
process's compiles and compile seconds and their ratio. The load average is printed before
and after: figures taken on a busy machine say so in docs/bench.md.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

ROOT = Path(__file__).resolve().parents[1]
TINY = f"{ROOT / 'examples' / 'model.py'}:build"
SKEWED = "1,1,1,1,2,2,3,4,5,6,7,8,9,10,12,14,16,20,24,28,32,1,1,2,3,1"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def buckets(args: argparse.Namespace) -> None:
    cfg = BenchConfig(sizes=[int(s) for s in args.sizes.split(",")], requests=args.requests,
                      strategy=["pad"], buckets="auto", max_buckets=args.max_buckets,
                      device="cpu", repeat=args.repeat, warmup=1, replay=True)
    result = run_bench(args.model, cfg)
    run = result.runs[0]
    info = run.buckets
    print(f"distinct sizes: {len(set(cfg.sizes))}; requests: {result.requests}")
    for name, plan in (info.plans if info else {}).items():
        print(f"  {name:5} buckets {list(plan.buckets) or '-'}: predicted {plan.total_s:.2f} s, "
              f"{plan.compiles} compiles")
    if run.stream is not None and run.replay is not None:
        err = run.replay.measured_s / run.stream.total_s - 1
        print(f"  chosen {list(info.chosen) if info else None}: measured-model prediction {run.stream.total_s:.2f} s,"
              f" replayed {run.replay.measured_s:.2f} s ({err:+.0%})")


def warm(args: argparse.Namespace) -> None:
    cfg = BenchConfig(sizes=[int(s) for s in args.sizes.split(",")], device="cpu",
                      strategy=args.strategy.split(","), repeat=2, warmup=0, start="warm")
    result = run_bench(args.model, cfg)
    for run in result.runs:
        s = run.start
        cold = s.cold_compile_time_s if s else None
        hot = s.compile_time_s if s else None
        ratio = hot / cold if cold and hot is not None else None
        print(f"  {run.strategy:10} cold: {s.cold_compiles if s else None} compiles "
              f"{cold or 0:.2f} s; warm: {s.compiles if s else None} compiles {hot or 0:.2f} s "
              f"({s.fx_cache_hits if s else None} FX cache hits); warm/cold "
              + (f"{ratio:.2f}" if ratio is not None else "-"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("buckets", "warm"))
    parser.add_argument("model", nargs="?", default=TINY)
    parser.add_argument("--sizes", default=SKEWED)
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--max-buckets", type=int, default=None)
    parser.add_argument("--strategy", default="static,dynamic")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    (buckets if args.what == "buckets" else warm)(args)
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()

"""How close the stream cost model is to running the stream for real (``--replay``).

Benchmarks a model on a request stream with ``replay=True`` and prints, per strategy, the
predicted seconds (compiles where they occur + each request's steady-state latency), the
measured seconds of the real replay, and their relative error. docs/bench.md reports it.

    .venv/bin/python benchmarks/bench_replay.py [MODEL] [--sizes 24,32,40] [--requests 150]
        [--strategy dynamic,automatic,static,pad] [--threads 1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODEL = f"{ROOT / 'tests' / 'integration' / 'conftest_bench.py'}:wide_mlp"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    parser.add_argument("--sizes", default="24,32,40")
    parser.add_argument("--shapes", default=None)
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--strategy", default="dynamic,automatic,static,pad")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: leave)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = BenchConfig(sizes=[] if args.shapes else [int(s) for s in args.sizes.split(",")],
                      shapes=args.shapes, requests=args.requests, repeat=args.repeat, warmup=1,
                      strategy=args.strategy.split(","), device="cpu", replay=True)
    result = run_bench(args.model, cfg)
    print(f"{args.model}: {result.requests} requests, torch threads {torch.get_num_threads()}, "
          f"compiler warm-up {result.compiler_warmup_s or 0:.1f} s")
    print(f"{'strategy':<20} {'predicted s':>12} {'measured s':>11} {'error':>7} "
          f"{'full GCs (s)':>13}")
    eager = result.eager_stream.replay if result.eager_stream else None
    for name, replay, run in [("eager", eager, None),
                              *((r.strategy, r.replay, r) for r in result.runs)]:
        if not replay:
            if run is not None:
                print(f"{name:<20} {run.status}: {run.error}")
            continue
        p, m = replay.predicted_s, replay.measured_s
        gcs = "-" if replay.gc_full is None else f"{replay.gc_full} ({replay.gc_full_s:.2f})"
        print(f"{name:<20} {p:>12.2f} {m:>11.2f} {(p - m) / m:>+7.0%} {gcs:>13}")


if __name__ == "__main__":
    main()

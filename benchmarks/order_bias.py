"""Does the side that runs second in a pair of timed calls read faster? An A/A test of bench's
interleaved timing (``dyncli.bench.timing.interleaved``, the path a strategy takes when it is
not timed in the shared window).

Both sides of each pair are the SAME eager callable on the same input, so any difference
between the sides is the order's. For each model, ``--trials`` runs of ``--repeat`` pairs each:
``fixed`` times A then B in every pair (bench before round 33: eager always first); ``abba``
alternates (A B, B A, ...: what ``interleaved`` does now). Printed per model and order: the
median over trials of median(B) / median(A) - 1, and its range. A value away from 0 beyond its
range is a bias that the order gives the side that runs second (the compiled one, before).

    python benchmarks/order_bias.py [--trials 9] [--repeat 40] [--hog 0]

``--hog N`` runs N busy-looping processes beside it (the machine's load is printed either way).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _hog(stop: Any) -> None:
    while not stop.is_set():
        for _ in range(100_000):
            pass


def _fixed(clock: Any, a: Callable[[], Any], b: Callable[[], Any], repeat: int
           ) -> tuple[list[float], list[float]]:
    from dyncli.bench.timing import timed

    xs: list[float] = []
    ys: list[float] = []
    for _ in range(repeat):
        xs.append(timed(clock, a)[1])
        ys.append(timed(clock, b)[1])
    return xs, ys


def _abba(clock: Any, a: Callable[[], Any], b: Callable[[], Any], repeat: int
          ) -> tuple[list[float], list[float]]:
    from dyncli.bench.timing import interleaved

    s = interleaved(clock, a, b, repeat)
    return s.eager_ms, s.compiled_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--hog", type=int, default=0)
    args = ap.parse_args()

    import torch

    from dyncli.bench.timing import CpuClock

    torch.manual_seed(0)
    torch.set_num_threads(1)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 256)).eval()
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(),
                               torch.nn.Conv2d(16, 16, 3)).eval()
    models = {"mlp b8": (mlp, torch.randn(8, 256)),
              "mlp b64": (mlp, torch.randn(64, 256)),
              "conv 2x3x32x32": (conv, torch.randn(2, 3, 32, 32))}
    stop = mp.Event()
    hogs = [mp.Process(target=_hog, args=(stop,), daemon=True) for _ in range(args.hog)]
    for h in hogs:
        h.start()
    clock = CpuClock()
    print(f"load before: {os.getloadavg()[0]:.2f}, hog processes: {args.hog}, "
          f"torch {torch.__version__}, 1 thread")
    try:
        with torch.inference_mode():
            for name, (model, x) in models.items():
                def call(m: Any = model, t: Any = x) -> Any:
                    return m(t)
                for _ in range(20):
                    call()
                for label, fn in (("fixed", _fixed), ("abba", _abba)):
                    rel = []
                    t0 = time.perf_counter()
                    for _ in range(args.trials):
                        xs, ys = fn(clock, call, call, args.repeat)
                        rel.append(statistics.median(ys) / statistics.median(xs) - 1)
                    print(f"{name:16} {label:6} B/A-1 median {statistics.median(rel):+.2%} "
                          f"range [{min(rel):+.2%}, {max(rel):+.2%}] "
                          f"(A median {statistics.median(xs):.3f} ms; "
                          f"{time.perf_counter() - t0:.1f} s)")
    finally:
        stop.set()
        for h in hogs:
            h.join(timeout=5)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

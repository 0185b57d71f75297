"""Issue #18 acceptance: the same model and stream benched twice, without and with a CPU hog
that toggles on and off (4 s busy / 4 s idle, one worker per core), each with ``--replay``.

Prints per run and strategy the predicted and the replayed seconds (eager replayed too), the
recommendation with its confidence, the load recorded, and the criterion: the loaded run's
recommendation, priced at the first run's replayed totals, within 10 % of that run's best.

    python benchmarks/bench_window.py [MODEL] [--sizes 1,2,4,8,16,32] [--requests 600]
    (MODEL e.g. benchmarks/bench_window.py:big_mlp, the issue's 1024→4096→4096→1024 MLP, or
    benchmarks/bench_window.py:pointwise, where compiling wins on a long stream)
        [--strategy static,automatic,pad,dynamic] [--repeat 10] [--threads 1]
        [--conditions none,hog] [--hog-workers N]

The first condition should be a quiet machine; on a shared one it is "without our hog".
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path
from typing import Any

from dyncli.bench.hog import Hog
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODEL = f"{ROOT / 'tests' / 'integration' / 'conftest_bench.py'}:wide_mlp"


def big_mlp() -> tuple[Any, tuple[Any]]:
    """The issue's 1024→4096→4096→1024 MLP with LayerNorm (batch 32): steady state matters."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.LayerNorm(4096),
                          nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 1024))
    return model, (torch.randn(32, 1024),)


def pointwise() -> tuple[Any, tuple[Any]]:
    """Eight blocks of elementwise ops on a 64-wide input: eager pays ~100 small kernel
    launches a call, inductor fuses them, so on a long enough stream compiling wins (the
    criterion then compares compiled strategies, not only eager against their compiles)."""
    import torch
    from torch import nn

    class Blocks(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 64))

        def forward(self, x: Any) -> Any:
            for _ in range(8):
                x = x * torch.sigmoid(x) + torch.tanh(x) * self.scale
                x = (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1, keepdim=True) + 1e-5)
            return x

    torch.manual_seed(0)
    return Blocks(), (torch.randn(32, 64),)


def replayed(result: Any) -> dict[str, float]:
    """Measured replay seconds per strategy, eager included."""
    out = {r.strategy: r.replay.measured_s for r in result.runs
           if r.replay and r.replay.measured_s == r.replay.measured_s}
    if result.eager_stream is not None and result.eager_stream.replay:
        out["eager"] = result.eager_stream.replay.measured_s
    return out


def criterion(reference: Any, other: Any) -> tuple[float, str]:
    """other's recommendation priced at reference's replayed totals / reference's best."""
    totals = replayed(reference)
    if not totals or other.recommendation is None:
        return math.nan, "no replay or no recommendation"
    best = min(totals, key=totals.__getitem__)
    pick = other.recommendation.strategy
    ratio = totals.get(pick, math.nan) / totals[best]
    return ratio, f"picked {pick} ({totals.get(pick, math.nan):.2f} s) vs best {best} " \
                  f"({totals[best]:.2f} s) in the reference replay"


def show(label: str, result: Any, wall: float) -> None:
    rec = result.recommendation
    load = result.load or {}
    print(f"\n[{label}] {wall:.0f} s wall; load average {load.get('load_min')}-"
          f"{load.get('load_max')} on {load.get('cores')} cores, others' CPU share "
          f"{load.get('others_cpu_share')}, eager drift {load.get('eager_drift')}")
    print(f"{'strategy':<20} {'predicted s':>12} {'replayed s':>11} {'error':>7} {'compile s':>10}"
          f" {'cpu s':>7}")
    rows = [(r.strategy, r.stream, r.replay, r) for r in result.runs]
    if result.eager_stream is not None:
        rows.append(("eager", result.eager_stream, result.eager_stream.replay, None))
    for name, stream, rep, run in rows:
        if stream is None:
            print(f"{name:<20} {getattr(run, 'status', '')}: {getattr(run, 'error', '')}")
            continue
        p = stream.total_s
        m = rep.measured_s if rep else math.nan
        cpu = sum(v.first_call_cpu_s or 0 for v in run.variations if v.compiles) if run else 0
        limit = "  recompile limit hit: later new sizes ran eager" \
            if run is not None and run.recompile_limit_hit else ""
        print(f"{name:<20} {p:>12.2f} {m:>11.2f} {(p - m) / m if m else math.nan:>+7.0%} "
              f"{stream.compile_s:>10.2f} {cpu:>7.2f}{limit}")
    if rec:
        print(f"recommendation: {rec.strategy} (confidence {rec.confidence}) — {rec.reason}")
    for w in result.warnings:
        print(f"warning: {w}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    ap.add_argument("--sizes", default="1,2,4,8,16,32")
    ap.add_argument("--requests", type=int, default=600)
    ap.add_argument("--strategy", default="static,automatic,pad,dynamic")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: leave)")
    ap.add_argument("--conditions", default="none,hog")
    ap.add_argument("--hog-workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]
    # a mostly-small stream, in a scattered order: request i takes size index
    # floor(n * u_i^2), u_i = frac(i * golden ratio), so small sizes come far more often
    stream = [sizes[int(len(sizes) * ((i * 0.6180339887) % 1.0) ** 2)]
              for i in range(args.requests)]
    cfg = BenchConfig(sizes=stream, requests=args.requests, repeat=args.repeat, warmup=1,
                      strategy=args.strategy.split(","), device="cpu", replay=True)
    results = []
    for cond in args.conditions.split(","):
        hog = Hog(4.0, 4.0, limit_s=3000, workers=args.hog_workers) if cond == "hog" else None
        t0 = time.perf_counter()
        try:
            if hog:
                hog.start()
            result = run_bench(args.model, cfg)
        finally:
            if hog:
                hog.stop()
        show(cond, result, time.perf_counter() - t0)
        results.append((cond, result))
    ref_label, ref = results[0]
    for label, other in results[1:]:
        ratio, text = criterion(ref, other)
        print(f"\n{label} vs {ref_label}: {text}: {ratio:.3f} of the best "
              f"({'within' if ratio <= 1.10 else 'NOT within'} 10 %)")


if __name__ == "__main__":
    main()

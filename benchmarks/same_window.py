"""Issue #18 experiment: can every strategy keep its own compiled code for round-robin timing,
and which pricing keeps the ranking when the load changes?

Part A (isolation, ``backend="eager"``-like counting, cheap): each strategy compiles with
``torch.compile(..., isolate_recompiles=True)`` (torch >= 2.14) and, between strategies, only
``torch._dynamo.pgo.reset_code_state()`` (automatic-dynamic state) instead of
``torch._dynamo.reset()`` (which would drop every strategy's compiled code). Checks: each
strategy compiles as often as it does alone after a full reset; a round-robin pass over all of
them afterwards compiles nothing; a model with a graph break in an inner function too.

Part B (pricing under a toggling CPU hog, inductor): a tiny MLP, three strategies, ``--reps``
times. Three ways to price steady state: (1) each strategy's own window, one call per sample
(bench before #18); (2) ratio to eager in its window × pooled eager; (3) one round-robin window
with loops per sample. Prints each price per repetition and its spread.

    python benchmarks/same_window.py [--part a|b|ab] [--reps 3] [--hog 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [4, 6, 8, 6, 4]


class Counting:
    """A backend that counts graphs and runs the given inner backend."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.compiles = inner, 0

    def __call__(self, gm: Any, example_inputs: Any, **kw: Any) -> Any:
        self.compiles += 1
        return self.inner(gm, example_inputs, **kw)


def models() -> dict[str, Any]:
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 10)

        def forward(self, x: Any) -> Any:
            return self.fc2(torch.relu(self.fc1(x)))

    def inner(h: Any) -> Any:
        torch._dynamo.graph_break()
        return h * 2

    class Breaks(Tiny):
        def forward(self, x: Any) -> Any:
            return self.fc2(inner(torch.relu(self.fc1(x))))

    return {"tiny": Tiny().eval(), "graph-break": Breaks().eval()}


DYN = {"static": False, "automatic": None, "dynamic": True}


def compile_walk(model: Any, strategy: str, isolated: bool, inner: Any) -> tuple[Any, Counting]:
    import torch

    backend = Counting(inner)
    kw = {"isolate_recompiles": True} if isolated else {}
    fn = torch.compile(model, backend=backend, dynamic=DYN[strategy], **kw)
    with torch.no_grad():
        for b in SIZES:
            fn(torch.randn(b, 32))
    return fn, backend


def part_a() -> None:
    import torch
    from torch._dynamo import pgo

    inner = torch._dynamo.lookup_backend("eager")
    for name, model in models().items():
        alone = {}
        for s in DYN:
            torch._dynamo.reset()
            alone[s] = compile_walk(model, s, False, inner)[1].compiles
        torch._dynamo.reset()
        kept: dict[str, tuple[Any, Counting]] = {}
        together = {}
        for s in DYN:
            pgo.reset_code_state()  # automatic dynamic's memory of sizes, and nothing else
            kept[s] = compile_walk(model, s, True, inner)
            together[s] = kept[s][1].compiles
        before = {k: b.compiles for k, (_, b) in kept.items()}
        with torch.no_grad():
            for _ in range(3):
                for b in SIZES:
                    for fn, _ in kept.values():
                        fn(torch.randn(b, 32))
        after = {k: b.compiles for k, (_, b) in kept.items()}
        # the same without isolation: one strategy's entries count against the others' limit
        torch._dynamo.reset()
        shared = {}
        for s in DYN:
            pgo.reset_code_state()
            shared[s] = compile_walk(model, s, False, inner)[1].compiles
        # the recompile limit (8): static over 8 sizes, after the others, shared or isolated
        limit = {}
        for isolated in (False, True):
            torch._dynamo.reset()
            for s in ("dynamic", "automatic"):
                pgo.reset_code_state()
                compile_walk(model, s, isolated, inner)
            pgo.reset_code_state()
            backend = Counting(inner)
            kw = {"isolate_recompiles": True} if isolated else {}
            fn = torch.compile(model, backend=backend, dynamic=False, **kw)
            with torch.no_grad():
                for b in range(2, 10):
                    fn(torch.randn(b, 32))
            limit["isolated" if isolated else "shared"] = backend.compiles
        print(f"[{name}] static over 8 sizes after dynamic and automatic: compiles {limit}")
        print(f"[{name}] compiles alone (reset between) {alone}; kept together, isolated "
              f"{together}; round-robin afterwards added "
              f"{ {s: after[s] - before[s] for s in DYN} }; kept together, NOT isolated {shared}")
    torch._dynamo.reset()


def part_b(reps: int, hog_workers: int) -> None:
    import torch
    from torch._dynamo import pgo

    from dyncli.bench import confidence, loops
    from dyncli.bench.hog import Hog
    from dyncli.bench.timing import CpuClock, interleaved

    torch.set_num_threads(1)
    model = models()["tiny"]
    inner = torch._dynamo.lookup_backend("inductor")
    clock = CpuClock()
    x = torch.randn(8, 32)
    results: dict[str, dict[str, list[float]]] = {m: {s: [] for s in ["eager", *DYN]}
                                                  for m in ("own", "ratio", "round-robin")}
    hog = Hog(4.0, 4.0, limit_s=900, workers=hog_workers).start() if hog_workers else None
    try:
        for _ in range(reps):
            torch._dynamo.reset()
            kept: dict[str, Callable[[], Any]] = {}
            windows = []
            for s in DYN:
                pgo.reset_code_state()
                fn, _ = compile_walk(model, s, True, inner)

                def call(fn: Any = fn) -> Any:
                    with torch.no_grad():
                        return fn(x)

                def eager() -> Any:
                    with torch.no_grad():
                        return model(x)
                kept[s] = call
                smp = interleaved(clock, eager, call, 20)  # today's: its own window
                results["own"][s].append(statistics.fmean(smp.compiled_ms))
                windows.append(confidence.Window({"eager": smp.eager_ms, s: smp.compiled_ms}))
            p = confidence.price(windows)
            for s in ("eager", *DYN):
                results["ratio"][s].append(p[s])
            fns = {"eager": eager, **kept}
            nloops = {k: loops.calibrate(clock, f) for k, f in fns.items()}
            rr = loops.round_robin(clock, fns, nloops, 20)
            for s, v in rr.items():
                results["round-robin"][s].append(statistics.fmean(v))
            results["own"]["eager"].append(float("nan"))
            print(f"rep done; loops {nloops}; load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        if hog:
            hog.stop()
    for method, table in results.items():
        print(f"\n{method}: per-call ms for batch 8, one column per repetition")
        for s, v in table.items():
            clean = [a for a in v if a == a]
            cv = statistics.pstdev(clean) / statistics.fmean(clean) if len(clean) > 1 else 0
            print(f"  {s:<10} " + " ".join(f"{a:8.4f}" for a in v) + f"   spread {cv:.0%}")
        order = [sorted((s for s in DYN), key=lambda s, i=i: table[s][i]) for i in range(reps)]
        print(f"  ranking per repetition: {order}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="ab")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--hog", type=int, default=1, help="hog workers (0: none)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"torch {__import__('torch').__version__}; load {os.getloadavg()}")
    if "a" in args.part:
        part_a()
    if "b" in args.part:
        part_b(args.reps, args.hog)
    print(f"\n{time.perf_counter() - t0:.0f} s; load {os.getloadavg()}")


if __name__ == "__main__":
    main()

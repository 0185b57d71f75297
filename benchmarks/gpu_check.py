"""The one prepared check for a lent GPU (issue #32): bench against torch, strategies apart.

On whatever torch the machine has (no network: run it from the checkout)::

    PYTHONPATH=. python benchmarks/gpu_check.py --out DIR          # ~4 min on an H200
    PYTHONPATH=. python benchmarks/gpu_check.py --out DIR --small  # CPU, tiny sizes
    PYTHONPATH=. python benchmarks/gpu_check.py --out DIR --small --warm-cache  # CI's run

Each bench run compiles from empty caches of its own (bench's default, as a user's first run
does); ``--warm-cache`` compiles from torch's own cache directories instead, so a graph an
earlier run compiled is a cache hit: the tests run the script that way on CPU, where what is
checked is the script and the strategies' compile counts (a hit is still a compile in torch's
count), not cold compile seconds.

Three checks, each through bench's public API (``run_bench``, as ``dyncli bench`` runs it):

1. **quickstart**: ``dyncli bench resnet50`` (``--small``: ``examples/model.py:build``);
2. **independent timing**: the same model and the same inputs per shape, timed again without
   bench's code — ``torch.compile`` afresh and CUDA events (``perf_counter`` on CPU), the
   median of as many calls — and each shape's eager and compiled ms beside bench's (% apart);
3. **stream**: an hf ``BertModel`` built from its config (no download; 2 layers, ``--small``:
   1 layer of width 64) on 100 requests over five (batch, seq) shapes (``--small``: 12 over
   three), with ``static,automatic,dynamic,pad`` (``--small``: ``static,dynamic``) and
   ``--replay``: predicted vs replayed seconds per strategy
   and eager, and each strategy's compile count. This is also item 1's isolation check: each
   strategy must have compiled its own graphs (never ``pass`` with 0 compiles, no recompile
   limit hit).

Prints a short table and writes ``DIR/gpu_check.json`` (machine, torch, date, every number).
Exit 1 when a check failed (a strategy not isolated), 0 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(1, 32), (4, 64), (2, 128), (8, 48), (1, 96)]  # (batch, seq), five shapes
SMALL_SHAPES = [(1, 8), (2, 16), (1, 24)]
STRATEGIES = ["static", "automatic", "dynamic", "pad"]
SMALL_STRATEGIES = ["static", "dynamic"]  # static's entries are what poisoned dynamic on 2.11


def stream_file(out: Path, shapes: list[tuple[int, int]], requests: int) -> Path:
    """A JSONL request stream cycling the shapes with a skew (the first most frequent)."""
    order = [shapes[i % len(shapes)] if i % 3 else shapes[0] for i in range(requests)]
    path = out / "stream.jsonl"
    path.write_text("".join(json.dumps({"batch": b, "seq": s}) + "\n" for b, s in order))
    return path


def independent(model_name: str, cfg: Any, device: str, reps: int,
                compile: bool = True) -> list[dict[str, Any]]:
    """Per shape: eager and ``torch.compile`` timed here, with torch's own events.

    Two ways each: one call between CUDA events after a synchronize (``*_ms``, the reference),
    and bench's own way, calls back to back between one synchronized start and stop
    (``*_loops_ms``, :func:`dyncli.bench.loops.timed_loops`, as many calls as reach 20 ms): on
    a GPU a call whose launches take longer than its kernels reads the launches either way,
    and where the kernels take longer the back-to-back calls overlap one call's launches with
    the last one's kernels. ``compile=False``: eager only (before bench's run, the machine as
    bench found it).
    """
    import torch

    from dyncli.bench.core.plan import stream_plan
    from dyncli.bench.harness import Harness, load

    torch._dynamo.reset()
    built, dims = load(model_name, cfg, device)
    plan = stream_plan(cfg, built.name, built.batch_size, built.seq_len, None)
    h = Harness.create(cfg, built, device, dims, plan.variations, cfg.seed)
    compiled = torch.compile(h.model) if compile else None
    cuda = device.startswith("cuda")
    from dyncli.bench import loops
    from dyncli.bench.harness import make_clock

    clock = make_clock(device)

    def loops_ms(fn: Any, args: Any) -> float:
        a, kw = args

        def call() -> Any:
            with torch.no_grad():
                return fn(*a, **kw)
        call()
        n = loops.calibrate(clock, call)
        return statistics.median(loops.timed_loops(clock, call, n) for _ in range(reps))

    def median_ms(fn: Any, args: Any) -> float:
        a, kw = args
        with torch.no_grad():
            for _ in range(3):
                fn(*a, **kw)
            n, t0 = 1, time.perf_counter()
            if not cuda:
                fn(*a, **kw)
                n = max(1, min(10_000, int(0.02 / max(time.perf_counter() - t0, 1e-6))))
            times = []
            for _ in range(reps):
                if cuda:
                    start, end = torch.cuda.Event(enable_timing=True), \
                        torch.cuda.Event(enable_timing=True)
                    torch.cuda.synchronize()
                    start.record()
                    fn(*a, **kw)
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end))
                else:  # enough calls per sample to pass the scheduler's tick (~20 ms)
                    t0 = time.perf_counter()
                    for _ in range(n):
                        fn(*a, **kw)
                    times.append((time.perf_counter() - t0) * 1000.0 / n)
        return statistics.median(times)

    out = []
    for v in plan.variations:
        args = h.args(v.index)
        row = {"index": v.index, "batch": v.batch_size, "eager_ms": median_ms(h.model, args),
               "eager_loops_ms": loops_ms(h.model, args)}
        if compiled is not None:
            row |= {"compiled_ms": median_ms(compiled, args),
                    "compiled_loops_ms": loops_ms(compiled, args)}
        out.append(row)
    torch._dynamo.reset()
    return out


def save_result(out: Path, name: str, result: Any) -> None:
    """bench's whole JSON document (every run's compile and replay seconds, per shape)."""
    (out / f"bench_{name}.json").write_text(json.dumps(result.to_dict(), indent=1,
                                                       default=str) + "\n")


def pct(a: float, b: float) -> float | None:
    return (a - b) / b * 100.0 if b and a == a and b == b else None


def quickstart(small: bool, device: str, reps: int, fresh: bool,
               out: Path) -> dict[str, Any]:
    from dyncli.bench.runner import run_bench
    from dyncli.config import BenchConfig

    model = f"{ROOT / 'examples' / 'model.py'}:build" if small else "resnet50"
    cfg = BenchConfig(device=device, fresh_cache=fresh,
                      **({"variations": 4, "repeat": 5, "warmup": 1} if small else {}))
    # eager alone before bench (the machine as bench finds it), then bench, then eager and
    # compiled again: bench's eager read 22-61 % above the timing after it from the third
    # shape on (an H200, torch 2.11): whether the machine or bench's own calls
    before = {r["index"]: r for r in independent(model, cfg, device, reps, compile=False)}
    t0, started = time.perf_counter(), time.time()
    result = run_bench(model, cfg)
    wall = time.perf_counter() - t0
    save_result(out, "quickstart", result)
    run = result.runs[0]
    mine = {r["index"]: r for r in independent(model, cfg, device, reps)}
    rows = []
    nan = float("nan")
    for v in run.variations:
        ref, pre = mine.get(v.index, {}), before.get(v.index, {})
        rows.append({"batch": v.batch_size, "bench_eager_ms": v.eager_ms,
                     "bench_compiled_ms": v.compiled_ms, "ref_eager_ms": ref.get("eager_ms"),
                     "ref_compiled_ms": ref.get("compiled_ms"),
                     "eager_diff_pct": pct(v.eager_ms, ref.get("eager_ms", nan)),
                     "compiled_diff_pct": pct(v.compiled_ms, ref.get("compiled_ms", nan)),
                     "ref_eager_loops_ms": ref.get("eager_loops_ms"),
                     "ref_compiled_loops_ms": ref.get("compiled_loops_ms"),
                     "before_eager_ms": pre.get("eager_ms"),
                     "before_eager_loops_ms": pre.get("eager_loops_ms"),
                     "bench_loops": v.loops, "bench_eager_samples": v.eager_samples,
                     "bench_compiled_samples": v.compiled_samples})
    return {"model": model, "wall_s": wall, "started_unix": started, "status": str(run.status),
            "compiles": run.compiles, "compile_time_s": run.compile_time_s,
            "environment": result.environment.to_dict(), "warnings": result.warnings,
            "device_warmup": result.device_warmup, "load": result.load,
            "same_window": result.same_window, "shapes": rows}


def transformer_stream(small: bool, device: str, out: Path, fresh: bool) -> dict[str, Any]:
    from dyncli.bench.runner import run_bench
    from dyncli.config import BenchConfig

    hf = ({"num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 2,
           "intermediate_size": 128} if small else {"num_hidden_layers": 2})
    path = stream_file(out, SMALL_SHAPES if small else SHAPES, 12 if small else 100)
    strategies = SMALL_STRATEGIES if small else STRATEGIES
    cfg = BenchConfig(device=device, vary=["batch", "seq"], hf_config=hf, shapes=str(path),
                      strategy=strategies, replay=True, fresh_cache=fresh,
                      **({"repeat": 3, "warmup": 1} if small else {"repeat": 5}))
    t0, started = time.perf_counter(), time.time()
    result = run_bench("hf:BertModel", cfg)
    wall = time.perf_counter() - t0
    save_result(out, "stream", result)
    rows = []
    if result.eager_stream is not None:
        rep = result.eager_stream.replay
        rows.append({"strategy": "eager", "status": "pass", "compiles": 0,
                     "predicted_s": result.eager_stream.total_s,
                     "replayed_s": rep.measured_s if rep else None,
                     "new_shape_s": result.eager_stream.new_shape_s})
    for run in result.runs:
        replay = run.replay
        rows.append({"strategy": run.strategy, "status": str(run.status),
                     "compiles": run.compiles, "limit_hit": run.recompile_limit_hit,
                     "predicted_s": run.stream.total_s if run.stream else None,
                     "replayed_s": replay.measured_s if replay else None,
                     "replay_compiles": replay.compiles if replay else None,
                     # the compile seconds in each (the GPU's gap was there: lease 2)
                     "predicted_compile_s": run.stream.compile_s if run.stream else None,
                     "replayed_compile_s": replay.compile_s if replay else None,
                     "eager_share": run.eager_share,
                     "new_shape_s": run.stream.new_shape_s if run.stream else None})
    for r in rows:
        r["diff_pct"] = pct(r["predicted_s"], r["replayed_s"]) \
            if r["predicted_s"] is not None and r["replayed_s"] else None
    isolated = [r["strategy"] for r in rows if r["strategy"] != "eager"
                and r["status"] == "pass" and r["compiles"] > 0 and not r["limit_hit"]]
    return {"model": "hf:BertModel", "hf_config": hf, "requests": result.requests,
            "measured": result.measured.to_dict() if result.measured else None,
            "wall_s": wall, "started_unix": started, "rows": rows, "isolated": isolated,
            "isolation_ok": sorted(isolated) == sorted(strategies),
            "warnings": result.warnings, "recommendation":
            result.recommendation.strategy if result.recommendation else None}


def fmt(x: Any, spec: str = ".2f") -> str:
    return "-" if x is None or x != x else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where gpu_check.json goes")
    parser.add_argument("--small", action="store_true",
                        help="tiny sizes on CPU (the default without a GPU)")
    parser.add_argument("--reps", type=int, default=0, help="independent timings per shape")
    parser.add_argument("--warm-cache", action="store_true",
                        help="compile from torch's own caches, not empty ones per run")
    parser.add_argument("--parts", default="quickstart,stream",
                        help="which checks, comma-separated: quickstart, stream (both by "
                             "default; benchmarks/gpu_round.sh runs each under its own limit)")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts or parts - {"quickstart", "stream"}:
        parser.error(f"--parts: quickstart and/or stream, not {args.parts!r}")
    import torch

    cuda = torch.cuda.is_available()
    small = args.small or not cuda
    device = "cuda" if cuda and not args.small else "cpu"
    reps = args.reps or (5 if small else 20)
    fresh = not args.warm_cache
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    doc: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "python": sys.version.split()[0], "device": device,
        "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "small": small, "fresh_cache": fresh}
    path = args.out / "gpu_check.json"

    def save() -> None:  # after each part: a run cut short by a time limit keeps what it did
        doc["wall_s"] = time.perf_counter() - t0
        path.write_text(json.dumps(doc, indent=2, default=str) + "\n")

    print(f"gpu_check: torch {doc['torch']} on {doc['device_name']} ({device})", flush=True)
    if "quickstart" in parts:
        doc["quickstart"] = q = quickstart(small, device, reps, fresh, args.out)
        save()
        print(f"quickstart {q['model']}: {q['status']}, {q['compiles']} compiles, "
              f"{q['wall_s']:.0f} s; bench vs independent timing per shape (% apart; "
              "'loops': calls back to back, bench's way; 'before': eager before bench)")
        print(f"  {'batch':>5} {'eager ms':>9} {'ref':>8} {'%':>6} {'loops':>7} {'before':>7} "
              f"{'compiled':>9} {'ref':>8} {'%':>6} {'loops':>7}")
        for r in q["shapes"]:
            print(f"  {r['batch']!s:>5} {fmt(r['bench_eager_ms']):>9} "
                  f"{fmt(r['ref_eager_ms']):>8} {fmt(r['eager_diff_pct'], '+.1f'):>6} "
                  f"{fmt(r['ref_eager_loops_ms']):>7} {fmt(r['before_eager_ms']):>7} "
                  f"{fmt(r['bench_compiled_ms']):>9} {fmt(r['ref_compiled_ms']):>8} "
                  f"{fmt(r['compiled_diff_pct'], '+.1f'):>6} "
                  f"{fmt(r['ref_compiled_loops_ms']):>7}")
        print(f"  load: {q['load']}", flush=True)
    ok = True
    if "stream" in parts:
        doc["stream"] = s = transformer_stream(small, device, args.out, fresh)
        save()
        print(f"stream hf:BertModel {s['hf_config']}: {s['requests']} requests, "
              f"{s['wall_s']:.0f} s; {(s['measured'] or {}).get('driver', '?')}; "
              f"isolation {'ok' if s['isolation_ok'] else 'FAILED'}")
        print(f"  {'strategy':<10} {'status':<16} {'compiles':>8} {'predicted s':>11} "
              f"{'replayed s':>10} {'%':>6} {'compiling: predicted':>20} {'replayed':>8}")
        for r in s["rows"]:
            print(f"  {r['strategy']:<10} {r['status']:<16} {r['compiles']:>8} "
                  f"{fmt(r['predicted_s']):>11} {fmt(r['replayed_s']):>10} "
                  f"{fmt(r['diff_pct'], '+.0f'):>6} {fmt(r.get('predicted_compile_s')):>20} "
                  f"{fmt(r.get('replayed_compile_s')):>8}")
        ok = s["isolation_ok"]
    print(f"wrote {args.out / 'gpu_check.json'} ({doc['wall_s']:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

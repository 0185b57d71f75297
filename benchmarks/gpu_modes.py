"""Issue #35's modes table, re-measured by bench itself and checked against torch (the GPU check).

For each (strategy, compile mode) of the table — resnet18 over batch sizes 16, 24, 32, 48, 64,
32, 16; eager, default x {static, automatic}, reduce-overhead x {static, automatic} — one child
process runs ``dyncli.bench.run`` on that single run, under ``TORCH_LOGS=cudagraphs``, then
times the same shapes again on its own: a fresh ``torch.compile`` of the same model (the
inductor cache the bench run filled makes it quick), each shape's calls timed with CUDA events
(``time.perf_counter`` on CPU). The parent prints, per row: bench's compiles, its steady latency
at the smallest and largest size beside the independent timing and the % difference, peak memory
and the CUDA-graph pool, and the CUDA-graph recordings bench counted beside the ``Recording
function=`` lines torch logged during the bench run (the child marks where its own timing
starts; lines after the mark are not counted). Eager is timed by bench in every run (its
reference) and independently once, in the first child.

    python benchmarks/gpu_modes.py --out gpu-modes         # the GPU table (CUDA, at most 140 s)
    python benchmarks/gpu_modes.py --device cpu --small --out /tmp/modes   # the CPU check

``--small``: the tiny MLP of ``examples/model.py`` over sizes 2, 5, 2, rows default x
automatic, max-autotune-no-cudagraphs x static and reduce-overhead x automatic (not_applicable
on CPU). ``--budget-s`` (default 140: ``benchmarks/gpu_round.sh`` stops this part at 150 s)
bounds the whole run: a row that would start after it is skipped, a child still running at it
is stopped; each finished row is written at once to ``OUT/modes.json`` and ``OUT/modes.txt``
(and each child's bench JSON and torch log to ``OUT/<row>.json`` / ``OUT/<row>.log``). Exit
status 1 when bench's recordings differ from torch's logged ones.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MARK = "=== gpu_modes: independent timing starts ==="
RECORDING = "Recording function="
# (strategy, compile mode): the reduce-overhead rows first (the recordings check), static last
# (five compiles each)
ROWS = [("automatic", "reduce-overhead"), ("automatic", "default"),
        ("static", "reduce-overhead"), ("static", "default")]
SMALL_ROWS = [("automatic", "default"), ("static", "max-autotune-no-cudagraphs"),
              ("automatic", "reduce-overhead")]
SIZES = [16, 24, 32, 48, 64, 32, 16]
SMALL_SIZES = [2, 5, 2]
SMALL_MODEL = f"{ROOT / 'examples' / 'model.py'}:build"


# ---------------------------------------------------------------- child: one row


def _timer(device: str) -> Any:
    """``time(fn, calls) -> ms per call``: CUDA events on CUDA, perf_counter on CPU."""
    import torch

    def cuda(fn: Any, calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls

    def cpu(fn: Any, calls: int) -> float:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) * 1e3 / calls

    return cuda if device == "cuda" else cpu


def independent(model: str, device: str, sizes: list[int], strategy: str | None,
                compile_mode: str | None, samples: int, calls: int) -> dict[str, float]:
    """ms per call for each distinct size, ``torch.compile(mode=compile_mode, dynamic=False for
    static, None for automatic)`` of the model bench built (eager when ``strategy`` is None):
    the stream run once in order (each size called three times: warm-up, recording, replay),
    then per size the median of ``samples`` timings of ``calls`` calls each."""
    import torch

    from dyncli.bench.models import build

    torch._dynamo.reset()
    built = build(model, device=device, batch_size=None, seq_len=None, hf_config={},
                  training=False)
    net = built.model.to(device).eval()
    fn = net if strategy is None else torch.compile(
        net, mode=compile_mode, dynamic=False if strategy == "static" else None)
    base = built.args[0]
    inputs = {b: torch.randn(b, *base.shape[1:], device=device, dtype=base.dtype)
              for b in sizes}
    timer = _timer(device)
    out: dict[str, float] = {}
    with torch.no_grad():
        for b in sizes:
            for _ in range(3):
                fn(inputs[b])
        for b in dict.fromkeys(sizes):
            def call(x: Any = inputs[b]) -> Any:
                return fn(x)
            out[str(b)] = statistics.median(timer(call, calls) for _ in range(samples))
    return out


def child(spec: dict[str, Any]) -> None:
    """One row: bench's run, written at once, then the mark, then the independent timing."""
    import dyncli

    strategy, compile_mode = spec["strategy"], spec["compile_mode"]
    result = dyncli.bench.run(spec["model"], strategy=[strategy], compile_mode=[compile_mode],
                              sizes=spec["sizes"], device=spec["device"], repeat=spec["repeat"],
                              warmup=2, fresh_cache=False, process_each=False)
    out: dict[str, Any] = {"bench": result.to_dict()}
    Path(spec["json"]).write_text(json.dumps(out))
    sys.stderr.flush()
    print(MARK, file=sys.stderr, flush=True)
    run = result.runs[0]
    if run.status.value == "pass":
        out["independent"] = independent(spec["model"], spec["device"], spec["sizes"], strategy,
                                          compile_mode, spec["samples"], spec["calls"])
    if spec["eager"]:
        out["independent_eager"] = independent(spec["model"], spec["device"], spec["sizes"],
                                                None, None, spec["samples"], spec["calls"])
    Path(spec["json"]).write_text(json.dumps(out))


# ---------------------------------------------------------------- parent: the table


def _bench_ms(run: dict[str, Any], key: str) -> dict[str, float]:
    """A run's per-size median ms (``compiled_ms`` or ``eager_ms``) by batch size."""
    return {str(v["batch_size"]): v[key] for v in run.get("variations", [])
            if isinstance(v.get(key), (int, float))}


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or not b else (a - b) / b * 100


def row_of(label: str, got: dict[str, Any] | None, log: str, ends: tuple[str, str],
           error: str | None) -> dict[str, Any]:
    """One table row from a child's output and its torch log."""
    row: dict[str, Any] = {"row": label, "error": error}
    if not got:
        return row
    run = got["bench"]["runs"][0]
    graphs = run.get("cudagraphs") or {}
    logged = log.split(MARK, 1)[0].count(RECORDING)
    bench_ms, ind = _bench_ms(run, "compiled_ms"), got.get("independent") or {}
    row |= {"status": run["status"], "compiles": run.get("compiles"),
            "peak_memory_bytes": run.get("peak_memory_bytes"),
            "pool_bytes": graphs.get("pool_bytes"),
            "recordings_bench": graphs.get("recordings"), "recordings_logged": logged,
            "recorded_non_static_inputs": graphs.get("recorded_non_static_inputs"),
            "bench_ms": bench_ms, "independent_ms": ind,
            "diff_pct": {s: _diff(bench_ms.get(s), ind.get(s)) for s in ind}}
    if run.get("status") != "pass":
        row["error"] = run.get("error")
    if "independent_eager" in got:
        eager = _bench_ms(run, "eager_ms")
        row["eager"] = {"bench_ms": eager, "independent_ms": got["independent_eager"],
                        "diff_pct": {s: _diff(eager.get(s), v)
                                     for s, v in got["independent_eager"].items()}}
    return row


def _num(x: Any, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def render(rows: list[dict[str, Any]], ends: tuple[str, str], head: str) -> str:
    lo, hi = ends
    cols = ["config", "compiles", f"bench ms {lo}/{hi}", f"events ms {lo}/{hi}", "diff %",
            "peak MB", "pool MB", "recordings bench/log", "torch non_static"]
    lines = [head, " | ".join(cols)]

    def line(name: str, compiles: Any, b: dict, e: dict, d: dict, r: dict) -> str:
        def mb(key: str) -> str:
            return _num(r[key] / 2**20 if r.get(key) else None, "{:.0f}")

        rec = ("-" if r.get("recordings_bench") is None and not r.get("recordings_logged")
               else f"{_num(r.get('recordings_bench'), '{}')}/{r.get('recordings_logged')}")
        return " | ".join([name, _num(compiles, "{}"),
                           f"{_num(b.get(lo))} / {_num(b.get(hi))}",
                           f"{_num(e.get(lo))} / {_num(e.get(hi))}",
                           f"{_num(d.get(lo), '{:+.1f}')} / {_num(d.get(hi), '{:+.1f}')}",
                           mb("peak_memory_bytes"), mb("pool_bytes"), rec,
                           _num(r.get("recorded_non_static_inputs"), "{}")])

    for r in rows:
        if "eager" in r:
            e = r["eager"]
            lines.append(line("eager", 0, e["bench_ms"], e["independent_ms"], e["diff_pct"], {}))
    for r in rows:
        if r.get("status") == "pass":
            lines.append(line(r["row"], r["compiles"], r["bench_ms"], r["independent_ms"],
                              r["diff_pct"], r))
        else:
            lines.append(f"{r['row']} | {r.get('status') or 'not run'}: {r.get('error')}")
    return "\n".join(lines) + "\n"


def parent(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = SMALL_MODEL if args.small else args.model
    sizes = SMALL_SIZES if args.small else SIZES
    rows_spec = SMALL_ROWS if args.small else ROWS
    if args.rows:
        rows_spec = [(strategy, mode or "default") for r in args.rows.split(",") if r.strip()
                     for strategy, _, mode in [r.strip().partition("@")]]
    ends = (str(min(sizes)), str(max(sizes)))
    cache = tempfile.mkdtemp(prefix="gpu-modes-cache-")  # shared: the timing reuses bench's
    env = os.environ | {"TORCH_LOGS": "cudagraphs", "TORCHINDUCTOR_CACHE_DIR": cache,
                        "PYTHONPATH": os.pathsep.join(
                            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    # the machine and torch come from the first bench document (the parent imports no torch)
    head = f"gpu_modes: {model} sizes {sizes} on {args.device}, load {os.getloadavg()[0]:.2f}"
    try:
        for i, (strategy, mode) in enumerate(rows_spec):
            label = strategy if mode == "default" else f"{strategy}@{mode}"
            left = args.budget_s - (time.perf_counter() - t0)
            if left < 10:
                rows.append(row_of(label, None, "", ends, f"skipped: --budget-s {args.budget_s}"
                                   " spent"))
                continue
            spec = {"model": model, "strategy": strategy, "compile_mode": mode, "sizes": sizes,
                    "device": args.device, "repeat": args.repeat, "samples": args.samples,
                    "calls": args.calls, "eager": i == 0,
                    "json": str(out / f"{label}.json")}
            t_row = time.perf_counter()
            error = None
            with open(out / f"{label}.log", "w") as log:
                # a session of its own: a child stopped at the budget takes inductor's compile
                # workers with it
                proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)],
                                        env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
                try:
                    if proc.wait(timeout=left):
                        error = f"child exited {proc.returncode} (see {label}.log)"
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    error = f"stopped at --budget-s {args.budget_s} (see {label}.log)"
            path = Path(spec["json"])
            got = json.loads(path.read_text()) if path.exists() else None
            if got and "torch" not in head:
                e = got["bench"].get("environment") or {}
                head += (f"; {e.get('device_name')}, torch {e.get('torch')},"
                         f" python {e.get('python')}")
            row = row_of(label, got, (out / f"{label}.log").read_text(errors="replace"), ends,
                         error)
            row["wall_s"] = time.perf_counter() - t_row
            rows.append(row)
            print(f"{label}: {row.get('status') or error} in {row['wall_s']:.0f} s", flush=True)
            _write(out, head, rows, ends, t0)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    text = _write(out, head, rows, ends, t0)
    print(text, end="")
    bad = [r["row"] for r in rows if r.get("recordings_bench") is not None
           and r["recordings_bench"] != r["recordings_logged"]]
    if bad:
        print(f"recordings differ from torch's log: {', '.join(bad)}")
    return 1 if bad else 0


def _write(out: Path, head: str, rows: list[dict[str, Any]], ends: tuple[str, str],
           t0: float) -> str:
    wall = time.perf_counter() - t0
    text = render(rows, ends, head) + f"wall {wall:.0f} s\n"
    (out / "modes.json").write_text(json.dumps({"head": head, "rows": rows, "wall_s": wall},
                                               indent=1))
    (out / "modes.txt").write_text(text)
    return text


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", help="directory for modes.json, modes.txt and each row's files")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--small", action="store_true", help="the tiny MLP, 3 sizes (the CPU check)")
    p.add_argument("--model", default="resnet18")
    p.add_argument("--budget-s", type=float, default=140.0,
                   help="wall seconds for every row (benchmarks/gpu_round.sh gives this part 150)")
    p.add_argument("--repeat", type=int, default=10, help="bench's timed repetitions")
    p.add_argument("--samples", type=int, default=5, help="independent timings per size")
    p.add_argument("--calls", type=int, default=20, help="calls per independent timing")
    p.add_argument("--rows", help="the rows, in order, as STRATEGY or STRATEGY@MODE, "
                   "comma-separated (default: the table's four; the first also times eager)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0
    if not args.out:
        p.error("--out is required")
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())

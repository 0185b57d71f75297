"""Capture the TORCH_TRACE traces that only the trace side of diagnose needs.

Two cases, each a real torch.compile run (aot_eager backend, CPU, a few seconds):

``two_rank_diverge``
    Two processes joined by ``torch.distributed`` on gloo (no torchrun: this script spawns
    them with RANK/WORLD_SIZE/MASTER_ADDR set). Rank 0 sees batch sizes 2, 4, 6, recompiles
    once and makes ``L['x']`` dim 0 dynamic; rank 1 sees batch 4 three times and compiles
    once, statically. The ranks diverge in compile count and in dynamic decisions for the
    same source: the situation compiler collectives exist for.

``pgo_recompile``
    Profile-guided optimization: run 1 (not kept) varies the batch of ``x`` under
    ``TORCH_COMPILE_JOB_ID``, so torch writes PGO state marking ``L['x']`` dim 0 dynamic.
    Run 2 (kept) loads that state (``get_local_code_state``) and compiles ``x`` dynamic from
    the start, but now the width of ``y`` varies: the frame still recompiles for size.

Usage (from the repo root)::

    .venv/bin/python tests/data/make_rank_traces.py              # both cases
    .venv/bin/python tests/data/make_rank_traces.py pgo_recompile

Traces land in ``<data>/traces/<case>/``, ``<data>`` being the folder of the torch that runs
this script (``torch_versions.data_dir``: ``tests/data`` for 2.14.1, ``tests/data/2.15.0`` for
2.15.0); ``<data>/traces/RANK_RECIPE.md`` records how they were made.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))  # torch_versions, also when run as a --worker child
from torch_versions import data_dir  # noqa: E402

TRACES = data_dir() / "traces"
CASES = ("two_rank_diverge", "pgo_recompile")
BACKEND = "aot_eager"


# ------------------------------------------------------------------ worker programs


def _worker_two_rank() -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()

    def norm_rows(x):
        return torch.nn.functional.normalize(x, dim=-1).sum(dim=0)

    f = torch.compile(norm_rows, backend=BACKEND)
    batches = (2, 4, 6) if rank == 0 else (4, 4, 4)
    for batch in batches:
        out = f(torch.randn(batch, 8))
        dist.all_reduce(out)
    dist.destroy_process_group()


def _mix(x, y, w):
    # Module level on purpose: PGO keys frames by file hash, line and name (pgo.CodeId).
    return (x @ w).sum(dim=0) + y.mean()


def _worker_pgo(run: str) -> None:
    import torch

    f = torch.compile(_mix, backend=BACKEND)
    w = torch.ones(8, 8)
    if run == "1":
        for batch in (2, 4, 6):
            f(torch.randn(batch, 8), torch.randn(3, 5), w)
    else:
        for batch, width in ((3, 5), (5, 7), (7, 9)):
            f(torch.randn(batch, 8), torch.randn(3, width), w)


# ------------------------------------------------------------------ capture


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", **extra}
    env.pop("TORCH_LOGS", None)
    return env


def capture_two_rank(trace_dir: Path) -> list[str]:
    """Run two gloo ranks, each writing its own rank_N trace file into ``trace_dir``."""
    port = str(_free_port())
    procs = []
    for rank in (0, 1):
        env = _env({"TORCH_TRACE": str(trace_dir), "RANK": str(rank), "WORLD_SIZE": "2",
                    "LOCAL_RANK": str(rank), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port})
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker", "two_rank"],
                                      env=env, stdout=subprocess.DEVNULL))
    codes = [p.wait(timeout=300) for p in procs]
    if any(codes):
        raise SystemExit(f"two_rank_diverge: worker exit codes {codes}")
    return ["RANK=0|1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=<free>",
            f"python {Path(__file__).relative_to(ROOT)} --worker two_rank"]


def capture_pgo(trace_dir: Path) -> list[str]:
    """Run the PGO program twice with one job id and a private cache; keep run 2's trace."""
    with tempfile.TemporaryDirectory(prefix="dyncli-pgo-") as cache:
        common = {"TORCH_COMPILE_JOB_ID": "dyncli-pgo-test", "TORCHINDUCTOR_CACHE_DIR": cache}
        for run, trace in (("1", str(Path(cache) / "run1-trace")), ("2", str(trace_dir))):
            subprocess.run([sys.executable, __file__, "--worker", "pgo", run],
                           env=_env({**common, "TORCH_TRACE": trace}), check=True,
                           stdout=subprocess.DEVNULL)
    return ["TORCH_COMPILE_JOB_ID=dyncli-pgo-test TORCHINDUCTOR_CACHE_DIR=<tmp>",
            f"python {Path(__file__).relative_to(ROOT)} --worker pgo 1  (trace discarded)",
            f"python {Path(__file__).relative_to(ROOT)} --worker pgo 2  (trace kept)"]


def main() -> int:
    """Capture the selected cases (default: all), one at a time, and write the recipe."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help=f"cases to capture (default: {', '.join(CASES)})")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.worker[0] == "two_rank":
            _worker_two_rank()
        else:
            _worker_pgo(args.worker[1])
        return 0
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    import torch

    rows = []
    for case in args.cases or CASES:
        trace_dir = TRACES / case
        shutil.rmtree(trace_dir, ignore_errors=True)
        trace_dir.mkdir(parents=True)
        start = time.perf_counter()
        steps = capture_two_rank(trace_dir) if case == "two_rank_diverge" else capture_pgo(trace_dir)
        secs = time.perf_counter() - start
        files = sorted(p.name for p in trace_dir.iterdir())
        print(f"{case}: {secs:.1f}s, {len(files)} file(s)", flush=True)
        rows.append(f"| `{case}` | {'<br>'.join(f'`{s}`' for s in steps)} | {len(files)} | {secs:.1f} |")
    recipe = TRACES / "RANK_RECIPE.md"
    recipe.write_text("\n".join([
        "# How the trace-only cases were made",
        "",
        "Generated by `tests/data/make_rank_traces.py` (re-run it to refresh; files are raw).",
        "",
        f"- torch: {torch.__version__}; python {platform.python_version()}, CPU only, backend `{BACKEND}`",
        f"- environment: `TORCH_TRACE={TRACES.relative_to(ROOT)}/<case>/ OMP_NUM_THREADS=1`",
        "",
        "| case | steps | files | seconds |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

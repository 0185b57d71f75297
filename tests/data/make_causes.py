"""Record the root-cause cases of ``dyncli diagnose`` (issue 21) under the torch that runs it.

Each program of ``tests/data/programs/causes/`` runs under real ``torch.compile`` (CPU,
``aot_eager`` unless the program picks Inductor) with BOTH

    TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks"   (stderr -> <case>/run.log)
    TORCH_TRACE=<case>/trace/                              (the same run's trace)

and, for the cases that need PGO state, ``TORCH_COMPILE_JOB_ID`` with a private
``TORCHINDUCTOR_CACHE_DIR`` whose ``dynamo/code_state_*.pkl`` files are kept in
``<case>/pgo/dynamo/``. ``pgo_branch`` runs twice (run 1 writes the state, run 2, kept, loads
it). Output: ``tests/data/<torch version>/causes/<case>/``, with ``RECIPE.md`` beside it.

Usage (from the repo root; one program at a time, seconds each on CPU)::

    /work/venv315/bin/python tests/data/make_causes.py             # every case, torch 2.15
    /work/venv314/bin/python tests/data/make_causes.py size_branch  # one case, torch 2.14
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = HERE / "programs" / "causes"
TORCH_LOGS = "+dynamic,recompiles,guards,graph_breaks"
PGO_CASES = {"pgo_branch": ("1", ""), "four_frames": ("",)}  # runs; the last one is kept


def cases() -> list[str]:
    """Every program, by name."""
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def run_case(case: str, out: Path) -> tuple[list[str], float, int]:
    """Run one program (twice for pgo_branch); keep the last run's log, trace and PGO state."""
    dest = out / case
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    runs = PGO_CASES.get(case, ("",))
    steps: list[str] = []
    start = time.perf_counter()
    rc = 0
    with tempfile.TemporaryDirectory(prefix="dyncli-causes-") as tmp:
        for i, arg in enumerate(runs):
            kept = i == len(runs) - 1
            env = {**os.environ, "OMP_NUM_THREADS": "1", "TORCH_LOGS": TORCH_LOGS,
                   "TORCHINDUCTOR_CACHE_DIR": f"{tmp}/cache",
                   "TORCH_TRACE": str(dest / "trace") if kept else f"{tmp}/trace{i}"}
            if case in PGO_CASES:
                env["TORCH_COMPILE_JOB_ID"] = f"dyncli-{case}"
            argv = [sys.executable, str(PROGRAMS / f"{case}.py"), *([arg] if arg else [])]
            log = dest / "run.log" if kept else Path(tmp) / f"run{i}.log"
            with log.open("wb") as err:
                rc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                    stderr=err, check=False).returncode
            job = f"TORCH_COMPILE_JOB_ID=dyncli-{case} " if case in PGO_CASES else ""
            steps.append(f"{job}python {Path(argv[1]).relative_to(ROOT)} {arg}".rstrip()
                         + ("" if kept else "  (not kept)"))
            if rc:
                break
        pgo = sorted(Path(tmp, "cache", "dynamo").glob("code_state_*.pkl"))
        if case in PGO_CASES and pgo:
            (dest / "pgo" / "dynamo").mkdir(parents=True)
            for pkl in pgo:
                shutil.copy(pkl, dest / "pgo" / "dynamo" / pkl.name)
    return steps, time.perf_counter() - start, rc


def main() -> int:
    """Record the selected cases (default: all) and write the recipe."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="cases (default: every program)")
    args = parser.parse_args()
    import torch  # only the recording needs torch

    version = torch.__version__.split("+")[0]
    out = HERE / version / "causes"
    out.mkdir(parents=True, exist_ok=True)
    recipe = out / "RECIPE.md"
    old = {line.split("`")[1]: line for line in (recipe.read_text().splitlines()
                                                  if recipe.exists() else [])
           if line.startswith("| `")}
    for case in args.cases or cases():
        steps, secs, rc = run_case(case, out)
        print(f"{case}: exit {rc}, {secs:.1f} s", flush=True)
        old[case] = (f"| `{case}` | {'<br>'.join(f'`{s}`' for s in steps)} | {rc} | {secs:.1f} |")
    recipe.write_text("\n".join([
        "# How these cases were recorded",
        "",
        "By `tests/data/make_causes.py` (re-run it to refresh; the files are raw, unnormalized).",
        "",
        f"- torch {torch.__version__}, python {platform.python_version()}, CPU only",
        f"- environment: `TORCH_LOGS=\"{TORCH_LOGS}\" TORCH_TRACE=<case>/trace "
        "TORCHINDUCTOR_CACHE_DIR=<tmp> OMP_NUM_THREADS=1`; stderr is `<case>/run.log`",
        "",
        "| case | command(s) | exit | seconds |",
        "| --- | --- | --- | --- |",
        *[old[k] for k in sorted(old)],
        "",
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

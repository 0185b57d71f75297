"""Record real ``dyncli bench`` JSON documents: the golden documents of the bench result model.

Each case runs the real CLI (real torch.compile on CPU, the tiny MLP of ``examples/model.py``)
and writes ``tests/data/<torch version>/bench/<case>.json``. The unit tests read every one back
through ``BenchResult.from_dict`` / ``to_dict`` (and the suite ones through the suite reader):
the documents are the JSON contract, the code must keep reading and writing them unchanged.
``RECIPE.md`` beside them records the command lines, the torch version and the date.

Usage (from the repo root, a minute or two on 2 cores):

    PYTHONPATH=$PWD /work/venv315/bin/python tests/data/make_bench_docs.py
    PYTHONPATH=$PWD /work/venv315/bin/python tests/data/make_bench_docs.py stream
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODEL = "examples/model.py:build"
SUITE_TOML = """\
description = "One tiny model, for the golden suite document."
[bench]
variations = 2
repeat = 3
warmup = 0
[[models]]
model = "examples/model.py:build"
name = "mlp"
[[models]]
model = "examples/nonexistent.py:build"
name = "missing"
"""

# case -> extra CLI arguments (after ``dyncli bench``); every case runs on CPU.
CASES: dict[str, list[str]] = {
    # a request stream: stream costs, the recommendation, pad buckets, eager-then-compile
    "stream": [MODEL, "--strategy", "static,automatic,pad,eager-then-compile",
               "--sizes", "1,3,8,8,5,3", "--buckets", "4,8", "--repeat", "3", "--warmup", "0",
               "--warm-cache"],
    # the seeded plan: variations, recompile reasons, mark-dynamic, training mode
    "plan": [MODEL, "--strategy", "static,mark-dynamic", "--variations", "3", "--repeat", "3",
             "--warmup", "0", "--mode", "training"],
    # pgo's cold and warm passes, and --replay of the stream (measured against predicted)
    "pgo": [MODEL, "--strategy", "pgo,dynamic", "--sizes", "2,4,8,4", "--replay", "--repeat", "3",
            "--warmup", "0"],
    # two ranks under torch.distributed's launcher
    "ranks": [MODEL, "--strategy", "automatic", "--nproc", "2", "--variations", "2",
              "--repeat", "2", "--warmup", "0", "--rank-shapes", "skewed"],
    # a suite: models[], one model that cannot load
    "suite": ["--suite", "{suite}", "--strategy", "static"],
}


def record(case: str, out_dir: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "golden.toml"
        suite.write_text(SUITE_TOML, encoding="utf-8")
        args = [a.replace("{suite}", str(suite)) for a in CASES[case]]
        out = out_dir / f"{case}.json"
        cmd = [sys.executable, "-m", "dyncli", "bench", *args, "--device", "cpu",
               "--json", str(out)]
        env = os.environ | {"PYTHONPATH": str(ROOT)}
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(f"{case}: exit {proc.returncode}\n{proc.stderr}")
    shown = " ".join(CASES[case]).replace("{suite}", "golden.toml")
    return f"- `{case}.json`: `dyncli bench {shown} --device cpu --json {case}.json`"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help=f"some of {', '.join(CASES)} (default: all)")
    cases = parser.parse_args().cases or list(CASES)
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    import torch

    out_dir = HERE / torch.__version__.split("+")[0] / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [record(case, out_dir) for case in cases]
    recipe = out_dir / "RECIPE.md"
    if recipe.exists() and set(cases) != set(CASES):  # keep the lines of the cases not re-run
        kept = [ln for ln in recipe.read_text(encoding="utf-8").splitlines()
                if ln.startswith("- `") and ln[3:].split(".json")[0] not in cases]
        lines = sorted(kept + lines)
    recipe.write_text(
        "# Golden bench documents\n\nRecorded by `tests/data/make_bench_docs.py` with torch "
        f"{torch.__version__}, Python {sys.version.split()[0]}, on "
        f"{datetime.date.today().isoformat()} (CPU). The suite file `golden.toml` is in the "
        "script.\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

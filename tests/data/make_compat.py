"""Record the compatibility corpus: the same tiny programs under each torch release.

For each version given, a throwaway venv ``/work/venvs/25-t<version>`` gets that torch from
pip (the machine-wide constraint lifted with ``PIP_CONSTRAINT=``), the programs of
``tests/data/compat_program.py`` run under it, and the venv is deleted afterwards (each is
~5 GB: PyPI's Linux wheels are CUDA builds; pip serves no CPU-only build here). 2.14.1 and
2.15.0 use the shared /work/venv314 and /work/venv315 as they are.

What lands in ``tests/data/<torch version>/compat/``::

    text.log       TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" of ``single``
    trace/         TORCH_TRACE of the same run of ``single``
    ranks/         TORCH_TRACE of ``ranks``: two ranks, gloo, ``python -m torch.distributed.run``
    pgo/           (torch >= 2.6) TORCH_TRACE of the second ``pgo`` run, which loads PGO state,
                   and the state file torch wrote (``*.pkl``)
    RECIPE.md      the commands, the torch version, the seconds

Usage::

    python3 tests/data/make_compat.py 2.3.1 2.5.1 2.9.1 2.14.1 2.15.0
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "compat_program.py"
SHARED = {"2.14.1": Path("/work/venv314"), "2.15.0": Path("/work/venv315")}
TEXT_LOGS = "+dynamic,recompiles,guards,graph_breaks"


def _venv(version: str) -> tuple[Path, bool]:
    """(venv, made here): the shared venv of 2.14.1/2.15.0, else a fresh one with that torch."""
    if version in SHARED:
        return SHARED[version], False
    venv = Path(f"/work/venvs/25-t{version}")
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        extra = ["numpy<2"] if tuple(map(int, version.split(".")[:2])) < (2, 4) else []
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"torch=={version}", *extra],
                       check=True, env={**os.environ, "PIP_CONSTRAINT": ""})
    return venv, True


def _run(py: Path, args: list[str], env: dict[str, str], stderr: Path | None = None) -> float:
    start = time.perf_counter()
    with open(stderr or os.devnull, "wb") as err:
        subprocess.run([str(py), *args], env=env, stderr=err, stdout=subprocess.DEVNULL,
                       check=True, timeout=900, cwd=HERE)
    return time.perf_counter() - start


def record(version: str) -> None:
    venv, made = _venv(version)
    py = venv / "bin" / "python"
    real = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    out = HERE / version / "compat"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    base = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "",
            "PYTHONPATH": "", "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="25-compat-")}
    rows = []
    secs = _run(py, [str(PROGRAM), "single"],
                {**base, "TORCH_LOGS": TEXT_LOGS, "TORCH_TRACE": str(out / "trace")},
                stderr=out / "text.log")
    rows.append(("text.log, trace/", f'TORCH_LOGS="{TEXT_LOGS}" TORCH_TRACE=trace/ '
                 "python compat_program.py single 2> text.log", secs))
    secs = _run(py, ["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
                     "29531", str(PROGRAM), "ranks"], {**base, "TORCH_TRACE": str(out / "ranks")})
    rows.append(("ranks/", "TORCH_TRACE=ranks/ python -m torch.distributed.run "
                 "--nproc_per_node 2 compat_program.py ranks", secs))
    has_pgo = subprocess.run([str(py), "-c", "import torch._dynamo.pgo"],
                             capture_output=True, check=False).returncode == 0
    if has_pgo:
        env = {**base, "TORCH_COMPILE_JOB_ID": "dyncli-compat"}
        _run(py, [str(PROGRAM), "pgo"], env)
        secs = _run(py, [str(PROGRAM), "pgo"], {**env, "TORCH_TRACE": str(out / "pgo")})
        states = [p for p in Path(base["TORCHINDUCTOR_CACHE_DIR"]).rglob("*code_state*")
                  if not p.name.endswith(".lock")]
        for state in states:
            shutil.copy(state, out / "pgo" / state.name)
        if states:
            rows.append(("pgo/", "TORCH_COMPILE_JOB_ID=dyncli-compat python compat_program.py "
                         "pgo (twice; the second with TORCH_TRACE=pgo/), state file copied", secs))
        else:  # torch._dynamo.pgo exists, but local PGO is off by default in this release
            shutil.rmtree(out / "pgo")
            has_pgo = False
    shutil.rmtree(base["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
    lines = [f"# Compatibility corpus: torch {real}", "",
             "Made by `python3 tests/data/make_compat.py " + version + "` (programs: "
             "`tests/data/compat_program.py`); python 3.11, CPU only, backend `eager`, "
             "`OMP_NUM_THREADS=1`. Files are raw.", "",
             "| files | command | seconds |", "| --- | --- | --- |"]
    lines += [f"| `{f}` | `{c}` | {s:.1f} |" for f, c, s in rows]
    if not has_pgo:
        lines += ["", "No PGO state: this release has no `torch._dynamo.pgo`, or does not write "
                  "local PGO state by default."]
    (out / "RECIPE.md").write_text("\n".join(lines) + "\n")
    if made:
        shutil.rmtree(venv)
    print(f"{version}: recorded in {out}")


if __name__ == "__main__":
    for v in sys.argv[1:]:
        record(v)

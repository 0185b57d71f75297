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
    backend.log    TORCH_LOGS text of ``compat_backend.py`` (a new backend callable for each
    backend/       compile), and its TORCH_TRACE
    RECIPE.md      the commands, the torch version, the seconds

Usage::

    python3 tests/data/make_compat.py 2.3.1 2.5.1 2.9.1 2.14.1 2.15.0
    python3 tests/data/make_compat.py --only backend --venv 2.15.0=.venv 2.9.1 2.15.0

``--only PART`` records that part alone (``single``, ``ranks``, ``pgo``, ``backend``) and keeps
the others and their RECIPE.md rows; ``--venv VERSION=PATH`` runs that release from a venv that
holds it already (kept afterwards) instead of a throwaway one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "compat_program.py"
BACKEND = HERE / "compat_backend.py"  # its own file: compat_program.py's PGO state names its hash
TEXT_LOGS = "+dynamic,recompiles,guards,graph_breaks"
PARTS = ("single", "ranks", "pgo", "backend")


def _venv(version: str, given: dict[str, Path]) -> tuple[Path, bool]:
    """(venv, made here): the venv given for this release, else a fresh one with that torch."""
    if version in given:
        return given[version], False
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


def _pgo(py: Path, out: Path, base: dict[str, str]) -> tuple[str, str, float] | None:
    """The pgo part (None where the release has no local PGO state to record)."""
    if subprocess.run([str(py), "-c", "import torch._dynamo.pgo"], capture_output=True,
                      check=False).returncode != 0:
        return None
    shutil.rmtree(out / "pgo", ignore_errors=True)
    env = {**base, "TORCH_COMPILE_JOB_ID": "dyncli-compat"}
    _run(py, [str(PROGRAM), "pgo"], env)
    secs = _run(py, [str(PROGRAM), "pgo"], {**env, "TORCH_TRACE": str(out / "pgo")})
    states = [p for p in Path(base["TORCHINDUCTOR_CACHE_DIR"]).rglob("*code_state*")
              if not p.name.endswith(".lock")]
    for state in states:
        shutil.copy(state, out / "pgo" / state.name)
    if not states:  # torch._dynamo.pgo exists, but local PGO is off by default in this release
        shutil.rmtree(out / "pgo")
        return None
    return ("pgo/", "TORCH_COMPILE_JOB_ID=dyncli-compat python compat_program.py pgo (twice; "
            "the second with TORCH_TRACE=pgo/), state file copied", secs)


def _part(part: str, py: Path, out: Path, base: dict[str, str]) -> tuple[str, str, float] | None:
    """Record one part into ``out``: its RECIPE.md row (files, command, seconds)."""
    if part == "single":
        shutil.rmtree(out / "trace", ignore_errors=True)
        secs = _run(py, [str(PROGRAM), "single"],
                    {**base, "TORCH_LOGS": TEXT_LOGS, "TORCH_TRACE": str(out / "trace")},
                    stderr=out / "text.log")
        return ("text.log, trace/", f'TORCH_LOGS="{TEXT_LOGS}" TORCH_TRACE=trace/ '
                "python compat_program.py single 2> text.log", secs)
    if part == "ranks":
        shutil.rmtree(out / "ranks", ignore_errors=True)
        secs = _run(py, ["-m", "torch.distributed.run", "--nproc_per_node", "2",
                         "--master_port", "29531", str(PROGRAM), "ranks"],
                    {**base, "TORCH_TRACE": str(out / "ranks")})
        return ("ranks/", "TORCH_TRACE=ranks/ python -m torch.distributed.run "
                "--nproc_per_node 2 compat_program.py ranks", secs)
    if part == "pgo":
        return _pgo(py, out, base)
    shutil.rmtree(out / "backend", ignore_errors=True)
    secs = _run(py, [str(BACKEND)],
                {**base, "TORCH_LOGS": TEXT_LOGS, "TORCH_TRACE": str(out / "backend")},
                stderr=out / "backend.log")
    return ("backend.log, backend/", f'TORCH_LOGS="{TEXT_LOGS}" TORCH_TRACE=backend/ '
            "python compat_backend.py 2> backend.log", secs)


_NO_PGO = ("No PGO state: this release has no `torch._dynamo.pgo`, or does not write local PGO "
           "state by default.")


def _rows(recipe: Path) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """The rows of an existing RECIPE.md, by their files cell, and its lines after the table."""
    rows: dict[str, tuple[str, str, str]] = {}
    notes: list[str] = []
    if recipe.exists():
        lines = recipe.read_text().splitlines()
        end = 0
        for i, line in enumerate(lines):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| `") and len(cells) == 3:
                rows[cells[0].strip("`")] = (cells[0].strip("`"), cells[1].strip("`"), cells[2])
                end = i + 1
        notes = lines[end:] if end else []
    return rows, notes


def record(version: str, parts: tuple[str, ...], given: dict[str, Path]) -> None:
    venv, made = _venv(version, given)
    py = venv / "bin" / "python"
    real = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    if real.split("+")[0] != version:
        sys.exit(f"{venv} holds torch {real}, not {version}")
    out = HERE / version / "compat"
    recipe = out / "RECIPE.md"
    kept, notes = _rows(recipe) if parts != PARTS else ({}, [])
    if parts == PARTS:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    base = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "",
            "PYTHONPATH": "", "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="25-compat-")}
    for part in parts:
        row = _part(part, py, out, base)
        if row is not None:
            kept[row[0]] = (row[0], row[1], f"{row[2]:.1f}")
    shutil.rmtree(base["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
    order = ["text.log, trace/", "ranks/", "pgo/", "backend.log, backend/"]
    lines = [f"# Compatibility corpus: torch {real}", "",
             "Made by `python3 tests/data/make_compat.py " + version + "` (programs: "
             "`tests/data/compat_program.py`); python 3.11, CPU only, backend `eager`, "
             "`OMP_NUM_THREADS=1`. Files are raw.", "",
             "| files | command | seconds |", "| --- | --- | --- |"]
    lines += [f"| `{f}` | `{c}` | {s} |" for f, c, s in sorted(
        kept.values(), key=lambda r: order.index(r[0]) if r[0] in order else len(order))]
    if "pgo" not in parts and any(n.strip() for n in notes):
        lines += notes  # the pgo part was not recorded again: its note stays as it was
    elif "pgo/" not in kept:
        lines += ["", _NO_PGO]
    recipe.write_text("\n".join(lines) + "\n")
    if made:
        shutil.rmtree(venv)
    print(f"{version}: recorded {', '.join(parts)} in {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="record this part alone (repeatable); the others are kept")
    parser.add_argument("--venv", action="append", default=[], metavar="VERSION=PATH",
                        help="a venv that already holds that release (kept afterwards)")
    args = parser.parse_args()
    given = {}
    for item in args.venv:
        version, sep, path = item.partition("=")
        if not sep:
            parser.error(f"--venv {item!r}: expected VERSION=PATH")
        given[version] = Path(path).resolve()
    parts = tuple(p for p in PARTS if p in args.only) if args.only else PARTS
    for v in args.versions:
        record(v, parts, given)


if __name__ == "__main__":
    main()

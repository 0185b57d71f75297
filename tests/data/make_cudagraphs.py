"""Record a CUDA-graph log and trace for diagnose's tests (run on a machine with a GPU).

Runs ``tests/data/2.11.0/cudagraphs/program.py`` (or ``--program``: any program that prints a
``TRUTH {json}`` line) ONCE under

    TORCH_LOGS="+dynamic,recompiles,graph_breaks,guards,cudagraphs"   (stderr -> cuda_run.log.gz)
    TORCH_TRACE=<tmp>                                                 (-> trace.log.gz)

and writes both, gzipped, with a README.md that records the command, the machine, the torch
and what torch itself counted (the program's ``TRUTH`` line: its counters, among them
``cudagraph_recorded_non_static_inputs``), into ``<data>/cudagraphs/`` where ``<data>`` is the
folder of the torch that runs this script (``torch_versions.data_dir``; ``--out`` to choose).
The files are not normalized: file paths and pids stay as torch wrote them.

Usage (from the repo root, on the GPU machine; about a minute):

    .venv/bin/python tests/data/make_cudagraphs.py
    .venv/bin/python tests/data/make_cudagraphs.py --out /tmp/cg   # somewhere else

The recording in ``tests/data/2.11.0/cudagraphs/`` was made with this program on an NVIDIA
H200 under torch 2.11.0+cu130 (``README.md`` there); no GPU was lent when this script was
written, so recordings under other releases are still to be made with it.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from torch_versions import data_dir, torch_version  # noqa: E402

LOGS = "+dynamic,recompiles,graph_breaks,guards,cudagraphs"
PROGRAM = HERE / "2.11.0" / "cudagraphs" / "program.py"


def record(program: Path, out: Path) -> str:
    """Run ``program`` once under TORCH_LOGS and TORCH_TRACE; write the gzipped log and trace
    into ``out``; return the program's ``TRUTH`` line."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as trace_dir:
        env = {**os.environ, "TORCH_LOGS": LOGS, "TORCH_TRACE": trace_dir}
        run = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                             text=True, timeout=600, check=False)
        if run.returncode != 0:
            raise SystemExit(f"{program} failed ({run.returncode}):\n{run.stderr[-4000:]}")
        with gzip.open(out / "cuda_run.log.gz", "wt") as f:
            f.write(run.stderr)
        traces = sorted(Path(trace_dir).glob("dedicated_log_torch_trace*.log"))
        if len(traces) != 1:
            raise SystemExit(f"expected one trace file, found {len(traces)}")
        with traces[0].open("rb") as src, gzip.open(out / "trace.log.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    truth = [line for line in run.stdout.splitlines() if line.startswith("TRUTH ")]
    return truth[-1] if truth else "(the program printed no TRUTH line)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--program", type=Path, default=PROGRAM)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device (CUDA graphs are recorded only there)")
    out = args.out or data_dir() / "cudagraphs"
    truth = record(args.program, out)
    if args.program.resolve() != (out / "program.py").resolve():
        shutil.copy(args.program, out / "program.py")
    (out / "README.md").write_text(
        f"# CUDA-graph recording: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"Python {platform.python_version()}\n\n"
        f"Made by `tests/data/make_cudagraphs.py` (torch {torch_version()}):\n\n"
        f"    TORCH_TRACE=<dir> TORCH_LOGS={LOGS} python program.py 2> cuda_run.log\n\n"
        "- `cuda_run.log.gz`: the TORCH_LOGS text (stderr), gzipped.\n"
        "- `trace.log.gz`: the TORCH_TRACE file, gzipped.\n\n"
        f"torch's own counters at the end (the program's last line of stdout):\n\n    {truth}\n")
    print(f"wrote {out}: {truth}")


if __name__ == "__main__":
    main()

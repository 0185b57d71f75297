"""Record recording.py's records of failed ShapeEnv calls with the installed torch.

    python tests/data/make_shape_env_failed.py    # under each venv: tests/data/<torch>/shape_env_failed/

Runs tests/data/programs/shape_env_failed.py under TORCH_LOGS="dynamic" (recording.py writes
each record's traceback at INFO): one evaluate_expr that raises GuardOnDataDependentSymNode and
one that raises the hint check's AssertionError, both caught by the program. The record's head
is the same for both; only its traceback's last line tells them apart, which
tests/unit/test_recorded_failures.py reads (recorded under 2.4.1 and 2.15.0).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def main() -> int:
    out = HERE / torch.__version__.split("+")[0] / "shape_env_failed"
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH")}
    env.update(TORCH_LOGS="dynamic", OMP_NUM_THREADS="1")
    with (out / "run.log").open("wb") as err:
        subprocess.run([sys.executable, str(HERE / "programs" / "shape_env_failed.py")], env=env,
                       cwd=HERE.parents[1], stdout=subprocess.DEVNULL, stderr=err, check=True,
                       timeout=600)
    print(out / "run.log")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

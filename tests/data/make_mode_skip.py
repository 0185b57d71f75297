"""Record the +dynamo log of tests/data/programs/under_a_mode.py with the installed torch.

    python tests/data/make_mode_skip.py    # under each venv: writes tests/data/<torch>/mode_skip/

torch 2.11 keeps dynamo's skip of a frame first called under a TorchDispatchMode for every
later call (the function never compiles); 2.14.1 and 2.15 compile it once the mode is gone
(pytorch#186085). tests/unit/test_diagnose_constraints.py reads both logs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def main() -> int:
    out = HERE / torch.__version__.split("+")[0] / "mode_skip"
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH")}
    env.update(TORCH_LOGS="+dynamo", OMP_NUM_THREADS="1")
    with (out / "under_a_mode.log").open("wb") as err:
        subprocess.run([sys.executable, str(HERE / "programs" / "under_a_mode.py")], env=env,
                       cwd=HERE.parents[1], stdout=subprocess.DEVNULL, stderr=err, check=True,
                       timeout=600)
    print(out / "under_a_mode.log")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

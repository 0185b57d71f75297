"""Record a guard_fail_fn's print of torch's GuardFail with the installed torch.

    python tests/data/make_guard_fail.py    # under each venv: tests/data/<torch>/guard_fail/

Runs tests/data/programs/guard_fail_print.py without TORCH_LOGS; its stdout (the program's
print of each GuardFail) is the log. 2.15.0's reasons name their cache entry ("0/1: …"),
2.4.1's do not; tests/unit/test_paste_hunt35a_readings.py reads both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def main() -> int:
    out = HERE / torch.__version__.split("+")[0] / "guard_fail"
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH")}
    env.update(OMP_NUM_THREADS="1")
    with (out / "run.log").open("wb") as log:
        subprocess.run(
            [sys.executable, str(HERE / "programs" / "guard_fail_print.py")],
            env=env,
            cwd=HERE.parents[1],
            stdout=log,
            stderr=subprocess.DEVNULL,
            check=True,
            timeout=600,
        )
    print(out / "run.log")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

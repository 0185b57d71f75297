"""Run one of tests/data/programs/ under the installed torch and keep its log: the recorders'
one way (make_guard_fail.py, make_mode_skip.py, make_shape_env_failed.py).

The program runs from the repository's root with torch's own variables (TORCH_*) removed from
the environment, one OpenMP thread, and ``TORCH_LOGS`` as given; the stream that is the log
(stderr for torch's logging, stdout for a program's own prints) goes to
``tests/data/<torch release>/<folder>/<name>``, the other is dropped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def record(
    program: str, folder: str, name: str, torch_logs: str | None, stream: str = "stderr"
) -> Path:
    """The path of the log written; raises CalledProcessError where the program failed."""
    import torch

    out = HERE / torch.__version__.split("+")[0] / folder
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH")}
    env["OMP_NUM_THREADS"] = "1"
    if torch_logs is not None:
        env["TORCH_LOGS"] = torch_logs
    with (out / name).open("wb") as log:
        kept, dropped = (log, subprocess.DEVNULL)
        stdout, stderr = (kept, dropped) if stream == "stdout" else (dropped, kept)
        subprocess.run(
            [sys.executable, str(HERE / "programs" / program)],
            env=env,
            cwd=HERE.parents[1],
            stdout=stdout,
            stderr=stderr,
            check=True,
            timeout=600,
        )
    print(out / name)
    return out / name

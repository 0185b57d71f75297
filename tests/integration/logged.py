"""A program run as a user runs it, its stderr the log diagnose reads (the fix tests' one way)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_logged(code: str, log: Path, logs: str = "", env: Mapping[str, str] | None = None,
               check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (``python -c``) under TORCH_LOGS=``logs`` (empty: unset, torch's default
    warnings: torch 2.15 fails to import under an empty TORCH_LOGS) and ``env``, one OpenMP
    thread, its stderr written to ``log``; its stdout as text."""
    full = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {"OMP_NUM_THREADS": "1"}
    if logs:
        full["TORCH_LOGS"] = logs
    with open(log, "wb") as err:
        return subprocess.run([sys.executable, "-c", code], env=full | dict(env or {}),
                              stderr=err, stdout=subprocess.PIPE, text=True, check=check,
                              timeout=300)

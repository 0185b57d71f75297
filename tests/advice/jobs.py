"""Run jobs of ``runner.py`` in one subprocess (the tests' one way to do the torch work)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).resolve().parent / "runner.py"


def run_jobs(jobs: list[dict[str, Any]], work: Path, name: str) -> list[dict[str, Any]]:
    """Write ``jobs`` to ``work/<name>.jobs.json``, run them, return the runner's results."""
    spec, out = work / f"{name}.jobs.json", work / f"{name}.results.json"
    spec.write_text(json.dumps(jobs))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "TORCHDYNAMO_"))}
    env.update(OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(work / "inductor"))
    proc = subprocess.run([sys.executable, str(RUNNER), str(spec), str(out)],
                          env=env, capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return list(json.loads(out.read_text()))

"""The suggested allow-list really saves compiles: cold vs PGO-warm vs suggested, real torch.

Each program of tests/data/make_pgo.py runs in a fresh subprocess three ways and reports
torch's own ``counters["stats"]["unique_graphs"]``:

- cold: ``TORCH_COMPILE_JOB_ID`` set, empty cache (this run writes the PGO state);
- PGO-warm: the same job id and cache again;
- suggested: no job id, a fresh cache, ``TORCH_COMPILE_DYNAMIC_SOURCES`` = what
  ``dyncli suggest`` read from the cold run's cache.

The suggested run must compile fewer graphs than cold and no more than PGO-warm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.config import SuggestConfig
from dyncli.suggest.api import run

pytest.importorskip("torch")

MAKE_PGO = Path(__file__).resolve().parents[1] / "data" / "make_pgo.py"


def _graphs(program: str, cache: Path, **env: str) -> int:
    full = {k: v for k, v in os.environ.items()
            if k not in ("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_DYNAMIC_SOURCES", "TORCH_TRACE")}
    full.update(TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_NUM_THREADS="1", **env)
    proc = subprocess.run([sys.executable, str(MAKE_PGO), "--run", program], env=full,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(json.loads(proc.stdout.strip().splitlines()[-1])["unique_graphs"])


@pytest.mark.slow
@pytest.mark.parametrize("program", ["mlp", "intarg", "graphbreak",
                                     pytest.param("hf", marks=pytest.mark.long)])  # BERT: long
@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_suggested_sources_compile_less(program: str, tmp_path: Path) -> None:
    if program == "hf":
        pytest.importorskip("transformers")
    job = {"TORCH_COMPILE_JOB_ID": f"it-{program}"}
    cold = _graphs(program, tmp_path / "pgo", **job)
    warm = _graphs(program, tmp_path / "pgo", **job)
    result = run(pgo_dir=tmp_path / "pgo", job_id=f"it-{program}", config=SuggestConfig())
    assert result.value, "the cold run should have recorded a dynamic input"
    suggested = _graphs(program, tmp_path / "fresh", TORCH_COMPILE_DYNAMIC_SOURCES=result.value)
    assert suggested < cold, (cold, warm, suggested, result.value)
    assert suggested <= warm, (cold, warm, suggested, result.value)

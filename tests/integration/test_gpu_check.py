"""benchmarks/gpu_check.py runs end to end: on CPU at small sizes (the GPU's own run is the
lead's, on a lent machine; issue #32)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.long  # 496 s at load 5-6 on 2 cores: CI runs it after the README's command
def test_gpu_check_small_runs_every_check_and_keeps_strategies_apart(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"),
                           "--out", str(tmp_path), "--small", "--warm-cache"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "isolation ok" in proc.stdout and "Warning" not in proc.stderr
    doc = json.loads((tmp_path / "gpu_check.json").read_text())
    assert doc["small"] and doc["device"] == "cpu" and doc["fresh_cache"] is False
    q = doc["quickstart"]
    assert q["status"] == "pass" and q["shapes"]
    assert all(r["ref_eager_ms"] and r["eager_diff_pct"] is not None for r in q["shapes"])
    # the H200's phases were told apart with these: eager before bench, bench's own way of
    # timing (calls back to back) beside one call, and bench's samples per shape
    for r in q["shapes"]:
        assert r["before_eager_ms"] > 0 and r["ref_eager_loops_ms"] > 0
        assert r["ref_compiled_loops_ms"] > 0 and len(r["bench_eager_samples"]) >= 3
    assert q["load"]["eager_probe_ms"] and q["same_window"] is True
    for name in ("quickstart", "stream"):  # bench's whole document, every run's seconds
        assert json.loads((tmp_path / f"bench_{name}.json").read_text())["runs"]
    s = doc["stream"]
    assert s["requests"] == 12 and s["isolation_ok"]
    rows = {r["strategy"]: r for r in s["rows"]}
    assert set(rows) == {"eager", "static", "dynamic"}
    assert all(r["replayed_s"] and r["predicted_s"] for r in rows.values())
    assert rows["static"]["compiles"] >= 3  # three shapes, each its own graph
    for name in ("static", "dynamic"):  # where a prediction and its replay part: compiling
        assert rows[name]["predicted_compile_s"] > 0 and rows[name]["replayed_compile_s"] > 0

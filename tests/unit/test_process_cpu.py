"""benchmarks/process_cpu.py: the hook writes one record per process at exit, the report adds
them up by kind (no torch: the records are made by a plain Python process here)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("process_cpu", ROOT / "benchmarks" / "process_cpu.py")
assert spec is not None and spec.loader is not None
process_cpu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(process_cpu)


def test_the_hook_writes_a_record_per_process_and_the_report_sums_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / f"{process_cpu.HOOK}.py").write_text(process_cpu.HOOK_SOURCE)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(hook), "PROCCPU_OUT": str(out)}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", f"import {process_cpu.HOOK}; sum(range(10**5))"],
                       env=env, check=True, timeout=60)
    docs = [json.loads(p.read_text()) for p in out.glob("*.json")]
    assert len(docs) == 2 and all(d["cpu"] >= 0 and d["torch"] is False for d in docs)
    process_cpu.report(out, top=5)
    text = capsys.readouterr().out
    assert text.startswith("2 processes") and "0 imported torch" in text
    # without PROCCPU_OUT the hook writes nothing
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    subprocess.run([sys.executable, "-c", f"import {process_cpu.HOOK}"],
                   env={**os.environ, "PYTHONPATH": str(hook)}, cwd=quiet, check=True, timeout=60)
    assert not list(quiet.iterdir())
    with pytest.raises(SystemExit, match="no process wrote a record"):
        process_cpu.report(quiet, top=5)

"""dyncli diagnose on a log captured now, with the installed torch (real torch.compile, CPU).

The checked-in logs pin torch 2.14.1; this catches a newer torch that changes a line format:
``--strict`` fails on any line the parser does not recognize.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "data" / "programs"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["int_specialization", "graph_break_frames"])
def test_fresh_log_is_fully_understood(case: str, tmp_path: Path) -> None:
    log = tmp_path / f"{case}.log"
    env = {**os.environ, "TORCH_LOGS": "+dynamic,recompiles,guards,graph_breaks",
           "PYTHONPATH": str(PROGRAMS), "OMP_NUM_THREADS": "1"}
    env.pop("TORCH_TRACE", None)
    with log.open("wb") as err:
        subprocess.run([sys.executable, str(PROGRAMS / f"{case}.py")], cwd=tmp_path, env=env,
                       stdout=subprocess.DEVNULL, stderr=err, check=True, timeout=300)
    out = subprocess.run([sys.executable, "-m", "dyncli", "diagnose", str(log), "--strict",
                          "--json", "-"], cwd=tmp_path, capture_output=True, text=True,
                         check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["stats"]["unrecognized"] == doc["stats"]["malformed"] == 0
    if case == "int_specialization":
        assert [r["cause"] for r in doc["recompiles"]] == ["scalar", "scalar"]
        (s,) = doc["specializations"]
        assert (s["sources"], s["value"], s["user_line"]) == (["L['n']"], "33", 11)
    else:
        assert [(f["function"], f["compiles"]) for f in doc["frames"]] == [
            ("two_halves", 2), ("torch_dynamo_resume_in_two_halves_at_9", 2)]
        (b,) = doc["graph_breaks"]
        assert (b["line"], b["count"]) == (9, 2)

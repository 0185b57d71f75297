"""``dyncli diagnose --perfetto``: the file, one process per rank, errors (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.diagnose.read_trace import diagnose_traces

DATA = Path(__file__).resolve().parents[1] / "data"


def check_events(doc: dict[str, Any], total_s: float) -> None:
    """The fields Perfetto needs; compile spans add up to the reported compile time (the
    nesting check is in tests/unit/test_diagnose_timeline.py)."""
    compile_us = 0.0
    for e in doc["traceEvents"]:
        assert {"ph", "pid", "tid", "name"} <= set(e)
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0
            compile_us += e["dur"] if e["cat"] == "compile" else 0.0
    assert compile_us / 1e6 == pytest.approx(total_s, abs=1e-5)


def test_perfetto_process_per_rank(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    r = CliRunner().invoke(app, ["diagnose", str(DATA / "traces" / "two_rank_diverge"),
                                 "--perfetto", str(out), "-j", "1"])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(procs.values()) == ["rank 0", "rank 1"]
    diag = diagnose_traces([DATA / "traces" / "two_rank_diverge"], jobs=1)
    check_events(doc, diag.trace.total_compile_s)
    assert not list(tmp_path.glob(".*"))  # no temp file left beside it


def test_perfetto_needs_a_trace(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    r = CliRunner().invoke(app, ["diagnose", str(DATA / "logs" / "auto_dynamic_batch.log"),
                                 "--perfetto", str(out)])
    assert r.exit_code == 2 and "--perfetto needs a TORCH_TRACE input" in r.output
    assert not out.exists()


def test_perfetto_to_stdout() -> None:
    r = CliRunner().invoke(app, ["diagnose", str(DATA / "traces" / "auto_dynamic_batch"),
                                 "--perfetto", "-"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["traceEvents"]

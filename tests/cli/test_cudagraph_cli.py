"""``dyncli diagnose`` on a CUDA-graph run through the CLI: a log and a trace of the same run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from dyncli.cli import app

CG = Path(__file__).resolve().parents[1] / "data" / "2.11.0" / "cudagraphs"
ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


def test_log_and_trace_together(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(CG / "cuda_run.log.gz"), str(CG / "trace.log.gz"),
                            "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    frame = doc["cudagraphs"]["per_frame"][0]
    assert (frame["function"], frame["recordings"], frame["distinct_sizes"]) == ("forward", 5, 5)
    assert all(s["record_s"] for s in frame["sizes"])
    assert "read for its 70 CUDA-graph record(s) only" in r.stderr


def test_stdin_log_beside_a_trace(runner: CliRunner) -> None:
    log = gzip.decompress((CG / "cuda_run.log.gz").read_bytes())
    r = runner.invoke(app, ["diagnose", "-", str(CG / "trace.log.gz")], input=log, env=ENV)
    assert r.exit_code == 0, r.output
    assert "CUDA graphs: 5 recording(s) in 1 frame(s) for 5 size(s), 5.67 ms" in r.stdout
    assert "(cudagraph-sizes) forward: 5 CUDA graph(s) recorded for 5 sizes" in r.stdout

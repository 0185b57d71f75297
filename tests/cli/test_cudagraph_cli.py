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


PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def test_the_error_table_says_which_errors_raised(runner: CliRunner) -> None:
    """The JSON's errors[].raised (round 22) in the terminal's table too (round 23): "yes"
    where the paste shows the error raised (gpt-fast#232: the program's traceback ends in it),
    "-" where it does not (ComfyUI-WanVideoWrapper#1584: torch's words logged, the run went
    on); a row per error, wide or as a block per row in 80 columns."""
    for cols in ("160", "80"):
        env = {**ENV, "COLUMNS": cols}
        stopped = runner.invoke(app, ["diagnose", str(PASTED / "gpt-fast-232.log")], env=env)
        went_on = runner.invoke(app, ["diagnose", str(PASTED / "comfyui-wanvideowrapper-1584.log")],
                                env=env)
        for r in (stopped, went_on):
            assert r.exit_code == 0, r.output
            assert max(len(ln) for ln in r.stdout.split("CUDA-graph errors")[1]
                       .split("Suggestions:")[0].splitlines()) <= int(cols)
        table = stopped.stdout.split("CUDA-graph errors")[1].split("Suggestions:")[0]
        assert [ln.split() for ln in table.splitlines() if ln.strip().startswith("raised")] \
            == [["raised", "yes"]]
        table = went_on.stdout.split("CUDA-graph errors")[1].split("Suggestions:")[0]
        assert [ln.split() for ln in table.splitlines() if ln.strip().startswith("raised")] \
            == [["raised", "-"], ["raised", "-"]]

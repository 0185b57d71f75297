"""``dyncli diagnose`` on TORCH_TRACE traces through the CLI: inputs, outputs, exit codes."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

DATA = Path(__file__).resolve().parents[1] / "data"
TRACES = DATA / "traces"
ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


def one_file(case: str) -> Path:
    (path,) = sorted((TRACES / case).glob("*.log"))
    return path


def test_trace_dir_terminal_report(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(TRACES / "two_rank_diverge")], env=ENV)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.startswith("dyncli diagnose: ")
    assert "Summary: 2 frame(s), 3 compile(s), 1 recompile(s) (size 1" in out
    assert "ranks 0, 1" in out
    assert "Compile time: " in out and "Similar graphs" in out
    assert "L['x']: [2, 8] vs [s77, 8]" in out  # sizes survive rich (no markup eaten)
    assert "Rank divergence: norm_rows (make_rank_traces.py:57): compiles differ across ranks " \
           "(rank 0: 2, rank 1: 1)" in out
    assert r.stderr == ""


def test_single_file_and_gz_are_sniffed(runner: CliRunner, tmp_path: Path) -> None:
    src = one_file("int_specialization")
    gz = tmp_path / "trace.bin"  # no telling name: the content decides
    with src.open("rb") as fh, gzip.open(gz, "wb") as out:
        shutil.copyfileobj(fh, out)
    outs = []
    for path in (src, gz):
        r = runner.invoke(app, ["diagnose", str(path), "--json", "-"], env=ENV)
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout))
    assert outs[0]["frames"] == outs[1]["frames"]
    doc = outs[0]
    assert doc["schema_version"] == 1 and doc["command"] == "diagnose"
    assert [(r["compile_id"], r["cause"]) for r in doc["recompiles"]] == [("0/1", "scalar"),
                                                                          ("0/2", "scalar")]
    (spec,) = doc["specializations"]
    assert (spec["sources"], spec["value"], spec["user_line"], spec["user_code"]) == (
        ["L['n']"], "33", 11, "if n == 33:")
    assert doc["compile_time_s"]["total"] > 0
    assert {c["compile_id"] for c in doc["compile_time_s"]["per_compile"]} == {"0/0", "0/1", "0/2"}
    assert doc["rank_view"]["divergences"] == [] and doc["failed_compiles"] == []


def test_json_file_html_file_and_fail_on(runner: CliRunner, tmp_path: Path) -> None:
    r = runner.invoke(app, ["diagnose", str(TRACES / "pgo_recompile"), "--json", "d.json",
                            "--html", "report.html", "--fail-on", "recompiles"], env=ENV)
    assert r.exit_code == 1, r.output  # a recompile was found: the CI gate trips
    doc = json.loads((tmp_path / "d.json").read_text())
    (finding,) = doc["pgo"]["recompiled_anyway"]
    assert finding["allow_list"] == ["L['y']:1"] and doc["pgo"]["loaded"] is True
    assert doc["similar_graphs"][0]["inputs"][0]["source"] == "L['y']"
    html = (tmp_path / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "PGO loaded, yet recompiled for size" in html


def test_failed_compile_shown(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(TRACES / "constraint_violation")], env=ENV)
    assert r.exit_code == 0, r.output
    assert "Failed compiles" in r.stdout and "ConstraintViolationError" in r.stdout


def test_strict_rejects_unknown_event_kind(runner: CliRunner, tmp_path: Path) -> None:
    trace = tmp_path / "dedicated_log_torch_trace_x.log"
    text = one_file("auto_dynamic_batch").read_text()
    trace.write_text(text + 'V1122 01:19:36.000000 1 torch/x.py:1] {"shiny_new_event": {}}\n')
    ok = runner.invoke(app, ["diagnose", str(tmp_path)], env=ENV)
    assert ok.exit_code == 0, ok.output  # counted, not fatal
    bad = runner.invoke(app, ["diagnose", str(tmp_path), "--strict"], env=ENV)
    assert bad.exit_code == 1
    assert "dedicated_log_torch_trace_x.log:" in bad.stderr
    assert "unknown trace event kind 'shiny_new_event'" in bad.stderr
    assert "Traceback" not in bad.output


def test_truncated_trace_still_read(runner: CliRunner, tmp_path: Path) -> None:
    data = one_file("auto_dynamic_batch").read_bytes()
    trace = tmp_path / "dedicated_log_torch_trace_cut.log"
    trace.write_bytes(data[: len(data) * 2 // 3])  # a job killed mid-write
    r = runner.invoke(app, ["diagnose", str(trace), "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["frames"][0]["function"] == "scale_and_center"


def test_mixing_text_and_trace_is_a_usage_error(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(DATA / "logs" / "int_specialization.log"),
                            str(TRACES / "int_specialization")], env=ENV)
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: cannot mix") and r.stdout == ""


def test_big_file_parsing_child_started_early(runner: CliRunner, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's one call (api.run) forks a big file's parsing child before importing the
    analysis (children.prestart) and the reading takes it over: the same output as one
    process."""
    from dyncli.diagnose import children

    monkeypatch.setattr(children, "PIPE_BYTES", 0)
    started = []
    real = children.prestart
    monkeypatch.setattr(children, "prestart", lambda *a: started.append(real(*a)) or True)
    path = one_file("hf_tiny_bert")
    outs = []
    for jobs in ("2", "1"):
        out = tmp_path / f"d{jobs}.json"
        r = runner.invoke(app, ["diagnose", str(path), "--jobs", jobs, "--json", str(out)], env=ENV)
        assert r.exit_code == 0, r.output
        outs.append((r.output, out.read_text()))
    assert started == [True, False]
    assert outs[0] == outs[1]
    assert not children._EARLY

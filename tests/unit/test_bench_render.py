"""The JSON and CSV contract of dyncli bench, from a synthetic result (no torch)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest_bench import sample_result

from dyncli.bench.render_files import CSV_COLUMNS, to_csv, write_files, write_plot
from dyncli.errors import OutputError
from dyncli.output import to_json_text

VARIATION_KEYS = {"batch_size", "shapes", "eager_ms", "compiled_ms", "speedup", "p_value",
                  "recompiled", "compile_time_s", "recompile_reasons", "accuracy"}
RUN_KEYS = {"model", "strategy", "mode", "status", "compiles", "compile_time_s",
            "recompile_limit_hit", "speedup", "variations"}


def test_json_document_follows_the_schema() -> None:
    doc = json.loads(to_json_text(sample_result().to_dict()))
    assert doc["schema_version"] == 1
    assert doc["command"] == "bench"
    assert set(doc["environment"]) >= {"dyncli", "torch", "python", "device", "device_name", "dtype"}
    assert len(doc["runs"]) == 2
    static, dynamic = doc["runs"]
    assert set(static) >= RUN_KEYS
    assert set(static["speedup"]) == {"median", "min", "max", "std", "geomean"}
    assert static["speedup"]["median"] == pytest.approx(2.25)
    assert static["compiles"] == 2 and dynamic["compiles"] == 1
    for var in static["variations"]:
        assert set(var) >= VARIATION_KEYS
    assert static["variations"][1]["recompile_reasons"] == [
        "tensor 'x' size mismatch at index 0. expected 8, actual 10"]
    assert static["variations"][1]["accuracy"] == "pass"
    assert static["variations"][0]["eager_samples_ms"] == [2.0, 2.0, 2.0]


def test_failure_status_propagates_to_run_and_json() -> None:
    doc = sample_result(accuracy="fail_accuracy").to_dict()
    assert [r["status"] for r in doc["runs"]] == ["fail_accuracy", "fail_accuracy"]
    assert doc["runs"][0]["variations"][1]["accuracy"] == "fail_accuracy"


def test_csv_has_dashboard_columns_and_one_row_per_variation() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(sample_result()))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert CSV_COLUMNS[:6] == ("dev", "name", "batch_size", "speedup", "abs_latency",
                               "compilation_latency")
    assert len(rows) == 4
    first = rows[0]
    assert first["dev"] == "cpu" and first["batch_size"] == "8" and first["strategy"] == "static"
    assert float(first["speedup"]) == 2.0 and float(first["abs_latency"]) == 1.0
    assert first["shapes"] == "0=8x32" and first["dynamo_peak_mem"] == "2"


def test_write_files_atomically_and_plot(tmp_path: Path) -> None:
    result = sample_result()
    write_files(result, str(tmp_path / "r.json"), str(tmp_path / "r.csv"), str(tmp_path / "r.png"))
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["strategy"] == "static"
    assert (tmp_path / "r.csv").read_text().startswith("dev,name,batch_size")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json", "r.png"]


def test_plot_into_missing_directory_fails_cleanly(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"r\.png: cannot write: directory .*nope does not exist"):
        write_plot(sample_result(), tmp_path / "nope" / "r.png")


def test_plot_file_gets_the_umask_mode_not_0600(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        write_plot(sample_result(), tmp_path / "r.png")
    finally:
        os.umask(old)
    assert (tmp_path / "r.png").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["r.png"]  # no temp file left


def test_a_variations_detail_is_printed_whole_under_its_table(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # a model that cannot take a varied batch (`x.view(4, 4, 4)`) said only
    # "eager_fail_to_run: RuntimeError: shape '[4, 4, 4]' is invali" in its accuracy cell,
    # and a pass's detail (a size above the largest bucket ran unpadded) was not shown at all
    from dyncli.bench.core.status import Status
    from dyncli.bench.render import print_result

    monkeypatch.setenv("COLUMNS", "100")
    result = sample_result()
    failed, unpadded = result.runs[0].variations[1], result.runs[1].variations[1]
    failed.status = Status.EAGER_FAIL_TO_RUN
    failed.detail = "RuntimeError: shape '[4, 4, 4]' is invalid for input of size 48"
    unpadded.detail = "above the largest bucket: ran unpadded"
    print_result(result)
    lines = capsys.readouterr().out.splitlines()
    assert "¹ #1 10x32: RuntimeError: shape '[4, 4, 4]' is invalid for input of size 48" in lines
    assert "¹ #1 10x32: above the largest bucket: ran unpadded" in lines
    rows = [ln.split() for ln in lines if ln.strip().startswith("1   10x32")]
    assert [r[-2:] for r in rows] == [["eager_fail_to_run", "¹"], ["pass", "¹"]]


def test_a_replay_that_compiled_other_than_predicted_is_named_under_the_stream_table() -> None:
    """Round 34: torch 2.15's one-layer T5 encoder under unbacked, six sequence lengths at
    batch 1: the stream's cost charged 6 compiles (bench's walk), the replay compiled 13, and
    only the seconds (68.37 / 55.83) showed it."""
    from dyncli.bench.core.cost import StreamCost
    from dyncli.bench.core.result import BenchResult, Environment, RunResult
    from dyncli.bench.core.run_parts import Replay
    from dyncli.bench.render import replay_compiles_line

    env = Environment("0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    unbacked = RunResult("m", "unbacked", "inference")
    dynamic = RunResult("m", "dynamic", "inference")
    result = BenchResult("m", env, {}, runs=[unbacked, dynamic], shapes_source="seq.csv")
    assert replay_compiles_line(result) is None  # nothing replayed
    unbacked.stream = StreamCost(20, 8.7, 55.83, 1.075, 55.8, 6)
    dynamic.stream = StreamCost(20, 10.5, 10.85, 0.685, 10.5, 1)
    unbacked.replay, dynamic.replay = Replay(68.37, 55.83, 13), Replay(12.72, 10.85, 1)
    line = replay_compiles_line(result)
    assert line is not None
    assert line.startswith("replays that compiled other than predicted: unbacked 13 (charged 6) — ")
    assert "dynamic" not in line
    unbacked.replay = Replay(60.0, 55.83, 6)
    assert replay_compiles_line(result) is None
    unbacked.replay = Replay(60.0, 55.83)  # an older document: no count
    assert replay_compiles_line(result) is None
    # a replay that raised (a C++ compile error) stopped there: its count is not a finding
    unbacked.replay = Replay(float("nan"), 55.83, 0)
    assert replay_compiles_line(result) is None

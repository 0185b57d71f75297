"""``dyncli diagnose`` on what older and newer torch releases write (issue #25), through the CLI.

Inputs are the compatibility corpus (tests/data/<version>/compat/, recorded by
tests/data/make_compat.py from real torch runs); where a case needs a directory no release
writes (an empty rank file beside real ones, two runs into one directory), it is assembled
from recorded files in a temporary directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.diagnose import read_trace
from dyncli.diagnose.render import render_terminal
from dyncli.output import stdout_console

DATA = Path(__file__).resolve().parents[1] / "data"
ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


def compat(version: str, kind: str) -> Path:
    return DATA / version / "compat" / kind


def test_torch_2_3_trace_file_is_read_as_a_trace(runner: CliRunner) -> None:
    """Was: read as a text log, "0 frames, 0 compiles … Nothing to fix", exit 0."""
    (trace,) = compat("2.3.1", "trace").glob("*.log")
    r = runner.invoke(app, ["diagnose", str(trace)], env=ENV)
    assert r.exit_code == 0, r.output
    assert "Summary: 6 frame(s), 8 compile(s)" in r.stdout
    assert "Compile time: unknown for all 8 compile(s)" in r.stdout
    assert "r1:0" in r.stdout  # the compiles after torch._dynamo.reset()


def test_directory_with_an_empty_rank_file(runner: CliRunner, tmp_path: Path) -> None:
    """Was: exit 2, "is empty, not a log", for the whole directory."""
    for f in compat("2.14.1", "ranks").glob("*.log"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "dedicated_log_torch_trace_rank_2_dead.log").write_bytes(b"")
    r = runner.invoke(app, ["diagnose", str(tmp_path), "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [p["rank"] for p in doc["processes"]] == [0, 1]
    assert "rank_2_dead.log: is empty" in r.stderr and r.stderr.count("skipped") == 1


def test_only_unreadable_files_is_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "dedicated_log_torch_trace_rank_0_dead.log").write_bytes(b"")
    r = runner.invoke(app, ["diagnose", str(tmp_path)], env=ENV)
    assert r.exit_code == 2
    assert "no readable TORCH_TRACE file" in r.stderr


def test_strict_fails_on_a_payload_that_does_not_match_its_hash(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    (src,) = compat("2.15.0", "trace").glob("*.log")
    text = src.read_text()
    bad = tmp_path / "t.log"
    bad.write_text(text.replace("\tclass GraphModule", "\tclass GraphModulE", 1))
    assert bad.read_text() != text
    assert runner.invoke(app, ["diagnose", str(src), "--strict"], env=ENV).exit_code == 0
    r = runner.invoke(app, ["diagnose", str(bad), "--strict"], env=ENV)
    assert r.exit_code == 1 and "has_payload" in r.stderr


def test_seconds_field_and_generation_in_json(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(compat("2.15.0", "trace")), "--json", "-"], env=ENV)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    per = doc["compile_time_s"]["per_compile"]
    assert {(c["compile_id"], c["generation"]) for c in per} >= {("0/0", 0), ("0/0", 1)}
    assert {c["seconds_field"] for c in per} == {"entire_frame_compile_time_s"}
    assert doc["compile_time_s"]["unknown"] == 0
    assert {(f["frame_id"], f["generation"]) for f in doc["frames"]} >= {("0", 0), ("0", 1)}


def test_a_failed_compile_shows_its_reason_and_never_nothing_to_fix() -> None:
    """The failure of the 2.15.0 corpus, alone: its reason's lines (bounded), and no
    "Nothing to fix" although there is nothing else to suggest."""
    d = read_trace.diagnose_traces([compat("2.15.0", "trace")])
    assert d.trace is not None and d.trace.failures
    import dataclasses

    alone = dataclasses.replace(d, suggestions=(), recompiles=(), specializations=(),
                                graph_breaks=())
    console = stdout_console()
    with console.capture() as cap:
        render_terminal(alone, console=console)
    out = cap.get()
    assert "Nothing to fix" not in out
    assert "1 compile(s) failed" in out
    assert "You marked L['x'].size()[0] as dynamic" in out  # not only the first line

"""``dyncli diagnose`` on text logs through the CLI: exit codes, stdout, stderr, JSON, inputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}


def log(case: str) -> str:
    return str(LOGS / f"{case}.log")


def test_terminal_report_summary_first(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", log("int_specialization")], env=ENV)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("dyncli diagnose: ") and "139 lines, 139 recognized" in lines[0]
    assert lines[1] == ("Summary: 1 frame(s), 3 compile(s), 2 recompile(s) (size 0, scalar 2, "
                        "other 0), 1 specialization(s), 0 graph break(s) at 0 site(s)")
    out = r.stdout
    for section in ("Frames", "Recompiles", "Specializations", "Suggestions:"):
        assert section in out
    assert out.index("Frames") < out.index("Recompiles") < out.index("Specializations") < out.index("Suggestions:")
    assert "int_specialization.py:11" in out and "if n == 33:" in out
    assert "(scalar-recompile)" in out and "(user-specialization)" in out
    assert "\x1b[" not in out and r.stderr == ""


def test_json_to_stdout_is_the_contract(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", log("user_size_specialization"), "--json", "-"], env=ENV)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)  # stdout holds only the JSON document
    assert "Summary: 1 frame(s)" in r.stderr  # the human view goes to stderr
    assert (doc["schema_version"], doc["command"]) == (1, "diagnose")
    assert doc["frames"] == [{
        "rank": None, "frame_id": "0", "generation": 0, "process": "", "function": "pick",
        "file": doc["frames"][0]["file"], "line": 7, "compiles": 3, "at_least": False,
        "compile_ids": ["0/0", "0/1", "0/2"],
        "dynamic_inputs": [{"source": "L['x']", "origin": "automatic dynamic/PGO",
                            "compile_id": "0/1", "line": 34}],
        "dynamic_dims": {"L['x']": [0]}}]
    assert [(x["compile_id"], x["function"], x["cause"]) for x in doc["recompiles"]] == [
        ("0/1", "pick", "size"), ("0/2", "pick", "size")]
    (s,) = doc["specializations"]
    assert {k: s[k] for k in ("compile_id", "symbol", "sources", "value", "user_line", "user_code")} == {
        "compile_id": "0/1", "symbol": "s77", "sources": ["L['x'].size()[0]"], "value": "10",
        "user_line": 8, "user_code": "if x.shape[0] == 10:"}
    assert s["user_file"].endswith("user_size_specialization.py")
    assert doc["graph_breaks"] == [] and doc["dynamic_sources"] == ["L['x']:0"]
    assert {"kind", "message", "evidence"} <= set(doc["suggestions"][0])
    assert doc["stats"] == {"lines": 139, "recognized": 139, "unrecognized": 0, "malformed": 0,
                            "bytes": (LOGS / "user_size_specialization.log").stat().st_size,
                            "malformed_reasons": {}, "records": 37, "pasted": {}, "partial": 0,
                            "unread": 0}
    assert (doc["partial"], doc["read_as"]) == (False, "")  # a clean log: read as written


def test_json_file_and_terminal(runner: CliRunner, tmp_path: Path) -> None:
    r = runner.invoke(app, ["diagnose", log("graph_break_frames"), "--json", "d.json"], env=ENV)
    assert r.exit_code == 0
    assert "Graph breaks" in r.stdout
    doc = json.loads((tmp_path / "d.json").read_text())
    (b,) = doc["graph_breaks"]
    assert (b["line"], b["count"], b["reason"]) == (9, 2, "Failed to trace builtin operator")
    assert b["file"].endswith("graph_break_frames.py")



def test_a_raised_break_is_marked_in_the_graph_break_tables(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    # sageattention-92: GB0208 raised under fullgraph (a traceback's last line); the logged
    # breaks of graph_break_frames are not marked. The terminal's table, the HTML's, the JSON
    pasted = LOGS.parent / "pasted" / "sageattention-92.log"
    mark = "(raised as an error: the program stopped on it)"
    r = runner.invoke(app, ["diagnose", str(pasted), "--json", "d.json", "--html", "r.html"],
                      env=ENV)
    assert r.exit_code == 0, r.output
    table = r.stdout[r.stdout.index("Graph breaks (distinct"):r.stdout.index("Suggestions:")]
    assert mark in " ".join(table.split()), table
    assert "raised as an error: the program stopped on it" in (tmp_path / "r.html").read_text()
    (d,) = json.loads((tmp_path / "d.json").read_text())["distinct_graph_breaks"]
    assert d["raised"] is True
    r = runner.invoke(app, ["diagnose", log("graph_break_frames"), "--json", "e.json"], env=ENV)
    assert "Graph breaks (distinct" in r.stdout and "raised as an error" not in r.stdout
    assert all("raised" not in d for d in
               json.loads((tmp_path / "e.json").read_text())["distinct_graph_breaks"])

@pytest.mark.parametrize(("case", "what", "code"), [
    ("auto_dynamic_batch", "recompiles", 1),
    ("auto_dynamic_batch", "specializations", 0),
    ("auto_dynamic_batch", "graph-breaks", 0),
    ("graph_break_frames", "graph-breaks", 1),
    ("constraint_violation", "specializations", 1),
    ("unbacked_symbols", "recompiles", 0),
])
def test_fail_on(runner: CliRunner, case: str, what: str, code: int) -> None:
    r = runner.invoke(app, ["diagnose", log(case), "--fail-on", what], env=ENV)
    assert r.exit_code == code, r.output
    assert r.stdout.startswith("dyncli diagnose: ")


def test_fail_on_from_config_and_bad_value(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text('[diagnose]\nfail_on = ["recompiles"]\n')
    assert runner.invoke(app, ["diagnose", log("multi_rank")], env=ENV).exit_code == 1
    r = runner.invoke(app, ["diagnose", log("multi_rank"), "--fail-on", "warnings"], env=ENV)
    assert r.exit_code == 2 and "fail_on" in r.stderr and "warnings" in r.stderr


def test_multi_rank_table_has_rank_column(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", log("multi_rank")], env=ENV)
    assert r.exit_code == 0
    assert "ranks 0, 1" in r.stdout.splitlines()[1]
    assert "rank" in r.stdout and "[rank 1]" in r.stdout


def test_gzip_and_stdin_and_several_files(runner: CliRunner, tmp_path: Path) -> None:
    data = (LOGS / "auto_dynamic_batch.log").read_bytes()
    (tmp_path / "run.log.gz").write_bytes(gzip.compress(data))
    r = runner.invoke(app, ["diagnose", "run.log.gz", "--json", "-"], env=ENV)
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["recompiles"] == 1
    r = runner.invoke(app, ["diagnose", "-", "--json", "-"], input=data, env=ENV)
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["inputs"] == ["<stdin>"] and doc["summary"]["compiles"] == 2
    r = runner.invoke(app, ["diagnose", log("auto_dynamic_batch"), log("int_specialization"),
                            "--json", "-"], env=ENV)
    assert json.loads(r.stdout)["stats"]["lines"] == 129 + 139


def test_crlf_and_truncated_gzip(runner: CliRunner, tmp_path: Path) -> None:
    data = (LOGS / "int_specialization.log").read_bytes()
    (tmp_path / "crlf.log").write_bytes(data.replace(b"\n", b"\r\n"))
    r = runner.invoke(app, ["diagnose", "crlf.log", "--json", "-", "--strict"], env=ENV)
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["recompiles"] == 2
    gz = gzip.compress(data * 40)
    (tmp_path / "cut.log.gz").write_bytes(gz[: len(gz) // 2])
    r = runner.invoke(app, ["diagnose", "cut.log.gz"], env=ENV)
    assert r.exit_code == 0
    assert "Warning:" in r.stderr and "truncated" in r.stderr and "cut.log.gz" in r.stderr


@pytest.mark.parametrize(("setup", "message"), [
    ("empty", "empty.log: is empty, not a log"),
    ("binary", "blob.bin: is a binary file, not a text log"),
    ("dir", "somedir: is a directory, not a file"),
    ("missing", "nope.log: no such file or directory"),
    ("text", "notes.txt: not a torch log: none of its 2 lines is a torch log line"),
    ("badgz", "bad.gz: not a readable gzip file"),
])
def test_not_a_log_is_one_line_error(runner: CliRunner, tmp_path: Path, setup: str, message: str) -> None:
    arg = {"empty": "empty.log", "binary": "blob.bin", "dir": "somedir", "missing": "nope.log",
           "text": "notes.txt", "badgz": "bad.gz"}[setup]
    if setup == "empty":
        (tmp_path / arg).write_bytes(b"")
    elif setup == "binary":
        (tmp_path / arg).write_bytes(b"\x7fELF\x00\x00\x01" * 100)
    elif setup == "dir":
        (tmp_path / arg).mkdir()
    elif setup == "text":
        (tmp_path / arg).write_text("hello\nworld\n")
    elif setup == "badgz":
        (tmp_path / arg).write_bytes(b"\x1f\x8b" + b"garbage" * 10)
    r = runner.invoke(app, ["diagnose", arg], env=ENV)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.splitlines()[0] == f"Error: {message}" or r.stderr.startswith(f"Error: {message}")
    assert "Traceback" not in r.stderr


def test_strict_names_the_line(runner: CliRunner, tmp_path: Path) -> None:
    text = (LOGS / "auto_dynamic_batch.log").read_text() + "some stray stdout line\n"
    (tmp_path / "noisy.log").write_text(text)
    assert runner.invoke(app, ["diagnose", "noisy.log"], env=ENV).exit_code == 0
    r = runner.invoke(app, ["diagnose", "noisy.log", "--strict"], env=ENV)
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: noisy.log:130: unrecognized log line (--strict): some stray stdout line")


def test_limit_caps_rows(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", log("unbacked_symbols"), "--limit", "2"], env=ENV)
    assert r.exit_code == 0 and "(unbacked symbols: showing 2 of 5; --json has all)" in r.stdout


def test_verbose_lists_skipped_lines_and_env_strict(runner: CliRunner, tmp_path: Path) -> None:
    text = (LOGS / "auto_dynamic_batch.log").read_text() + "some stray stdout line\n"
    (tmp_path / "noisy.log").write_text(text)
    r = runner.invoke(app, ["diagnose", "noisy.log", "--verbose"], env=ENV)
    assert r.exit_code == 0
    assert "diagnose.strict = False  (default)" in r.stderr
    assert "1 unrecognized and 0 malformed line(s)" in r.stderr
    assert "line 130: some stray stdout line" in r.stderr
    r = runner.invoke(app, ["diagnose", "noisy.log"], env={**ENV, "DYNCLI_DIAGNOSE_STRICT": "1"})
    assert r.exit_code == 1 and "noisy.log:130: unrecognized log line" in r.stderr


def test_verbose_shows_the_jobs_used_and_fail_on_names_its_variable(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dyncli.diagnose import children

    monkeypatch.chdir(tmp_path)
    log = str(LOGS / "hf_tiny_bert.log")
    r = runner.invoke(app, ["diagnose", log, "-v"], env={**ENV, "DYNCLI_DIAGNOSE_FAIL_ON":
                                                         "recompiles"})
    assert r.exit_code == 1
    used = children.default_jobs()  # (the value the reader uses unset)
    assert f"diagnose.jobs = {used}  (default: the core count)" in r.stderr  # (was "None")
    assert "found recompiles (DYNCLI_DIAGNOSE_FAIL_ON)" in r.stderr  # (was "(--fail-on)")
    r = runner.invoke(app, ["diagnose", log, "--fail-on", "recompiles", "--jobs", "1", "-v"],
                      env=ENV)
    assert "found recompiles (--fail-on)" in r.stderr and "diagnose.jobs = 1  (command line)" \
        in r.stderr
    (tmp_path / "autodyn.toml").write_text('[diagnose]\nfail_on = ["recompiles"]\n')
    r = runner.invoke(app, ["diagnose", log], env=ENV)
    assert "found recompiles ([diagnose] fail_on in autodyn.toml)" in r.stderr
    # (the value unset stays None: the reader tells the default from a given --jobs)
    from dyncli.config import resolve

    assert resolve("diagnose", environ={}, cwd=tmp_path).config.jobs is None

"""`dyncli suggest` flags for the other source lists and for stale state, through the CLI."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.suggest.stale import file_hash

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import suggest_fake_pgo as fake  # the torch-free PGO pickle writer of the unit tests

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}


def test_static_and_unbacked_lists_on_stdout(runner: CliRunner) -> None:
    args = ["suggest", "--pgo-dir", str(DATA / "serve"), "--static", "L['y']:1", "--torch-version", "2.15"]
    result = runner.invoke(app, [*args, "-q"], env=ENV)
    assert result.exit_code == 0, result.stderr
    assert shlex.split(result.stdout) == ["TORCH_COMPILE_UNBACKED_SOURCES=L['args'][0]:0",
                                          "TORCH_COMPILE_STATIC_SOURCES=L['y']:1"]
    shell = runner.invoke(app, [*args, "-q", "--format", "shell"], env=ENV)
    assert shell.stdout.count("export ") == 2
    report = runner.invoke(app, args, env=ENV)
    assert "target: torch 2.15 (--torch-version)" in report.stderr
    kept = runner.invoke(app, [*args, "-q", "--no-unbacked"], env=ENV)
    assert shlex.split(kept.stdout)[0] == "TORCH_COMPILE_DYNAMIC_SOURCES=L['args'][0]:0"


def test_a_list_the_target_torch_ignores_is_noted(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "mlp"), "--static", "L['y']",
                                 "--torch-version", "2.14.1"], env=ENV)
    assert result.exit_code == 0, result.stderr
    assert "STATIC" not in result.stdout
    assert "does not read TORCH_COMPILE_STATIC_SOURCES" in " ".join(result.stderr.split())


def test_bad_static_entry_is_one_error_line(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "mlp"), "--static", "L["], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --static: 'L[' is not a valid regex")
    assert "Traceback" not in result.stderr


def test_stale_frames_are_warned_left_out_and_kept_on_request(runner: CliRunner, tmp_path: Path) -> None:
    src = tmp_path / "prog.py"
    src.write_text("def f(x):\n    return x\n")
    (tmp_path / "code_state_j_None_.pkl").write_bytes(
        fake.dumps({(str(src), 1, "f"): {"L['x']": fake.tensor(fake.DYN, 3)}}, file_hash=file_hash(src)))
    src.write_text("def f(x):\n    return -x\n")
    args = ["suggest", "--pgo-dir", str(tmp_path), "--json", "-"]
    doc = json.loads(runner.invoke(app, args, env=ENV).stdout)
    assert [s["function"] for s in doc["stale"]] == ["f"] and doc["value"] == ""
    assert doc["frames"][0]["inputs"][0]["status"] == "stale"
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path)], env=ENV)
    assert "Warning: stale: " in result.stderr and "the file changed since torch recorded it" in result.stderr
    kept = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "--include-stale", "-q"], env=ENV)
    assert kept.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\"\n"
    missing = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "--source-root", str(tmp_path / "no")], env=ENV)
    assert missing.exit_code == 2 and "not a directory" in missing.stderr

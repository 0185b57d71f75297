"""The app shell: registry, help, version, the one error path, and no torch on the CLI path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dyncli import __version__
from dyncli.cli import DyncliGroup, app
from dyncli.commands.options import resolve_config
from dyncli.errors import DyncliError, InputError
from dyncli.output import envelope, to_json_text, write_json

ENV = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}


def test_help_lists_the_commands(runner: CliRunner) -> None:
    for flag in ("--help", "-h"):
        result = runner.invoke(app, [flag], env=ENV)
        assert result.exit_code == 0
        lines = result.stdout.splitlines()
        assert lines[0] == "Usage: dyncli [OPTIONS] COMMAND [ARGS]..."
        commands = [line.split()[0] for line in lines[lines.index("Commands:") + 1:] if line.strip()]
        assert commands == ["bench", "diagnose", "suggest", "compare"]
        assert result.stderr == ""
        assert "\x1b[" not in result.stdout


def test_no_args_shows_help(runner: CliRunner) -> None:
    result = runner.invoke(app, [], env=ENV)
    assert "Commands:" in result.output
    assert result.exit_code in (0, 2)  # click < 8.2 exits 0, newer 2; help is shown either way


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--version"], env=ENV)
    assert result.exit_code == 0
    assert result.stdout == f"dyncli {__version__}\n"


@pytest.mark.parametrize("command", ["bench", "diagnose", "suggest"])
def test_each_command_has_help_with_examples(runner: CliRunner, command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env=ENV)
    assert result.exit_code == 0
    assert f"Usage: dyncli {command}" in result.stdout
    assert "Examples:" in result.stdout
    assert f"  dyncli {command} " in result.stdout  # epilog keeps its line breaks
    for option in ("--json", "--config", "--verbose"):
        assert option in result.stdout


def test_unknown_bench_key_is_one_line_error_before_any_work(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text("[bench]\nrepaet = 3\n")
    result = runner.invoke(app, ["bench", "resnet18"], env=ENV)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == "Error: autodyn.toml: bench.repaet: unknown key"
    assert lines[1].startswith("Hint: Known keys in [bench]: ")
    assert len(lines) == 2
    assert "Traceback" not in result.output


def test_wrong_type_names_file_and_key(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text("[bench]\nrepeat = 'ten'\n")
    result = runner.invoke(app, ["bench", "resnet18"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr == "Error: autodyn.toml: bench.repeat: expected int, got 'ten'\n"


def test_bad_env_value_is_an_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench", "resnet18"], env={**ENV, "DYNCLI_BENCH_REPEAT": "x"})
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: environment DYNCLI_BENCH_REPEAT: bench.repeat: expected int")


def _app_raising(exc: BaseException) -> typer.Typer:
    test_app = typer.Typer(cls=DyncliGroup, pretty_exceptions_enable=False)

    @test_app.command()
    def boom() -> None:
        raise exc

    @test_app.command()
    def other() -> None:
        """A second command so that `boom` is a subcommand."""

    return test_app


def test_dyncli_error_prints_error_and_hint(runner: CliRunner) -> None:
    result = runner.invoke(_app_raising(InputError("run.log: not a log", hint="Try: x")), ["boom"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr == "Error: run.log: not a log\nHint: Try: x\n"


def test_dyncli_debug_adds_the_traceback(runner: CliRunner) -> None:
    result = runner.invoke(_app_raising(DyncliError("bad")), ["boom"], env={**ENV, "DYNCLI_DEBUG": "1"})
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.endswith("Error: bad\n")


def test_unexpected_exceptions_are_bugs_and_propagate(runner: CliRunner) -> None:
    result = runner.invoke(_app_raising(RuntimeError("bug")), ["boom"], env=ENV)
    assert result.exit_code == 1
    assert isinstance(result.exception, RuntimeError)


def test_verbose_says_where_each_value_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "autodyn.toml").write_text("[bench]\nrepeat = 4\n")
    monkeypatch.setenv("DYNCLI_BENCH_WARMUP", "1")
    resolve_config("bench", None, True, variations=3)
    err = capsys.readouterr().err
    assert "config file: " in err and "autodyn.toml" in err
    assert "bench.repeat = 4  (autodyn.toml)" in err
    assert "bench.warmup = 1  (environment DYNCLI_BENCH_WARMUP)" in err
    assert "bench.variations = 3  (command line)" in err
    assert "bench.spread = 0.2  (default)" in err


def test_write_json_is_atomic_and_enveloped(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    write_json(target, envelope("suggest", {"x": float("nan"), "p": Path("a")}))
    data = json.loads(target.read_text())
    assert data == {"schema_version": 1, "dyncli": __version__, "command": "suggest", "x": None, "p": "a"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temp file left
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # shareable, not mkstemp's 0600


def test_large_json_is_written_compact_and_round_trips() -> None:
    doc = {"rows": [{"i": i, "x": float("nan") if i == 7 else 0.5, "p": Path("a")} for i in range(40000)]}
    text = to_json_text(doc)
    assert len(text) > 1 << 20 and text.count("\n") == 1
    back = json.loads(text)
    assert back["rows"][7]["x"] is None and back["rows"][8] == {"i": 8, "x": 0.5, "p": "a"}
    assert to_json_text({"a": 1}) == '{\n  "a": 1\n}\n'


def test_write_json_to_missing_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DyncliError, match="does not exist"):
        write_json(tmp_path / "nope" / "out.json", {})


def test_write_json_dash_is_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    write_json("-", envelope("bench", {}))
    assert json.loads(capsys.readouterr().out)["schema_version"] == 1


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_import_cli_does_not_import_torch() -> None:
    proc = _run("import sys, dyncli.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_help_works_where_torch_cannot_be_imported() -> None:
    # sys.modules['torch'] = None makes every `import torch` raise ImportError.
    proc = _run("import sys; sys.modules['torch'] = None; sys.argv = ['dyncli', '--help']\n"
                "from dyncli.cli import main; main()")
    assert proc.returncode == 0, proc.stderr
    assert "diagnose" in proc.stdout


def test_python_dash_m_dyncli() -> None:
    proc = subprocess.run([sys.executable, "-m", "dyncli", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == f"dyncli {__version__}\n"


def test_table_cells_are_plain_text_not_markup() -> None:
    import io

    from rich.console import Console

    from dyncli.output import add_text_row, section_table

    table = section_table("Guards", ["expr", "size"], ranks=True)
    add_text_row(table, 0, "Eq(s77, 8) [guard added]", "size=[s77, 8]")
    buf = io.StringIO()
    Console(file=buf, width=100).print(table)
    out = buf.getvalue()
    assert "[guard added]" in out and "size=[s77, 8]" in out and "rank" in out


def test_pipes_get_wide_tables_unless_columns_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from dyncli import output as render

    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.delenv("COLUMNS", raising=False)
    assert render.stdout_console().width == render.PIPE_WIDTH
    monkeypatch.setenv("COLUMNS", "90")
    assert render.stdout_console().width == 90

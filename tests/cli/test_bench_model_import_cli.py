"""bench FILE.py:FUNCTION whose import fails: one error line, and a hint whose command can be
pasted (round 28: the path shell-quoted; a module that removes itself from sys.modules while
importing was a KeyError's traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

ENV = {"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"}
_HINT = " shows the whole error (DYNCLI_DEBUG=1 adds dyncli's traceback)"


@pytest.mark.parametrize(("name", "shown"), [
    ("my model.py", '"my model.py"'),
    ("$(echo x).py", "'$(echo x).py'"),
    ("plain_model.py", "plain_model.py"),
])
def test_the_hints_command_quotes_the_path(runner: CliRunner, name: str, shown: str) -> None:
    Path(name).write_text("raise RuntimeError('weights missing')\n")
    r = runner.invoke(app, ["bench", f"{name}:build", "--device", "cpu"], env=ENV)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines()[-2:] == [
        f"Error: {name}: importing it raised RuntimeError: weights missing (line 1)",
        f"Hint: python {shown}{_HINT}"]


@pytest.mark.parametrize(("body", "error"), [
    # the module takes itself out, then fails
    ("import sys\ndel sys.modules[__name__]\nraise ValueError('bad config')\n",
     "ValueError: bad config (line 3)"),
    # (a module that reloads itself under another name drops its own entry, then exits)
    ("import sys\nsys.modules.pop(__name__)\nsys.exit('needs a GPU')\n",
     "SystemExit: needs a GPU (line 3)"),
])
def test_a_module_that_leaves_sys_modules_while_failing_is_one_error(
        runner: CliRunner, body: str, error: str) -> None:
    Path("gone.py").write_text(body)
    r = runner.invoke(app, ["bench", "gone.py:build", "--device", "cpu"], env=ENV)
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[-2].startswith(f"Error: gone.py: importing it raised {error}"), r.stderr
    assert lines[-1] == f"Hint: python gone.py{_HINT}"
    assert "Traceback" not in r.output and "KeyError" not in r.output

"""Start-up (issue 22): what ``dyncli --help`` and ``dyncli suggest`` load, and that the app they
run — built only as far as the run reaches (``dyncli.cli._app_for``) — answers exactly as the
whole app does. No timing here: ``benchmarks/startup.py`` measures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import _app_for, app

ENV = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}
HF = Path(__file__).resolve().parents[1] / "data" / "pgo" / "hf"

ARGVS = [
    [], ["--help"], ["-h"], ["--version"],
    ["bench", "--help"], ["diagnose", "--help"], ["suggest", "--help"], ["compare", "--help"],
    ["suggest"], ["suggest", "--bogus"], ["sugest"], ["--bogus"], ["bench", "--strategy"],
    ["suggest", "--pgo-dir", str(HF), "-q"], ["suggest", "--pgo-dir", str(HF), "-f", "python"],
    ["suggest", "--pgo-dir", str(HF / "nope")], ["--version", "suggest"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "(none)")
def test_the_app_a_run_gets_answers_as_the_whole_app(runner: CliRunner, argv: list[str]) -> None:
    whole = runner.invoke(app, argv, env=ENV, prog_name="dyncli")
    part = runner.invoke(_app_for(["dyncli", *argv]), argv, env=ENV, prog_name="dyncli")
    assert (part.exit_code, part.stdout, part.stderr) == \
        (whole.exit_code, whole.stdout, whole.stderr)


def test_a_run_that_names_its_command_builds_that_command_only() -> None:
    assert [c.name for c in _app_for(["dyncli", "suggest", "-q"]).registered_commands] == ["suggest"]
    assert _app_for(["dyncli", "--version", "suggest"]) is app  # a root option first: all
    assert _app_for(["dyncli", "nosuch"]) is app
    listed = _app_for(["dyncli", "--help"]).registered_commands
    assert [c.name for c in listed] == [c.name for c in app.registered_commands]
    assert [c.help for c in listed] == [c.help for c in app.registered_commands]
    assert all(c.callback is not o.callback for c, o in zip(listed, app.registered_commands, strict=True))


def test_shell_completion_gets_the_whole_app(monkeypatch: pytest.MonkeyPatch) -> None:
    # the completion scripts run `dyncli` with no arguments, the words in the environment
    monkeypatch.setenv("_DYNCLI_COMPLETE", "complete_bash")
    assert _app_for(["dyncli"]) is app
    env = {"COMP_WORDS": "dyncli bench --strategy static,au", "COMP_CWORD": "3",
           "_DYNCLI_COMPLETE": "complete_bash", "PATH": "/usr/bin:/bin",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    done = subprocess.run([sys.executable, "-m", "dyncli"], capture_output=True, text=True,
                          env=env, check=False, timeout=60)
    assert done.stdout.split() == ["static,automatic"], done.stderr


def _modules_after(argv: list[str]) -> set[str]:
    """The modules a ``dyncli`` run loaded, from a fresh interpreter."""
    code = ("import sys, json\n"
            f"sys.argv = {['dyncli', *argv]!r}\n"
            "from dyncli.__main__ import main\n"
            "try:\n    main()\n"
            "finally:\n    sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=HF)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.rpartition("MODULES ")[2]))


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_help_loads_neither_rich_nor_the_config_reader() -> None:
    loaded = _modules_after(["--help"])
    assert not _tops(loaded) & {"rich", "torch", "tomllib", "tempfile"}
    assert not loaded & {"dyncli.config", "dyncli.output", "dyncli.suggest"}


def test_quiet_suggest_loads_no_rich_and_no_other_feature() -> None:
    loaded = _modules_after(["suggest", "--pgo-dir", str(HF), "-q"])
    assert "dyncli.suggest.pgo_pickle" in loaded
    assert not _tops(loaded) & {"rich", "torch", "numpy"}
    assert not loaded & {"dyncli.inputs", "dyncli.suggest.joblist", "dyncli.diagnose",
                         "dyncli.compare", "dyncli.logparse.trace"}
    # config names the strategies from bench's table: that table alone, torch-free
    bench = {m for m in loaded if m.startswith("dyncli.bench")}
    assert bench == {"dyncli.bench", "dyncli.bench.core", "dyncli.bench.core.strategy"}, bench

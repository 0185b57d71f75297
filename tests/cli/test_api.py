"""The Python API: ``dyncli.<feature>.run`` returns what the command's ``--json`` writes.

Also: option validation through the API, exit codes, ``-`` as stdin for traces, and what
importing the package pulls in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dyncli
from dyncli.cli import app
from dyncli.config import DiagnoseConfig
from dyncli.errors import ConfigError, InputError
from dyncli.output import to_json_text

DATA = Path(__file__).resolve().parents[1] / "data"
LOG = DATA / "logs" / "user_size_specialization.log"
TRACE_DIR = DATA / "traces" / "auto_dynamic_batch"
PGO = DATA / "pgo" / "mlp"
ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}


def _as_json(doc: dict) -> dict:
    """The document as the CLI writes it (tuples become lists, NaN null)."""
    return json.loads(to_json_text(doc))


@pytest.mark.parametrize("path", [LOG, TRACE_DIR], ids=["text-log", "trace-dir"])
def test_diagnose_api_equals_cli_json(runner: CliRunner, path: Path) -> None:
    cli = runner.invoke(app, ["diagnose", str(path), "--json", "-"], env=ENV)
    assert cli.exit_code == 0, cli.stderr
    assert _as_json(dyncli.diagnose.run(path).to_dict()) == json.loads(cli.stdout)


def test_suggest_api_equals_cli_json(runner: CliRunner) -> None:
    for options, flags in (({"pgo_dir": PGO}, ["--pgo-dir", str(PGO)]),
                           ({"from_trace": PGO / "trace.log.gz", "include_params": True},
                            ["--from-trace", str(PGO / "trace.log.gz"), "--include-params"])):
        cli = runner.invoke(app, ["suggest", *flags, "--json", "-"], env=ENV)
        assert cli.exit_code == 0, cli.stderr
        assert _as_json(dyncli.suggest.run(**options).to_dict()) == json.loads(cli.stdout)


def test_api_validates_options_like_the_config_file() -> None:
    with pytest.raises(ConfigError, match=r"dyncli.diagnose.run: diagnose.strict: expected bool, got 'yes'"):
        dyncli.diagnose.run(LOG, strict="yes")
    with pytest.raises(ConfigError, match=r"diagnose.nope: unknown key"):
        dyncli.diagnose.run(LOG, nope=1)
    with pytest.raises(ConfigError, match=r"fail_on: expected one of recompiles, specializations, graph-breaks, got 'x'"):
        dyncli.diagnose.run(LOG, fail_on=["x"])
    with pytest.raises(ConfigError, match="not both"):
        dyncli.diagnose.run(LOG, config=DiagnoseConfig(), strict=True)
    with pytest.raises(ConfigError, match=r"suggest.format: expected one of env"):
        dyncli.suggest.run(pgo_dir=PGO, format="yaml")
    with pytest.raises(ConfigError, match=r"bench.repeat: expected int, got 'ten'"):
        dyncli.bench.run("resnet18", repeat="ten")  # raised before torch is imported
    with pytest.raises(InputError, match=r"missing\.log: no such file"):
        dyncli.diagnose.run("missing.log")


def test_api_gate_is_reported_not_raised() -> None:
    diag = dyncli.diagnose.run(LOG, fail_on=["recompiles", "graph-breaks"])
    assert diag.tripped == ("recompiles",)
    assert "fail_on" not in diag.to_dict()  # not part of the JSON document


def test_exit_codes(runner: CliRunner) -> None:
    assert runner.invoke(app, ["diagnose", "missing.log"], env=ENV).exit_code == 2
    hit = runner.invoke(app, ["diagnose", str(LOG), "--fail-on", "recompiles"], env=ENV)
    assert hit.exit_code == 1 and "Error: found recompiles (--fail-on)" in hit.stderr
    assert runner.invoke(app, ["diagnose", str(LOG), "--fail-on", "graph-breaks"], env=ENV).exit_code == 0
    # nothing given and torch's own directory absent
    assert runner.invoke(app, ["suggest"], env={**ENV, "TORCHINDUCTOR_CACHE_DIR": "/nonexistent/dir"}).exit_code == 2
    assert runner.invoke(app, ["suggest", "--pgo-dir", "nowhere"], env=ENV).exit_code == 2
    assert runner.invoke(app, ["bench", "--strategy", "nope", "resnet18"], env=ENV).exit_code == 2


def test_trace_on_stdin_is_sniffed_as_a_trace(runner: CliRunner) -> None:
    (trace,) = TRACE_DIR.iterdir()
    piped = runner.invoke(app, ["diagnose", "-", "--json", "-"], input=trace.read_bytes(), env=ENV)
    assert piped.exit_code == 0, piped.stderr
    doc, want = json.loads(piped.stdout), _as_json(dyncli.diagnose.run(trace).to_dict())
    assert doc["inputs"] == ["<stdin>"] and "compile_time_s" in doc
    for key in ("frames", "recompiles", "specializations", "suggestions", "compile_time_s"):
        assert doc[key] == want[key]
    text = runner.invoke(app, ["diagnose", "-", "--json", "-"], input=LOG.read_bytes(), env=ENV)
    assert text.exit_code == 0 and "compile_time_s" not in json.loads(text.stdout)


def test_suggest_from_trace_on_stdin(runner: CliRunner) -> None:
    import gzip

    data = gzip.decompress((PGO / "trace.log.gz").read_bytes())
    piped = runner.invoke(app, ["suggest", "--from-trace", "-", "-q"], input=data, env=ENV)
    from_file = runner.invoke(app, ["suggest", "--from-trace", str(PGO / "trace.log.gz"), "-q"], env=ENV)
    assert piped.exit_code == 0 and piped.stdout == from_file.stdout
    assert piped.stdout.startswith("TORCH_COMPILE_DYNAMIC_SOURCES=")


def test_importing_the_package_stays_light() -> None:
    # A fresh interpreter: this process has imported torch and numpy already.
    code = ("import sys, dyncli, dyncli.diagnose, dyncli.suggest, dyncli.cli\n"
            "assert dyncli.diagnose.run and dyncli.suggest.run\n"
            "heavy = sorted({'torch', 'numpy', 'scipy'} & set(sys.modules))\n"
            "assert not heavy, heavy\n"
            "import dyncli.bench\n"
            "assert 'torch' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_shell_completion_is_on() -> None:
    run = [sys.executable, "-m", "dyncli"]
    shown = subprocess.run([*run, "--show-completion", "bash"], capture_output=True, text=True,
                           check=False)
    assert shown.returncode == 0 and "_dyncli_completion" in shown.stdout
    env = {"COMP_WORDS": "dyncli diag", "COMP_CWORD": "1", "_DYNCLI_COMPLETE": "complete_bash",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run(run, capture_output=True, text=True, env=env, check=False)
    assert done.stdout.split() == ["diagnose"]

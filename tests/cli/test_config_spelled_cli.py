"""A pyproject.toml's settings named as written there, in the commands' messages (round 28):
``[tool.dyncli.diagnose] fail_on``, ``tool.dyncli.bench.repeat``; before, autodyn.toml's
spelling (or the flag's, ``--repeat``, for a value no flag gave)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from typer.testing import CliRunner

from dyncli.cli import app

ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}
LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
_spec = importlib.util.spec_from_file_location(
    "compare_docs_spelled", Path(__file__).resolve().parents[1] / "unit" / "compare_docs.py")
assert _spec and _spec.loader
docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs)


def test_diagnose_gate_from_a_pyproject(runner: CliRunner) -> None:
    Path("pyproject.toml").write_text('[tool.dyncli.diagnose]\nfail_on = ["recompiles"]\n')
    r = runner.invoke(app, ["diagnose", str(LOGS / "hf_tiny_bert.log")], env=ENV)
    assert r.exit_code == 1
    assert "found recompiles ([tool.dyncli.diagnose] fail_on in pyproject.toml)" in r.stderr


def test_bench_setting_from_a_pyproject_is_named_as_written(runner: CliRunner) -> None:
    Path("pyproject.toml").write_text("[tool.dyncli.bench]\nrepeat = 1\n")
    r = runner.invoke(app, ["bench", "resnet18"], env=ENV)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines()[0] == ("Error: tool.dyncli.bench.repeat must be >= 2 (medians "
                                        "and p-values need samples)")
    r = runner.invoke(app, ["bench", "resnet18", "--repeat", "1"], env=ENV)
    assert r.stderr.splitlines()[0].startswith("Error: --repeat must be >= 2")
    Path("pyproject.toml").write_text("[tool.dyncli.bench]\nrepaet = 3\n")
    r = runner.invoke(app, ["bench", "resnet18"], env=ENV)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr.splitlines() == [
        "Error: pyproject.toml: tool.dyncli.bench.repaet: unknown key",
        r.stderr.splitlines()[1]]
    assert r.stderr.splitlines()[1].startswith("Hint: Known keys in [tool.dyncli.bench]: ")


def test_verbose_names_a_pyprojects_settings_as_written(runner: CliRunner) -> None:
    Path("pyproject.toml").write_text("[tool.dyncli.diagnose]\nlimit = 4\n")
    r = runner.invoke(app, ["diagnose", str(LOGS / "hf_tiny_bert.log"), "-v"], env=ENV)
    assert r.exit_code == 0, r.output
    assert "  tool.dyncli.diagnose.limit = 4  (pyproject.toml)" in r.stderr
    assert "  diagnose.strict = False  (default)" in r.stderr


def test_compare_gate_from_a_pyproject(runner: CliRunner, tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    Path("pyproject.toml").write_text('[tool.dyncli.compare]\nfail_on = ["regression"]\n')
    r = runner.invoke(app, ["compare", str(a), str(b)], env=ENV)
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: [tool.dyncli.compare] fail_on in pyproject.toml: "
                               "resnet18/static: latency +50.0%"), r.stderr
    r = runner.invoke(app, ["compare", str(a), str(b), "--fail-on", "regression"], env=ENV)
    assert r.stderr.startswith("Error: --fail-on regression: resnet18/static"), r.stderr

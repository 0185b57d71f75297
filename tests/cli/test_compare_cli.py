"""dyncli compare and bench --suite options through the CLI: exit codes 0/1/2, every output form."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from dyncli.cli import app

ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}
ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "compare_docs", Path(__file__).resolve().parents[1] / "unit" / "compare_docs.py")
assert _spec and _spec.loader
docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs)


def _files(tmp_path: Path) -> tuple[str, str]:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    return str(a), str(b)


def test_same_file_exits_0(runner: CliRunner, tmp_path: Path) -> None:
    a, _ = _files(tmp_path)
    r = runner.invoke(app, ["compare", a, a, "--fail-on", "regression"], env=ENV)
    assert r.exit_code == 0, r.output
    assert "4 pairs compared, 0 regressions" in r.stdout
    assert "resnet18" in r.stdout and r.stderr == ""


def test_scaled_model_exits_1_and_is_named(runner: CliRunner, tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    r = runner.invoke(app, ["compare", a, b, "--fail-on", "regression"], env=ENV)
    assert r.exit_code == 1
    assert "resnet18/static: REGRESSION: latency +50.0% (p<0.001)" in r.stdout
    assert r.stderr.startswith("Error: --fail-on regression: resnet18/static: latency +50.0%")
    assert "BertModel" not in r.stderr
    # without --fail-on the same finding is reported and the exit code is 0
    assert runner.invoke(app, ["compare", a, b], env=ENV).exit_code == 0


def test_unreadable_file_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    a, _ = _files(tmp_path)
    r = runner.invoke(app, ["compare", a, str(tmp_path / "nope.json")], env=ENV)
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path / 'nope.json'}: no such file\n"


def test_markdown_json_and_plot(runner: CliRunner, tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    r = runner.invoke(app, ["compare", a, b, "-f", "markdown"], env=ENV)
    assert r.exit_code == 0 and r.stdout.startswith("### dyncli compare ❌\n")
    assert "| resnet18 | static |" in r.stdout
    r = runner.invoke(app, ["compare", a, b, "--json", "-"], env=ENV)
    doc = json.loads(r.stdout)
    assert doc["command"] == "compare" and doc["summary"]["regressions"] == 2
    assert "REGRESSION" in r.stderr  # the table moves to stderr when stdout carries JSON
    png = tmp_path / "c.png"
    r = runner.invoke(app, ["compare", a, b, "--plot", str(png), "--json", str(tmp_path / "c.json")],
                      env=ENV)
    assert r.exit_code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "c.json").read_text())["summary"]["pairs"] == 4


def test_compare_table_in_autodyn_toml(runner: CliRunner, tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    Path("autodyn.toml").write_text('[compare]\nfail_on = ["regression"]\nthreshold = 0.6\n')
    assert runner.invoke(app, ["compare", a, b], env=ENV).exit_code == 0  # +50% < 60%
    r = runner.invoke(app, ["compare", a, b, "--threshold", "0.1"], env=ENV)
    assert r.exit_code == 1


def test_list_suites_and_suite_usage_errors(runner: CliRunner) -> None:
    r = runner.invoke(app, ["bench", "--list-suites"], env=ENV)
    assert r.exit_code == 0 and r.stdout.startswith("cpu-small: ")
    assert "bert-tiny" in r.stdout and "\nhf: " in r.stdout
    r = runner.invoke(app, ["bench", "resnet18", "--suite", "cpu-small"], env=ENV)
    assert r.exit_code == 2 and "Give a model or --suite, not both" in r.stderr
    r = runner.invoke(app, ["bench", "--suite", "cpu-smal"], env=ENV)
    assert r.exit_code == 2 and "no built-in suite 'cpu-smal'" in r.stderr
    r = runner.invoke(app, ["bench", "--suite", "cpu-small", "--resume"], env=ENV)
    assert r.exit_code == 2 and "--resume needs --json PATH" in r.stderr


def test_api_equals_cli_json(runner: CliRunner, tmp_path: Path) -> None:
    import dyncli

    a, b = _files(tmp_path)
    cli = runner.invoke(app, ["compare", a, b, "--json", "-", "--threshold", "0.1"], env=ENV)
    assert cli.exit_code == 0, cli.stderr
    api = dyncli.compare.run(a, b, threshold=0.1).to_dict()
    assert json.loads(json.dumps(api)) == json.loads(cli.stdout)


def test_compare_runs_where_torch_cannot_be_imported(tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    # A finder that refuses torch, as an environment without it would (sys.modules['torch'] =
    # None is not that: scipy's array-API helpers then trip over the None).
    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "from dyncli.cli import app\n"
            f"app(['compare', {a!r}, {b!r}, '--fail-on', 'regression'], prog_name='dyncli')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Error: --fail-on regression: resnet18/static" in proc.stderr


def test_nothing_compared_exits_2_with_one_line_even_under_a_gate(runner: CliRunner,
                                                                   tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", [docs.run("m1.py:build", "static", 0)])
    b = docs.write(tmp_path / "b.json", [docs.run("m2.py:build", "static", 1)])
    r = runner.invoke(app, ["compare", str(a), str(b), "--fail-on", "regression"], env=ENV)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines()[0] == (
        f"Error: nothing compared: no (model, strategy, mode) is in both files; base ({a}) has "
        f"m1.py:build/static; new ({b}) has m2.py:build/static")

"""Every warning bench shows reaches its JSON once: the notes on the command's own options too.

Before round 28 the notes on ``--emit-file`` without ``--emit``, ``--resume`` and
``--timeout`` where nothing uses them were printed, and missing from ``--json``'s
``warnings``: a CI job reading the document did not see them. A model whose build raises
keeps the run short (no compile) and still writes the document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

BROKEN = f"{Path(__file__).resolve().parent / 'conftest_bench.py'}:broken"
NOTE = "--emit-file p.py: for --emit; no plan is written without it, so it was not used"


def test_the_command_s_notes_are_in_the_json_once_for_a_model_and_a_suite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(app, ["bench", BROKEN, "--device", "cpu", "--emit-file", "p.py",
                            "--json", "one.json"])
    assert r.exit_code == 1, r.output  # nothing ran
    assert r.stderr.count(f"Warning: {NOTE}") == 1
    doc = json.loads((tmp_path / "one.json").read_text())
    assert doc["warnings"].count(NOTE) == 1
    assert [run["status"] for run in doc["runs"]] == ["model_fail_to_load"]

    (tmp_path / "suite.toml").write_text(
        f'[bench]\ndevice = "cpu"\n\n[[models]]\nmodel = "{BROKEN}"\nname = "broken"\n')
    r = runner.invoke(app, ["bench", "--suite", "suite.toml", "--emit-file", "p.py",
                            "--json", "s.json"])
    assert r.exit_code == 1, r.output  # no model ran
    assert r.stderr.count(NOTE) == 1
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["warnings"][0] == NOTE and doc["warnings"].count(NOTE) == 1
    assert [m["status"] for m in doc["models"]] == ["model_fail_to_load"]

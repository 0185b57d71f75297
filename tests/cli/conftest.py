"""Fixtures every CLI test shares: a CliRunner, and no DYNCLI_* settings or config file leaking in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run each test in an empty dir (so the repo's autodyn.toml is not found) without DYNCLI_* env."""
    for name in list(os.environ):
        if name.startswith("DYNCLI_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)

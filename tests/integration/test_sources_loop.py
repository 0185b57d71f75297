"""suggest → autodyn.toml → bench: the allow-list dyncli suggests is measured by bench.

A real PGO run of examples/model.py (batch 8, then 10) records that dim 0 of ``L['x']``
varied; ``dyncli suggest --format toml`` turns that state into a ``[bench]`` table; with it
as the project's autodyn.toml, ``dyncli bench --strategy automatic,sources`` compiles the
allow-listed model once where automatic dynamic compiles twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from typer.testing import CliRunner

from dyncli.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.long]  # minutes on 2 cores: CI's long step (round 33)

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
PGO_RUN = f"""
import sys, torch
sys.path.insert(0, {str(ROOT / 'examples')!r})
from model import build
model, (x,) = build()
compiled = torch.compile(model, backend="eager")
for b in (8, 10):
    compiled(torch.randn(b, x.shape[1]))
"""


def test_suggested_toml_drives_the_sources_strategy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH_COMPILE_", "DYNCLI_", "TORCH_TRACE", "TORCH_LOGS"))}
    env.update(TORCH_COMPILE_JOB_ID="loop", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", PGO_RUN], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]

    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("DYNCLI_"):
            monkeypatch.delenv(name)
    runner = CliRunner()
    toml = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path / "cache"), "--format", "toml", "-q"])
    assert toml.exit_code == 0, toml.output
    assert tomllib.loads(toml.stdout)["bench"]["dynamic_sources"] == ["L['x']:0"]
    (tmp_path / "autodyn.toml").write_text(toml.stdout)

    bench = runner.invoke(app, ["bench", MODEL, "--strategy", "automatic,sources", "--variations", "4",
                                "--repeat", "2", "--warmup", "0", "--device", "cpu", "--json", "out.json"])
    assert bench.exit_code == 0, bench.output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["settings"]["dynamic_sources"] == ["L['x']:0"]
    compiles = {r["strategy"]: r["compiles"] for r in doc["runs"]}
    assert compiles == {"automatic": 2, "sources": 1}
    assert all(v["accuracy"] == "pass" for r in doc["runs"] for v in r["variations"])

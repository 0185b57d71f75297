"""A real suite run: every model in its own process, with a pass, a build that raises, a
SIGKILL and a hang among them; then --resume (which retries only the build that raised) and
compare on the file it wrote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

# long: see pyproject.toml; timing: a hang ended by its timeout and a SIGKILL (CI runs it
# beside the hog, pytest -m timing)
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timing]

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "conftest_bench.py"


def _dyncli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYNCLI_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "dyncli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_suite_records_every_model_and_resume_skips_them(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(f"""
[bench]
strategy = ["static"]
variations = 2
repeat = 2
warmup = 0
device = "cpu"

[[models]]
model = "{ROOT / 'examples' / 'model.py'}:build"
name = "mlp"

[[models]]
model = "{MODELS}:broken"
name = "broken"

[[models]]
model = "{MODELS}:killed"
name = "killed"

[[models]]
model = "{MODELS}:hangs"
name = "hangs"
timeout = 15
""")
    r = _dyncli("bench", "--suite", str(suite), "--json", "out.json", "--csv", "out.csv",
                "--strategy", "static,automatic", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    status = {m["model"]: m["status"] for m in doc["models"]}
    assert status == {"mlp": "pass", "broken": "model_fail_to_load", "killed": "OOM",
                      "hangs": "timeout"}
    models = {m["model"]: m for m in doc["models"]}
    assert "weights file missing" in models["broken"]["error"]
    assert "SIGKILL" in models["killed"]["error"]
    assert "still running after 15 s" in models["hangs"]["error"]
    assert models["mlp"]["settings"]["strategy"] == ["static", "automatic"]  # the flag won
    runs = {(run["model"], run["strategy"]): run for run in doc["runs"]}
    assert len(runs) == 8
    mlp = runs[("mlp", "static")]
    assert mlp["compiles"] == 2 and len(mlp["variations"]) == 2
    assert all(len(v["compiled_samples_ms"]) == 2 and len(v["eager_samples_ms"]) == 2
               for v in mlp["variations"])
    assert "[4/4] hangs: timeout" in r.stderr and "ETA" in r.stderr
    assert "suite suite" in r.stdout and "model_fail_to_load" in r.stdout
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert header.startswith("dev,name,batch_size,speedup,abs_latency,compilation_latency")

    r = _dyncli("bench", "--suite", str(suite), "--json", "out.json", "--resume",
                "--strategy", "static,automatic", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # a model that did not build is tried again (seconds); pass, OOM and timeout are kept
    assert "3 model(s) already complete, 1 to run" in r.stderr
    assert "[2/4] broken: model_fail_to_load" in r.stderr and "mlp: starting" not in r.stderr
    # what was kept is not run again: only the model that did not build starts (and the kept
    # runs below are the first run's, samples and all); not a bound on the wall clock, which a
    # busy machine stretches
    assert re.findall(r"\] (\S+): starting", r.stderr) == ["broken"], r.stderr
    again = json.loads((tmp_path / "out.json").read_text())
    assert again["suite"]["resumed"] == ["mlp", "killed", "hangs"]
    kept = [run for run in doc["runs"] if run["model"] != "broken"]
    assert [run for run in again["runs"] if run["model"] != "broken"] == kept
    assert [m["status"] for m in again["models"]] == list(status.values())

    out = CliRunner().invoke(app, ["compare", str(tmp_path / "out.json"),
                                   str(tmp_path / "out.json"), "--fail-on", "regression"])
    assert out.exit_code == 0, out.output

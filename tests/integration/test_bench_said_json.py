"""Every warning bench shows reaches its JSON once: the notes on the command's own options too.

Before round 28 the notes on ``--emit-file`` without ``--emit``, ``--resume`` and
``--timeout`` where nothing uses them were printed, and missing from ``--json``'s
``warnings``: a CI job reading the document did not see them. A model whose build raises
keeps the run short (no compile) and still writes the document.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTE = "--emit-file p.py: for --emit; no plan is written without it, so it was not used"


def _dyncli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYNCLI_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "dyncli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_command_s_notes_are_in_the_json_once_for_a_model_and_a_suite(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('def build():\n    raise RuntimeError("weights missing")\n')
    r = _dyncli("bench", "m.py:build", "--device", "cpu", "--emit-file", "p.py",
                "--json", "one.json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # nothing ran
    assert r.stderr.count(f"Warning: {NOTE}") == 1
    doc = json.loads((tmp_path / "one.json").read_text())
    assert doc["warnings"].count(NOTE) == 1
    assert [run["status"] for run in doc["runs"]] == ["model_fail_to_load"]

    (tmp_path / "suite.toml").write_text(
        f'[bench]\ndevice = "cpu"\n\n[[models]]\nmodel = "{tmp_path / "m.py"}:build"\n'
        'name = "broken"\n')
    r = _dyncli("bench", "--suite", "suite.toml", "--emit-file", "p.py", "--json", "s.json",
                cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # no model ran
    assert r.stderr.count(NOTE) == 1
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["warnings"][0] == NOTE and doc["warnings"].count(NOTE) == 1
    assert [m["status"] for m in doc["models"]] == ["model_fail_to_load"]

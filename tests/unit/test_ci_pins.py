"""CI's torch pins, the published floor and the docs say the same thing (no torch needed)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / ".ci" / name).read_text()
    return dict(re.findall(r"^([a-z]+)==(\S+)$", text, flags=re.M))


def test_newest_and_previous_pins_and_the_floor_agree() -> None:
    newest, previous = _pins("constraints.txt"), _pins("constraints-previous.txt")
    assert set(newest) == set(previous) == {"torch", "torchvision"}
    key = [int(x) for x in newest["torch"].split(".")], [int(x) for x in previous["torch"].split(".")]
    assert key[0] > key[1], "constraints.txt pins the newest torch, constraints-previous.txt the one before"
    bench = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    floor = next(d for d in bench if d.startswith("torch>="))
    assert floor == "torch>=" + ".".join(previous["torch"].split(".")[:2]), "the floor is what CI tests"
    for doc in ("README.md", "docs/torch-versions.md"):
        text = (ROOT / doc).read_text()
        assert newest["torch"] in text and previous["torch"] in text, doc


def test_ci_replaces_pip_constraints_and_runs_the_torch_marker_on_the_previous() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert 'PIP_CONSTRAINT="$ROOT/$2"' in script
    assert "install .venv .ci/constraints.txt" in script
    assert "install .venv-previous .ci/constraints-previous.txt" in script
    assert "pytest -m torch" in script
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("torch:") for m in markers)

"""Golden JSON for every real program: the whole ``--json`` document, paths normalized.

One golden per torch version that recorded the state (tests/data/pgo/expected for 2.14.1,
tests/data/<version>/pgo/expected for the others), each suggested for that same torch, with
the stale check pointed at the data folder (``source_root``) so that it finds no source file
on any machine. Refresh after regenerating the state (or changing the output on purpose) with::

    DYNCLI_REFRESH_GOLDEN=1 .venv/bin/pytest tests/unit/test_suggest_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dyncli.config import SuggestConfig
from dyncli.suggest.api import run

ROOT = Path(__file__).resolve().parents[1] / "data"
# torch version -> its recorded PGO state (2.14.1 predates the per-version folders).
VERSIONS = {"2.14.1": ROOT / "pgo", "2.15.0": ROOT / "2.15.0" / "pgo"}
CASES = [(v, p.name) for v, d in VERSIONS.items() for p in sorted(d.iterdir()) if (p / "dynamo").is_dir()]


def _normalized(doc: dict[str, Any], data: Path) -> dict[str, Any]:
    doc = dict(doc, dyncli="<version>")
    doc["inputs"] = [str(Path(p).relative_to(data)) for p in doc["inputs"]]
    doc["notes"] = [n.replace(str(data), "<data>") for n in doc["notes"]]
    return doc


def suggest(version: str, program: str) -> dict[str, Any]:
    """The document for one recorded program, suggested for the torch that recorded it."""
    data = VERSIONS[version]
    result = run(pgo_dir=data / program, source_root=data, config=SuggestConfig(torch_version=version))
    return _normalized(result.to_dict(), data)


def test_both_versions_recorded_every_program() -> None:
    assert {p for v, p in CASES if v == "2.14.1"} == {p for v, p in CASES if v == "2.15.0"}
    assert len(CASES) >= 14


@pytest.mark.parametrize(("version", "program"), CASES)
def test_golden_json(version: str, program: str) -> None:
    doc = suggest(version, program)
    path = VERSIONS[version] / "expected" / f"{program}.json"
    if os.environ.get("DYNCLI_REFRESH_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    assert doc == json.loads(path.read_text()), f"refresh with DYNCLI_REFRESH_GOLDEN=1 if intended ({path})"


@pytest.mark.parametrize("program", sorted({p for _, p in CASES}))
def test_both_versions_give_the_same_lists(program: str) -> None:
    """State recorded by 2.14.1 and by 2.15.0 of the same program: the same suggestion."""
    old, new = (run(pgo_dir=VERSIONS[v] / program, source_root=VERSIONS[v],
                    config=SuggestConfig(torch_version="2.15")) for v in VERSIONS)
    assert [(sl.name, sl.entries) for sl in old.lists] == [(sl.name, sl.entries) for sl in new.lists]
    assert old.torch_hint == new.torch_hint
    assert [[(r.source, r.render, r.status) for r in f.inputs] for f in old.frames] == \
        [[(r.source, r.render, r.status) for r in f.inputs] for f in new.frames]

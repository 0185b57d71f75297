"""Golden JSON for every real program: the whole ``--json`` document, paths normalized.

Refresh after regenerating tests/data/pgo (or changing the output on purpose) with::

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

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
GOLDEN = DATA / "expected"
PROGRAMS = sorted(p.name for p in DATA.iterdir() if (p / "dynamo").is_dir())


def _normalized(doc: dict[str, Any]) -> dict[str, Any]:
    doc = dict(doc, dyncli="<version>")
    doc["inputs"] = [str(Path(p).relative_to(DATA)) for p in doc["inputs"]]
    return doc


@pytest.mark.parametrize("program", PROGRAMS)
def test_golden_json(program: str) -> None:
    doc = _normalized(run(pgo_dir=DATA / program, config=SuggestConfig()).to_dict())
    path = GOLDEN / f"{program}.json"
    if os.environ.get("DYNCLI_REFRESH_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    assert doc == json.loads(path.read_text()), f"refresh with DYNCLI_REFRESH_GOLDEN=1 if intended ({path})"

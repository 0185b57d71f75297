"""Golden JSON of ``dyncli diagnose --json`` for every captured text log.

The whole document (minus the dyncli version) is compared with tests/data/golden/text_<case>.json
after normalizing what differs between machines: the repo root and site-packages paths
(pids and timestamps never reach the JSON). Graph breaks are explained by torch 2.15.0's
recorded graph-break registry, passed in as the pipeline passes the installed one: the
documents are the same with and without torch installed. Refresh after an intended change with

    DYNCLI_REFRESH_GOLDEN=1 .venv/bin/pytest tests/unit/test_diagnose_golden.py

and review the diff like code.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from recorded_registry import recorded

from dyncli.diagnose.read import diagnose_logs
from dyncli.output import envelope, to_json_text

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "logs"
GOLDEN = ROOT / "tests" / "data" / "golden"
CASES = sorted(p.stem for p in LOGS.glob("*.log"))
_SITE = re.compile(r"/\S*?/site-packages/")
# The logs were captured in some checkout (paths inside them name it); tests may run in another.
_DATA = re.compile(r"/[^\s'\"]*?/tests/data/")


def normalize(obj: Any, root: str) -> Any:
    """Paths made machine-independent: ``<repo>/…`` and ``<site-packages>/…``."""
    if isinstance(obj, str):
        text = _DATA.sub("<repo>/tests/data/", _SITE.sub("<site-packages>/", obj))
        return text.replace(root, "<repo>")
    if isinstance(obj, dict):
        # (the registry's version: the documents were written with the installed torch's)
        return {k: normalize(v, root) for k, v in obj.items()
                if k not in ("dyncli", "graph_break_registry")}
    if isinstance(obj, list):
        return [normalize(v, root) for v in obj]
    return obj


def document(case: str, logs: Path = LOGS) -> dict[str, Any]:
    diag = diagnose_logs([logs / f"{case}.log"], strict=True, registry=recorded)
    doc = json.loads(to_json_text(envelope("diagnose", diag.to_json())))
    return normalize(doc, str(ROOT))


def test_cases_exist() -> None:
    assert len(CASES) >= 9


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    got = document(case)
    path = GOLDEN / f"text_{case}.json"
    if os.environ.get("DYNCLI_REFRESH_GOLDEN") == "1" or not path.exists():
        path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
        if os.environ.get("DYNCLI_REFRESH_GOLDEN") != "1":
            pytest.fail(f"{path.name} did not exist; written now, review and commit it")
    want = json.loads(path.read_text())
    assert got == want, f"{case}: diagnosis changed; refresh with DYNCLI_REFRESH_GOLDEN=1 if intended"


# Logs recorded by newer torch releases (tests/data/make_logs.py under each), with their goldens.
NEWER = {"2.15.0": ROOT / "tests" / "data" / "2.15.0"}
NEWER_CASES = [(v, p.stem) for v, d in NEWER.items() for p in sorted((d / "logs").glob("*.log"))]


def test_newer_versions_recorded_every_case() -> None:
    for version in NEWER:
        assert {c for v, c in NEWER_CASES if v == version} == set(CASES), version


@pytest.mark.parametrize(("version", "case"), NEWER_CASES)
def test_golden_newer_torch(version: str, case: str) -> None:
    got = document(case, NEWER[version] / "logs")
    path = NEWER[version] / "golden" / f"text_{case}.json"
    if os.environ.get("DYNCLI_REFRESH_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text()), (
        f"{version} {case}: diagnosis changed; refresh with DYNCLI_REFRESH_GOLDEN=1 if intended")


def test_normalize_paths() -> None:
    doc = {"file": "/home/u/proj/a.py", "x": ["/opt/venv/lib/python3.11/site-packages/torch/f.py"],
           "dyncli": "0.1.0"}
    assert normalize(doc, "/home/u/proj") == {"file": "<repo>/a.py",
                                              "x": ["<site-packages>/torch/f.py"]}
    # a log captured in another checkout
    assert normalize({"f": "/work/x/tests/data/programs/p.py"}, "/tmp/clone") == {
        "f": "<repo>/tests/data/programs/p.py"}

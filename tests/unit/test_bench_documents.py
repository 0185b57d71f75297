"""The bench JSON has one owner: every recorded document reads back and writes out unchanged.

The documents under ``tests/data/<torch version>/bench/`` are real ``dyncli bench --json``
output (``tests/data/make_bench_docs.py`` records them, with the recipe beside them). No torch
here: the result model, compare and the suite reader are the torch-free core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status
from dyncli.bench.core.suite_result import SuiteResult
from dyncli.output import to_json_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(ROOT.glob("tests/data/*/bench/*.json"))


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_golden_documents_for_both_torch_versions() -> None:
    versions = {p.parent.parent.name for p in DOCS}
    assert len(versions) >= 2, versions
    assert {"stream", "plan", "ranks", "suite", "pgo"} <= {p.stem for p in DOCS}


def _with_modes(doc: dict) -> dict:
    """``doc`` as a dyncli with compile modes writes it: these documents were recorded before
    compile modes, and each run (and the recommendation) measured the default mode."""
    doc = json.loads(json.dumps(doc))
    for holder in [doc, *(m for m in doc.get("models") or [] if isinstance(m, dict))]:
        for run in holder.get("runs") or []:
            run.setdefault("compile_mode", "default")
        if isinstance(holder.get("recommendation"), dict):
            holder["recommendation"].setdefault("compile_mode", "default")
    return doc


@pytest.mark.parametrize("path", DOCS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_golden_document_round_trips(path: Path) -> None:
    doc = _read(path)
    model = SuiteResult if "models" in doc else BenchResult
    again = json.loads(to_json_text(model.from_dict(doc).to_dict()))
    assert again == _with_modes(doc)
    assert all(r.compile_mode == "default" for r in BenchResult.from_dict(doc).runs)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_statuses_read_back_as_enum_members(path: Path) -> None:
    result = BenchResult.from_dict(_read(path))
    assert result.runs and result.left_out == 0
    for run in result.runs:
        assert type(run.status) is Status
        assert all(type(v.status) is Status for v in run.variations)
        assert all(type(r.status) is Status for r in run.ranks)


def test_a_newer_schema_is_refused_and_damaged_runs_are_left_out() -> None:
    doc = _read(DOCS[0])
    with pytest.raises(ValueError, match="newer dyncli"):
        BenchResult.from_dict({**doc, "schema_version": 99})
    damaged = {**doc, "runs": [*doc["runs"], 7, {"strategy": "x"}]}
    assert BenchResult.from_dict(damaged).left_out == 2
    run = RunResult.from_dict({"model": "m", "strategy": "s", "status": "from-the-future",
                               "compiles": "many", "variations": [{"accuracy": None}]})
    assert run.status == Status.UNKNOWN and run.compiles == 0
    assert run.variations[0].status == Status.UNKNOWN


def test_bench_core_compare_and_suites_work_where_torch_cannot_be_imported() -> None:
    single = [p for p in DOCS if p.stem == "stream"]
    suite = next(p for p in DOCS if p.stem == "suite")
    # A finder that refuses torch, as an environment without it would.
    code = ("import sys, json\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "import dyncli.bench, dyncli.compare\n"
            "from dyncli.bench.core.suite_result import SuiteResult\n"
            "from dyncli.errors import UsageError\n"
            f"c = dyncli.compare.run({str(single[0])!r}, {str(single[-1])!r})\n"
            "assert c.to_dict()['pairs'], c.to_dict()\n"
            f"s = SuiteResult.from_dict(json.load(open({str(suite)!r})))\n"
            "assert s.outcomes and s.to_dict()['models']\n"
            "try:\n"
            "    dyncli.bench.run('examples/model.py:build', device='cpu')\n"
            "except UsageError as e:\n"
            "    assert 'needs torch' in str(e), e\n"
            "else:\n"
            "    raise AssertionError('ran without torch')\n"
            "assert 'torch' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr


ENGINE = ("harness", "runner", "passes", "measure", "drivers", "compiling", "served", "window",
          "rank_worker", "distributed", "models", "tensors", "padding", "compile_watch", "timing",
          "accuracy", "device", "suite_child", "child", "worker")


def test_the_core_imports_neither_torch_nor_the_engine() -> None:
    core = sorted(p.stem for p in (ROOT / "dyncli" / "bench" / "core").glob("*.py"))
    code = ("import sys, importlib\n"
            f"for name in {core!r}:\n"
            "    importlib.import_module('dyncli.bench.core.' + name)\n"
            "import dyncli.bench, dyncli.compare, dyncli.bench.render, dyncli.bench.render_files, "
            "dyncli.bench.suite_render\n"
            f"engine = [m for m in {ENGINE!r} if 'dyncli.bench.' + m in sys.modules]\n"
            "assert not engine and 'torch' not in sys.modules, (engine, 'torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr

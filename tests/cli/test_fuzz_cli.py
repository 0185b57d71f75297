"""The mutation fuzzer on a small, seeded budget: no traceback, hang or bad exit code (issue 13).

``benchmarks/fuzz.py`` runs each case through ``dyncli.cli.main`` in a forked child; this is
CI's bounded run (~250 cases, well under a minute). The long campaign and its numbers are in
docs/reliability.md.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _fuzz():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("dyncli_fuzz", ROOT / "benchmarks" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dyncli_fuzz"] = module
    spec.loader.exec_module(module)
    return module


# long: the slowest of the README command's tests (55 s of CPU, 469 s wall at load 17);
# timing: a case still running after 10 s of wall time counts as a hang (it failed at load 17)
@pytest.mark.long
@pytest.mark.timing
@pytest.mark.skipif(sys.platform == "win32", reason="the fuzzer forks")
def test_seeded_fuzz_budget_has_no_failures(tmp_path: Path) -> None:
    fuzz = _fuzz()
    summary = fuzz.campaign({"text": 120, "trace": 80, "pickle": 60, "opcode": 40, "inject": 40},
                            seed=13, timeout=10.0,
                            max_rss=float("inf"), keep=tmp_path / "failed", progress=False)
    # (memory is not bounded here: a forked child inherits the RSS of this pytest process,
    # which depends on what ran before; the long run in docs/reliability.md measures it)
    kinds = summary["kinds"]
    assert sum(k["cases"] for k in kinds.values()) == 340
    assert summary["crash_sites"] == {}, json.dumps(summary["crash_sites"], indent=1)
    for kind, row in kinds.items():
        assert row["hangs"] == 0, kind
        assert set(row["exit_codes"]) <= {"0", "1", "2"}, (kind, row["exit_codes"])
        assert row["leaks"] == 0, kind  # no control character of an input in any output
    assert summary["failures"] == 0

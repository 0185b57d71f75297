"""The trace-only findings on the rank and PGO-reload traces recorded by torch 2.15.0 are the
ones test_trace_analysis.py checks on the 2.14.1 recordings (make_rank_traces.py under each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.read_trace import diagnose_traces

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = {"2.14.1": DATA / "traces", "2.15.0": DATA / "2.15.0" / "traces"}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_two_ranks_diverge(version: str) -> None:
    d = diagnose_traces([VERSIONS[version] / "two_rank_diverge"], strict=True)
    assert d.trace is not None and d.ranks == (0, 1)
    views = {r.rank: r for r in d.trace.ranks}
    assert (views[0].compiles, views[0].recompiles, views[0].dynamic) == (2, 1, ("L['x']:0",))
    assert (views[1].compiles, views[1].recompiles, views[1].dynamic) == (1, 0, ())
    assert any(s.kind == "rank-divergence" for s in d.suggestions)
    assert d.to_json()["trace_stats"]["unknown_kinds"] == {}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_pgo_loaded_yet_recompiled_for_size(version: str) -> None:
    d = diagnose_traces([VERSIONS[version] / "pgo_recompile"], strict=True)
    assert d.trace is not None and d.trace.pgo_loaded
    (finding,) = d.trace.pgo
    assert finding.function == "_mix" and finding.loaded_dynamic == ("L['x']",)
    assert finding.recompiles == ("0/1",) and finding.allow_list == ("L['y']:1",)
    assert d.trace.pgo_written == ("L['x']", "L['y']")

"""Issue 21: compile time by phase, guard counts, and the ``--perfetto`` timeline.

On traces recorded from real torch 2.15.0 and 2.14.1 (``tests/data/make_causes.py``) and the
multi-rank trace of ``make_rank_traces.py``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from dyncli.diagnose import phases
from dyncli.diagnose.perfetto import timeline
from dyncli.diagnose.read_trace import diagnose_traces

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = sorted(p.parent.name for p in DATA.glob("2.*/causes"))


def _trace(version: str, case: str) -> Any:
    return diagnose_traces([DATA / version / "causes" / case / "trace"], jobs=1)


@pytest.mark.parametrize("version", VERSIONS)
def test_inductor_phases_add_up(version: str) -> None:
    t = _trace(version, "inductor_phases").trace
    assert len(t.compile_times) == 2
    for c in t.compile_times:
        got = dict(c.phases)
        assert set(got) == {"dynamo", "aot_autograd", "inductor", "codegen"}
        assert sum(got.values()) == pytest.approx(c.seconds)
        assert c.guard_count is not None and c.guard_count > 0
        assert c.guard_latency_us is not None and c.compile_workers_s
        assert c.compile_workers_s <= got["codegen"] + 1e-9
    assert sum(s for _, s in t.phases) == pytest.approx(t.total_compile_s)
    assert dict(t.frame_times[0].phases) == pytest.approx(dict(t.phases))


@pytest.mark.parametrize("version", VERSIONS)
def test_aot_eager_and_restart_phases(version: str) -> None:
    t = _trace(version, "graph_break_codes").trace
    first = next(c for c in t.compile_times if c.compile_id == "0/0")
    got = dict(first.phases)
    assert got.get("restarts", 0) > 0 and "inductor" not in got  # aot_eager: no Inductor
    assert sum(got.values()) == pytest.approx(first.seconds)


def test_missing_counters_stay_in_the_parent() -> None:
    # torch < 2.6 wrote only seconds fields; a release with none of them: all Dynamo
    assert phases.split({"entire_frame_compile_time_s": 2.0, "backend_compile_time_s": 0.5},
                        2.0) == {"dynamo": 1.5, "aot_autograd": 0.5}
    assert phases.split({}, 1.0) == {"dynamo": 1.0}
    assert phases.split({"aot_autograd_cumulative_compile_time_us": 5e6}, None) == {}
    # a damaged counter larger than the total is clamped: phases never exceed the total
    assert sum(phases.split({"aot_autograd_cumulative_compile_time_us": 9e6}, 1.0).values()) == 1.0


# ------------------------------------------------------------ Perfetto


def check_events(doc: dict[str, Any], total_s: float) -> None:
    assert isinstance(doc["traceEvents"], list) and doc["traceEvents"]
    spans: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
    compile_us = 0.0
    for e in doc["traceEvents"]:
        assert {"ph", "pid", "tid", "name"} <= set(e)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "M":
            continue
        assert e["ph"] == "X"
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        spans[(e["pid"], e["tid"])].append((e["ts"], e["dur"], e["cat"]))
        if e["cat"] == "compile":
            compile_us += e["dur"]
    assert compile_us / 1e6 == pytest.approx(total_s, abs=1e-5)
    for track in spans.values():  # complete events on one track must nest, never overlap
        stack: list[float] = []
        for ts, dur, _ in sorted(track, key=lambda s: (s[0], -s[1])):
            while stack and ts >= stack[-1] - 1e-3:
                stack.pop()
            assert not stack or ts + dur <= stack[-1] + 1e-3
            stack.append(ts + dur)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ["inductor_phases", "graph_break_codes", "size_branch"])
def test_perfetto_fields_and_sum(version: str, case: str) -> None:
    diag = _trace(version, case)
    doc = json.loads(json.dumps(timeline(diag)))
    check_events(doc, diag.trace.total_compile_s)
    names = {e["name"] for e in doc["traceEvents"] if e.get("cat") == "phase"}
    assert "dynamo" in names

"""Trace-only analysis on real captured traces (torch 2.14.1; no torch needed to run)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from dyncli.diagnose.read_trace import diagnose_traces, is_trace_input
from dyncli.errors import InputError
from dyncli.inputs import rank_in_name, trace_files

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def run(case: str):
    return diagnose_traces([TRACES / case], strict=True)


def test_auto_dynamic_batch_facts() -> None:
    d = run("auto_dynamic_batch")
    (frame,) = d.frames
    assert (frame.function, frame.first_line, frame.compiles) == ("scale_and_center", 7, 2)
    assert [(r.compile_id, r.cause) for r in d.recompiles] == [("0/1", "size")]
    assert d.trace is not None
    assert [c.compile_id for c in d.trace.compile_times] == ["0/0", "0/1"]
    assert all(c.seconds > 0 for c in d.trace.compile_times)
    (ft,) = d.trace.frame_times
    assert ft.seconds == pytest.approx(sum(c.seconds for c in d.trace.compile_times))
    (sim,) = d.trace.similar_graphs
    assert sim.compile_ids == ("0/0", "0/1") and sim.inputs == (("L['x']", ("[4, 8]", "[s77, 8]")),)
    fixes = [s.fix for s in d.suggestions if s.kind == "similar-graphs"]
    # the mark-dynamic suggestion already decides L['x'] (one list for every frame): the
    # similar graphs do not print a second, narrower list (issue 26)
    assert fixes == [""]
    assert 'TORCH_COMPILE_DYNAMIC_SOURCES="L[\'x\']:0"' in next(
        s.fix for s in d.suggestions if s.kind == "mark-dynamic")


def test_restart_attempts_fold_into_one_compile_with_time() -> None:
    d = run("graph_break_frames")
    assert d.trace is not None
    by_id = {c.compile_id: c for c in d.trace.compile_times}
    assert sorted(by_id) == ["0/0", "0/1", "1/0", "1/1"]
    assert by_id["0/0"].restart_reasons and "print" in by_id["0/0"].restart_reasons[0]
    assert [f.compiles for f in d.frames] == [2, 2]
    assert {s.function for s in d.trace.similar_graphs} == {
        "two_halves", "torch_dynamo_resume_in_two_halves_at_9"}


def test_failed_compile_reported_with_reason() -> None:
    d = run("constraint_violation")
    assert d.trace is not None
    (failed,) = d.trace.failures
    assert failed.compile_id == "0/0" and failed.fail_type == "ConstraintViolationError"
    assert "specialized it to be a constant (8)" in (failed.fail_reason or "")
    assert any(s.reason == "constraint_violation" and s.user and s.user.line == 9
               for s in d.specializations)


def test_two_ranks_diverge() -> None:
    d = run("two_rank_diverge")
    assert d.trace is not None
    assert d.ranks == (0, 1)
    views = {r.rank: r for r in d.trace.ranks}
    assert (views[0].compiles, views[0].recompiles, views[0].dynamic) == (2, 1, ("L['x']:0",))
    assert (views[1].compiles, views[1].recompiles, views[1].dynamic) == (1, 0, ())
    kinds = {(x.kind, x.values) for x in d.trace.divergences}
    assert ("compiles", ((0, "2"), (1, "1"))) in kinds
    assert ("dynamic", ((0, "dims 0"), (1, "static"))) in kinds
    assert any(s.kind == "rank-divergence" for s in d.suggestions)


def test_same_shapes_per_rank_do_not_diverge() -> None:
    d = run("multi_rank")
    assert d.trace is not None and d.ranks == (0, 1)
    assert [x.kind for x in d.trace.divergences] == []


def test_pgo_loaded_yet_recompiled_for_size() -> None:
    d = run("pgo_recompile")
    assert d.trace is not None and d.trace.pgo_loaded
    (finding,) = d.trace.pgo
    assert finding.function == "_mix" and finding.loaded_dynamic == ("L['x']",)
    assert finding.recompiles == ("0/1",) and finding.allow_list == ("L['y']:1",)
    assert d.trace.pgo_written == ("L['x']", "L['y']")  # what torch saved for the next run
    (sug,) = [s for s in d.suggestions if s.kind == "pgo-allow-list"]
    assert sug.fix == 'TORCH_COMPILE_DYNAMIC_SOURCES="L[\'y\']:1"'


def test_json_extras_keep_part_one_contract() -> None:
    doc = run("two_rank_diverge").to_json()
    for key in ("frames", "recompiles", "specializations", "graph_breaks", "dynamic_sources",
                "suggestions", "stats"):
        assert key in doc
    assert doc["compile_time_s"]["total"] > 0
    assert [r["rank"] for r in doc["rank_view"]["ranks"]] == [0, 1]
    assert doc["similar_graphs"][0]["inputs"][0]["source"] == "L['x']"
    assert doc["trace_stats"]["unknown_kinds"] == {}


def test_inputs_file_gz_and_sniffing(tmp_path: Path) -> None:
    (src,) = sorted((TRACES / "auto_dynamic_batch").glob("*.log"))
    gz = tmp_path / "renamed.txt"  # a .gz by content, not by name
    with src.open("rb") as fh, gzip.open(gz, "wb") as out:
        shutil.copyfileobj(fh, out)
    assert is_trace_input(src) and is_trace_input(gz) and is_trace_input(TRACES / "auto_dynamic_batch")
    assert not is_trace_input(LOGS / "auto_dynamic_batch.log")
    a = diagnose_traces([src])
    b = diagnose_traces([gz])
    assert a.to_json()["frames"] == b.to_json()["frames"]
    assert [rank_in_name(f) for f in trace_files(TRACES / "two_rank_diverge")] == [0, 1]
    folder = tmp_path / "dir"
    folder.mkdir()
    shutil.copy(gz, folder / "dedicated_log_torch_trace_rank_3_ab.log.gz")
    (c,) = diagnose_traces([folder]).frames
    assert c.rank == 3 and c.function == "scale_and_center"


def test_bad_inputs_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="has no TORCH_TRACE files"):
        diagnose_traces([tmp_path])
    text = tmp_path / "run.log"
    text.write_text("hello\n")
    with pytest.raises(InputError, match=r"run\.log: not a TORCH_TRACE file"):
        diagnose_traces([text])
    with pytest.raises(InputError, match="no such file"):
        diagnose_traces([tmp_path / "missing"])

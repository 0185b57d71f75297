"""How ``CudagraphAccumulator`` joins what a log says (graph, size) with a trace's seconds."""

from __future__ import annotations

import pytest

from dyncli.diagnose import run
from dyncli.diagnose.cudagraphs import CudagraphAccumulator
from dyncli.logparse import cudagraph_events as cg
from dyncli.logparse.events import CompileId


def cid(text: str) -> CompileId:
    parsed = CompileId.parse(text)
    assert parsed is not None
    return parsed


def span(compile_id: str, ms: float, line: int = 0) -> cg.CudagraphRecordTime:
    return cg.CudagraphRecordTime(seconds=ms / 1e3, compile_id=cid(compile_id), line=line)


def test_before_2_11_the_log_names_no_compile_and_is_joined_in_order() -> None:
    acc = CudagraphAccumulator()
    for fid, key in (("0", "4"), ("1", "8")):  # 2.3-2.10: one function id per size
        acc.feed(cg.CudagraphTree(key=key, pid=7))
        acc.feed(cg.CudagraphWarmup(function=fid, pid=7))
    acc.feed(cg.CudagraphRecording(function="1", graph_id=0, pid=7))  # size 8 first
    acc.feed(cg.CudagraphRecording(function="0", graph_id=1, pid=7))
    acc.feed(span("0/1", 2.0))
    acc.feed(span("0/1", 3.0))
    report = acc.finish()
    assert report is not None
    assert [(r.key, r.compile_id, r.seconds) for r in report.recordings] == [
        ("8", "0/1", pytest.approx(0.002)), ("4", "0/1", pytest.approx(0.003))]
    assert not report.notes  # the trace named their compile


def test_counts_that_differ_are_not_joined_without_compile_ids() -> None:
    acc = CudagraphAccumulator()
    acc.feed(cg.CudagraphTree(key="4"))
    acc.feed(cg.CudagraphRecording(function="0", graph_id=0))
    acc.feed(span("0/1", 2.0))
    acc.feed(span("0/1", 3.0))
    report = acc.finish()
    assert report is not None
    assert [r.seconds for r in report.recordings] == [None]
    assert any("not joined" in n for n in report.notes)
    assert any("names no compile" in n for n in report.notes)


def test_with_compile_ids_each_compile_is_joined_in_its_order() -> None:
    acc = CudagraphAccumulator()
    # (no tree line: the 1/0 recording, without ints, has no key it can show: None)
    for c, key, ms in (("0/1", "4", 1.0), ("1/0", "", 9.0), ("0/1", "8", 2.0)):
        acc.feed(cg.CudagraphRecording(function="partition_0", compile_id=cid(c),
                                       ints=(int(key),) if key else ()))
        acc.feed(span(c, ms))
    acc.feed(cg.CudagraphRecording(function="partition_0", compile_id=cid("0/1"), ints=(4,)))
    report = acc.finish()
    assert report is not None
    rows = [(r.compile_id, r.key, r.seconds, r.rerecord) for r in report.recordings]
    assert rows == [("0/1", "4", pytest.approx(1e-3), False), ("1/0", None, pytest.approx(9e-3), False),
                    ("0/1", "8", pytest.approx(2e-3), False), ("0/1", "4", None, True)]
    assert report.notes == ("compile 0/1: 3 recording(s) in the log, 2 in the trace: joined in order",)
    frame0 = next(f for f in report.frames if f.frame_id == "0")
    assert (frame0.recordings, frame0.distinct_sizes, frame0.rerecords) == (3, 2, 1)


def test_skips_from_the_log_and_the_trace_are_one_row() -> None:
    acc = CudagraphAccumulator()
    reason = "skipping cudagraphs due to mutated inputs (1 instances)"
    acc.feed(cg.CudagraphSkip(reason=reason, kind="mutated-inputs", compile_id=cid("2/0")))
    acc.feed(cg.CudagraphSkip(reason=reason, kind="mutated-inputs", compile_id=cid("2/0"),
                              source="trace"))
    report = acc.finish()
    assert report is not None
    (skip,) = report.skips
    assert (skip.count, skip.sources) == (1, ("log", "trace"))


def test_an_old_log_end_to_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # torch 2.4's lines (thread id where the pid goes), two sizes of one graph, and a skip
    i = "I0419 11:12:04.474000 140576568861824 torch/_inductor/cudagraph_trees.py:360] [__cudagraphs] "
    v = "V0419 11:12:05.000000 140576568861824 torch/_inductor/cudagraph_trees.py:1984] [__cudagraphs] "
    r = "V0419 11:12:06.000000 140576568861824 torch/_inductor/cudagraph_trees.py:1880] [__cudagraphs] "
    log = tmp_path / "old.log"
    log.write_text("\n".join([
        i + "recording cudagraph tree for symint key 4", v + "Running warmup of function 0",
        r + "Recording function 0 of graph recording id 0",
        i.replace("04.474", "07.000") + "recording cudagraph tree for symint key 8",
        v.replace("05.000", "08.000") + "Running warmup of function 1",
        r.replace("06.000", "09.000") + "Recording function 1 of graph recording id 1"]) + "\n")
    diag = run(log)
    c = diag.cudagraphs
    assert c is not None and diag.stats.unrecognized == 0
    assert [r.key for r in c.recordings] == ["4", "8"]
    (frame,) = c.frames
    assert (frame.frame_id, frame.distinct_sizes) == ("?", 2)
    assert [a.kind for a in diag.suggestions] == ["cudagraph-sizes"]

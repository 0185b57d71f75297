"""The CUDA-graph record grammar (``dyncli.logparse.cudagraphs``), release by release (no torch).

No GPU was lent to record the older releases: their lines are made here from each release's
own format strings (``torch/_inductor/cudagraph_trees.py``, ``cudagraph_utils.py``,
``compile_fx.py``, ``scheduler.py`` of the wheel; the release is named beside each), with the
prefix layout that release writes (``tests/data/cudagraphs/SOURCES.md`` lists public logs
that show the same lines). torch 2.11's are real: ``tests/data/2.11.0/cudagraphs/``.
"""

from __future__ import annotations

import pytest

from dyncli.logparse import cudagraph_events as cg
from dyncli.logparse import events as ev
from dyncli.logparse.cudagraphs import SpanTimer, metrics_skip, span_compile_id, text_record
from dyncli.logparse.textlog import parse_lines

# prefixes: torch 2.1/2.2 (Python logging's layout), 2.3/2.4 (thread id), 2.5+ (pid)
OLD = "[2024-01-05 10:00:00,123] torch._inductor.cudagraph_trees.__cudagraphs: [INFO] "
OLD_HINT = "[2024-01-05 10:00:00,200] torch._inductor.compile_fx.__perf_hints: [WARNING] "
T23 = "I0419 11:12:04.474000 140576568861824 torch/_inductor/cudagraph_trees.py:360] [__cudagraphs] "
V23 = "V0419 11:12:04.669000 140576568861824 torch/_inductor/cudagraph_trees.py:1984] [__cudagraphs] "
HINT = "W0419 11:12:04.100000 140576568861824 torch/_inductor/compile_fx.py:447] [0/0] [__perf_hints] "
T211 = "I1128 08:57:56.312000 856 torch/_inductor/cudagraph_trees.py:425] [__cudagraphs] "
V211 = "V1128 08:57:56.407000 856 torch/_inductor/cudagraph_trees.py:2334] [__cudagraphs] "
W215 = "W1201 10:00:00.000000 77 torch/_inductor/cudagraph_utils.py:405] [__cudagraphs] "


def events(lines: list[str]) -> list[ev.Event]:
    stats = ev.ParseStats()
    out = [e for e in parse_lines([x.encode() + b"\n" for x in lines], stats)
           if type(e) in cg.EVENTS]
    assert stats.unrecognized == 0, stats.samples
    return out


def kinds(found: list[ev.Event]) -> list[str]:
    return [type(e).__name__.removeprefix("Cudagraph") for e in found]


def test_torch_2_1_old_layout_int_key_and_function_ids() -> None:
    # 2.1.2: log.info("recording cudagraph tree for %s", int_key): None for a static graph
    found = events([OLD + "recording cudagraph tree for None",
                    OLD.replace("[INFO]", "[DEBUG]") + "Running warmup of function 0",
                    OLD.replace("[INFO]", "[DEBUG]") + "Recording function 0 of graph recording id 0",
                    OLD + "recording cudagraph tree for (4, 16)",
                    OLD_HINT + "skipping cudagraphs due to input mutation"])
    assert kinds(found) == ["Tree", "Warmup", "Recording", "Tree", "Skip"]
    tree, _, rec, tuple_key, skip = found
    assert isinstance(tree, cg.CudagraphTree) and tree.key == ""
    assert isinstance(tuple_key, cg.CudagraphTree) and tuple_key.key == "(4, 16)"
    assert isinstance(rec, cg.CudagraphRecording) and (rec.function, rec.graph_id) == ("0", 0)
    assert isinstance(skip, cg.CudagraphSkip) and skip.kind == "mutated-inputs"


def test_torch_2_3_to_2_10_lowercase_tree_and_perf_hints_skips() -> None:
    found = events([T23 + "recording cudagraph tree for graph without symints",
                    V23 + "Running warmup of function 0",
                    T23 + "recording cudagraph tree for symint key 8",
                    V23 + "Running warmup of function 1",
                    V23 + "Recording function 1 of graph recording id 1",
                    HINT + "skipping cudagraphs due to mutated inputs (1 instances). Found from : ",
                    HINT + '   File "/w/train.py", line 12, in step',
                    HINT + "    x.add_(1)"])
    assert kinds(found) == ["Tree", "Warmup", "Tree", "Warmup", "Recording", "Skip"]
    skip = found[-1]
    assert isinstance(skip, cg.CudagraphSkip) and skip.kind == "mutated-inputs"
    assert skip.user == ev.UserLoc("/w/train.py", 12, "step", "x.add_(1)")
    assert skip.compile_id is not None and skip.compile_id.key == "0/0"


def test_torch_2_5_rerecord_limit_and_distinct_sizes_warning() -> None:
    # 2.5: "skipping cudagraph due to function N exceeding max re-recording limit (=128) …";
    # maybe_warning_due_to_dynamic_shape on perf_hints (2.5-2.10), on cudagraphs from 2.11
    found = events([
        W215 + "skipping cudagraph due to function 0 exceeding max re-recording limit (=128) "
               "on cudagraph node None due to static input data pointer changed.",
        W215 + "CUDAGraph supports dynamic shapes by recording a new graph for each distinct "
               "input size. Recording too many CUDAGraphs may lead to extra overhead. We have "
               "observed 51 distinct sizes. Please consider the following options for better "
               "performance: a) padding inputs to a few fixed number of shapes; or b) set "
               "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True. Set "
               "torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit=None to "
               "silence this warning."])
    skip, many = found
    assert isinstance(skip, cg.CudagraphSkip) and skip.kind == "rerecord-limit"
    assert isinstance(many, cg.CudagraphManySizes) and many.sizes == 51


def test_torch_2_12_mode_and_2_13_compile_id_in_the_tree_line() -> None:
    found = events([
        T211 + "[4/1] Recording cudagraph tree for symint key (4, 16)",  # 2.13+
        V211 + "[4/1] Running warmup function=partition_0, mode=INFERENCE",
        V211 + "[4/1] Recording function=partition_0, mode=INFERENCE, cuda_graph_id=3, inputs: "
               "[0]: Tensor(size=[4, 16], stride=(16, 1), dtype=torch.float32, data_ptr=0x7F00), "
               "[1]: int(4), [2]: int(16), [3]: None",
        V211 + "[4/1] Re-recording function=partition_0, mode=INFERENCE, reason=static input "
               "data pointer changed."])
    tree, warm, rec, again = found
    assert isinstance(tree, cg.CudagraphTree) and tree.key == "(4, 16)"
    assert tree.compile_id is not None and tree.compile_id.key == "4/1"
    assert isinstance(warm, cg.CudagraphWarmup) and warm.mode == "INFERENCE"
    assert isinstance(rec, cg.CudagraphRecording)
    assert (rec.graph_id, rec.mode, rec.ints, rec.shapes) == (3, "INFERENCE", (4, 16), ((0, (4, 16)),))
    assert isinstance(again, cg.CudagraphRerecord) and again.reason.startswith("static input")


def test_torch_2_15_dynamic_shape_rerecord_limit_and_managed_inputs() -> None:
    found = events([
        W215 + "[4/1] forward graph hit cudagraph_dynamic_shape_rerecord_limit=8; "
               "already-recorded shapes still replay, new shapes run eager.",
        W215 + "skipping cudagraph due to function 2 reaching the cudagraph-managed input "
               "re-recording threshold (=5) on cudagraph node 7 for input indices [0]."])
    limit, skip = found
    assert isinstance(limit, cg.CudagraphLimit) and (limit.limit, limit.mode) == (8, "forward")
    assert limit.compile_id is not None and limit.compile_id.key == "4/1"
    assert isinstance(skip, cg.CudagraphSkip) and skip.kind == "managed-input-rerecord"


def test_partitions_and_the_ops_kept_out() -> None:
    s = "V1128 08:57:42.824000 856 torch/_inductor/scheduler.py:6545] [0/0] [__cudagraphs] "
    o = "V1128 08:57:42.825000 856 torch/_inductor/scheduler.py:6580] [0/0] [__cudagraphs] "
    found = events([s + "Created 2 graph partitions: 1 cudagraphable, 1 non-cudagraphable",
                    o + "    op3: reason=cpu device (arg0_1), ir=FallbackKernel, fx=aten.nonzero"])
    parts, op = found
    assert isinstance(parts, cg.CudagraphPartitions) and (parts.cudagraphable, parts.other) == (1, 1)
    assert isinstance(op, cg.CudagraphPartitions) and op.reasons == ("cpu device (arg0_1)",)


def test_lines_pasted_without_their_prefix() -> None:
    # users paste the messages alone (pytorch#196385: the tree lines of a cudagraphs run)
    stats = ev.ParseStats()
    found = [e for e in parse_lines([b"Recording cudagraph tree for symint key 10\n",
                                     b"Recording cudagraph tree for symint key 13\n",
                                     b"other text\n"], stats) if type(e) in cg.EVENTS]
    assert [e.key for e in found if isinstance(e, cg.CudagraphTree)] == ["10", "13"]
    assert (stats.recognized, stats.unrecognized) == (2, 1)


@pytest.mark.parametrize("message", [
    "Recording function=" + "x" * 5000 + ", cuda_graph_id=1",  # a name past the bound
    "Recording function 99999999999999999999 of graph recording id 1",  # a number of damage
    "Recording function=f, cuda_graph_id=1, inputs: " + "[0]: int(1), " * 100_000,
    "recording cudagraph tree for symint key " + "(" * 10_000,
    "skipping cudagraphs due to " + "\x00" * 1000,
    "[" * 1000 + "] Recording function=f, cuda_graph_id=1",
])
def test_damaged_records_never_raise(message: str) -> None:
    out = text_record([message], {"line": 1})
    assert all(type(e) in cg.EVENTS for e in out)
    recs = [e for e in out if isinstance(e, cg.CudagraphRecording)]
    assert all(len(e.ints) + len(e.shapes) <= 16 for e in recs)  # bounded whatever the line


def test_spans_pair_begin_and_end_per_compile() -> None:
    timer = SpanTimer()
    cid = span_compile_id({"args": {"compile_id": "4/1"}})
    ctx = {"line": 5, "rank": None, "compile_id": cid}
    b = {"name": "CUDAGraphNode.record", "ph": "B", "ts": 1_000_000.0, "args": {"compile_id": "4/1"}}
    e = {**b, "ph": "E", "ts": 1_001_500.0}
    assert list(timer.feed(e, ctx)) == []  # an end without its begin: nothing
    assert list(timer.feed(b, ctx)) == []
    (done,) = list(timer.feed(e, ctx))
    assert isinstance(done, cg.CudagraphRecordTime) and done.seconds == pytest.approx(0.0015)
    assert list(timer.feed({**b, "ts": "soon"}, ctx)) == []  # a bad time: skipped
    assert span_compile_id({"args": {"compile_id": ["4/1"]}}) is None


def test_compilation_metrics_skip_reason() -> None:
    meta = {"cudagraph_skip_reason": "skipping cudagraphs due to incompatible op "
                                     "aten.nonzero.default Found from : \n File \"/w/m.py\", "
                                     "line 3, in f\n    y = x.nonzero()"}
    (skip,) = list(metrics_skip(meta, {"line": 1, "rank": None, "compile_id": None}))
    assert isinstance(skip, cg.CudagraphSkip)
    assert (skip.kind, skip.source, skip.user) == ("incompatible-op", "trace",
                                                   ev.UserLoc("/w/m.py", 3, "f", "y = x.nonzero()"))
    assert list(metrics_skip({"cudagraph_skip_reason": None}, {})) == []

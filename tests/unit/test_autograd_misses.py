"""Compiled autograd's cache misses (``Cache miss due to …``, TORCH_LOGS=compiled_autograd_verbose):
each a capture of the backward graph that dynamo compiles again. Before round 25 diagnose
counted them as lines it did not understand (paste hunt 21).

The recorded logs (tests/data/programs/compiled_autograd_batch.py, torch 2.14.1 and 2.15.0: a
train step on batches 4, 8, 8, 12) hold three misses each, as torch's own counter said
(counters["compiled_autograd"]["captures"] == 3): the first capture, a new
CompiledFunctionBackward after the forward recompiled for batch 8, and changed sizes for 12.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.autograd import DYNAMIC_FIX, OLD_DYNAMIC_FIX
from dyncli.diagnose.findings import AdviceKind, CauseKind
from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.diagnose.render import summary_line
from dyncli.logparse import events as ev
from dyncli.logparse.textautograd import miss
from dyncli.logparse.textlog import parse_lines

DATA = Path(__file__).resolve().parents[1] / "data"
LOGS = {"2.14.1": DATA / "logs", "2.15.0": DATA / "2.15.0" / "logs"}
PREFIX = "V1130 23:48:58.381000 20848 torch/autograd/graph.py:1113] [__compiled_autograd_verbose] "


def _read(text: str) -> tuple[list[ev.Event], ev.ParseStats]:
    stats = ev.ParseStats()
    return list(parse_lines(text.encode().splitlines(), stats)), stats


@pytest.mark.parametrize("version", sorted(LOGS))
def test_the_recorded_misses_are_read_with_their_captures(version: str) -> None:
    stats = ev.ParseStats()
    with (LOGS[version] / "compiled_autograd_batch.log").open("rb") as fh:
        diag = analyze(parse_lines(fh, stats), stats)
    assert stats.unrecognized == 0 and stats.malformed == 0
    rows = diag.autograd_misses
    assert [(x.capture, x.reason, x.first) for x in rows] == [
        ("!0", "node", True), ("!1", "node", False), ("!2", "shapes", False)]
    assert (rows[0].node, rows[0].call, rows[0].key_size, rows[0].previous) == (
        "torch::autograd::GraphRoot", 0, 39, ())
    assert (rows[1].node, rows[1].call, rows[1].previous) == ("CompiledFunctionBackward", 1, (178,))
    assert (rows[2].changed, rows[2].total, rows[2].sizes) == (1, 2, (1,))
    assert rows[1].after.split("_")[0] == "0/1"  # the forward's recompile just before it

    found = {a.key: a for a in diag.suggestions if a.kind is AdviceKind.COMPILED_AUTOGRAD}
    assert set(found) == {"forward", "shapes"}
    assert found["forward"].autograd == (("!1", "0/1"),) and found["forward"].function == "train_step"
    assert "forward's fix removes" in found["forward"].message and not found["forward"].fix
    assert found["shapes"].autograd == (("!2", ""),) and found["shapes"].fix == DYNAMIC_FIX
    assert "sizes[1]" in found["shapes"].message

    # ranked: the capture after the forward's recompile joins the forward's cause (its allow-list
    # entry removed it: tests/integration/test_compiled_autograd_fix.py), the changed sizes are
    # a cause of their own; the first capture is no one's
    by_kind = {c.kind: c for c in diag.causes}
    forward = by_kind[CauseKind.ALLOW_LIST]
    assert ("L['x']:0" in forward.entries
            and {cid for _, cid in forward.compile_ids} == {"0/1", "!1/4/0" if version == "2.15.0"
                                                            else "!1/9/0"})
    shapes = by_kind[CauseKind.COMPILED_AUTOGRAD]
    assert [cid for _, cid in shapes.compile_ids] == (["!2/5/0"] if version == "2.15.0"
                                                      else ["!2/10/0"])
    assert shapes.fix == DYNAMIC_FIX
    assert not any(cid.startswith("!0/") for c in diag.causes for _, cid in c.compile_ids)
    assert diag.to_json()["compiled_autograd"][2]["sizes"] == [1]
    assert summary_line(diag).endswith(
        "3 compiled autograd capture(s) of the backward (2 after a cache miss)")
    assert "[1 compile(s), 1 backward capture(s)]" in shapes.line()


def test_before_2_11_a_miss_logs_a_line_per_size_and_counts_once() -> None:
    # torch's own test (test_compiled_autograd.py test_verbose_logs_dynamic_shapes) and its
    # compiled autograd tutorial: one line per size marked dynamic, in one capture
    lines = [
        "Cache miss due to new autograd node: torch::autograd::GraphRoot (NodeCall 0) with key size 39, previous key sizes=[]",
        "Cache miss due to changed shapes: marking size idx 0 of torch::autograd::GraphRoot (NodeCall 0) as dynamic",
        "Cache miss due to changed shapes: marking size idx 1 of torch::autograd::AccumulateGrad (NodeCall 2) as dynamic",
        "Cache miss due to changed shapes: marking size idx 2 of torch::autograd::AccumulateGrad (NodeCall 2) as dynamic",
    ]
    text = PREFIX + lines[0] + "\nV1130 23:48:59.415000 20848 torch/_dynamo/compiled_autograd.py:1107] " \
        "[!0] [__compiled_autograd_verbose] DCE removed 13 nodes\n" + "".join(PREFIX + x + "\n" for x in lines[1:])
    events, stats = _read(text)
    assert stats.unrecognized == 0
    misses = [e for e in events if isinstance(e, ev.AutogradCacheMiss)]
    assert [(e.reason, e.node, e.call, e.sizes) for e in misses] == [
        ("node", "torch::autograd::GraphRoot", 0, ()),
        ("shapes", "torch::autograd::GraphRoot", 0, (0,)),
        ("shapes", "torch::autograd::AccumulateGrad", 2, (1,)),
        ("shapes", "torch::autograd::AccumulateGrad", 2, (2,))]
    assert misses[0].compile_id is not None and misses[0].compile_id.autograd == 0
    assert [m.compile_id for m in misses[1:]] == [None] * 3  # the log ends before their capture
    diag = analyze(iter(events), stats)
    assert [(x.reason, x.changed, x.sizes, x.lines, x.first) for x in diag.autograd_misses] == [
        ("node", 0, (), 1, True), ("shapes", 3, (), 3, False)]
    assert diag.autograd_misses[1].marked == (
        "size idx 0 of torch::autograd::GraphRoot (NodeCall 0)",
        "size idx 1 of torch::autograd::AccumulateGrad (NodeCall 2)",
        "size idx 2 of torch::autograd::AccumulateGrad (NodeCall 2)")
    (a,) = [a for a in diag.suggestions if a.kind is AdviceKind.COMPILED_AUTOGRAD]
    assert a.key == "shapes" and "again 1 time(s)" in a.message


def test_an_old_miss_names_each_size_by_its_node_and_gets_the_old_fix() -> None:
    # torch 2.4-2.6 name a size by its index into its node's sizes (size_idx - start_idx in
    # 2.5's log_dynamic_shapes_check), so two nodes' "idx 0" are two sizes, neither the graph's
    # sizes[0]; and that compiled autograd takes no dynamic (2.5's enable(compiler_fn)), so
    # torch.compile(dynamic=True) does not remove the capture there. Before round 26: "sizes[0]"
    # once, "of SumBackward0" for both, and the 2.7+ fix.
    lines = [
        "Cache miss due to new autograd node: torch::autograd::GraphRoot (NodeCall 0) with key size 39, previous key sizes=[]",
        "Cache miss due to changed shapes: marking size idx 0 of SumBackward0 (NodeCall 1) as dynamic",
        "Cache miss due to changed shapes: marking size idx 0 of AddmmBackward0 (NodeCall 3) as dynamic",
    ]
    events, stats = _read("".join(PREFIX + x + "\n" for x in lines))
    diag = analyze(iter(events), stats)
    (a,) = [a for a in diag.suggestions if a.kind is AdviceKind.COMPILED_AUTOGRAD]
    assert ("(size idx 0 of SumBackward0 (NodeCall 1), size idx 0 of AddmmBackward0 (NodeCall 3))"
            in a.message and "sizes[0]" not in a.message)
    assert "2 changed size(s): size idx 0 of SumBackward0 (NodeCall 1), size idx 0 of " \
        "AddmmBackward0" in a.evidence[0]
    assert a.fix == OLD_DYNAMIC_FIX and "torch 2.7 or newer" in a.fix
    row = diag.to_json()["compiled_autograd"][1]
    assert row["sizes"] == [] and row["node"] == "" and len(row["marked"]) == 2


def test_a_new_node_without_a_forward_recompile_says_what_the_log_shows() -> None:
    text = "".join(PREFIX + x + "\n" for x in (
        "Cache miss due to new autograd node: torch::autograd::GraphRoot (NodeCall 0) with key size 39, previous key sizes=[]",
        "Cache miss due to new autograd node: MulBackward0 (NodeCall 2) with key size 71, previous key sizes=[]"))
    events, stats = _read(text)
    diag = analyze(iter(events), stats)
    (a,) = [a for a in diag.suggestions if a.kind is AdviceKind.COMPILED_AUTOGRAD]
    assert a.key == "node" and "MulBackward0" in a.message and "no fix the log supports" in a.fix


def test_only_torch_s_sentences_are_misses() -> None:
    assert miss("Cache miss due to 3 changed tensor shapes (total of 7): sizes[0], sizes[4], sizes[6]",
                {}) == ev.AutogradCacheMiss(reason="shapes", changed=3, total=7, sizes=(0, 4, 6))
    assert miss("Cache miss due to new autograd node: cut off", {}) is None
    events, stats = _read(PREFIX + "Cache hit for key 12\n")
    assert not events and stats.unrecognized == 1  # "Cache" alone starts no record
    # a long line stays linear (regexes bounded: benchmarks/regex_linearity.py's rule)
    long = "Cache miss due to 1 changed tensor shapes (total of 2): " + "sizes[1], " * 5000
    found = miss(long, {})
    assert found is not None and len(found.sizes) == 32


def test_a_trace_says_the_same_misses_once_each() -> None:
    # compiled_autograd_compile_reasons: "!N: Cache miss due to …", a capture's list repeating
    # the earlier captures' reasons (torch 2.15's third capture lists !1's and !2's)
    diag = diagnose_traces([DATA / "2.15.0" / "traces" / "compiled_autograd_batch"], strict=True)
    assert [(x.capture, x.reason, x.first) for x in diag.autograd_misses] == [
        ("!0", "node", True), ("!1", "node", False), ("!2", "shapes", False)]
    shapes = next(c for c in diag.causes if c.kind is CauseKind.COMPILED_AUTOGRAD)
    assert shapes.compile_s is not None and shapes.compile_s > 0  # the trace times its compile


def test_a_trace_reads_a_capture_s_own_reason_at_the_end_of_a_long_list(tmp_path: Path) -> None:
    # a capture's list holds the earlier captures' reasons first and its own last (the recorded
    # 2.15 trace's third list: !1's, then !2's), so the reasons kept of a long list are its
    # last ones. Before round 26 the first 64 were kept: past 64 misses a capture's own was lost.
    src = DATA / "2.15.0" / "traces" / "compiled_autograd_batch"
    (trace,) = src.glob("*.log")
    text = trace.read_text()
    old = ('\t[\n\t"!1: Cache miss due to new autograd node: CompiledFunctionBackward (NodeCall 1) '
           'with key size 179, previous key sizes=[178]",\n\t"!2: Cache miss due to 1 changed '
           'tensor shapes (total of 2): sizes[1]"\n\t]\n')
    assert text.count(old) == 1
    earlier = ('\t"!1: Cache miss due to new autograd node: CompiledFunctionBackward (NodeCall 1) '
               'with key size 179, previous key sizes=[178]",\n')
    long = ('\t[\n' + earlier * 69 + '\t"!2: Cache miss due to 1 changed tensor shapes (total of '
            '2): sizes[1]"\n\t]\n')
    (tmp_path / trace.name).write_text(text.replace(old, long))
    diag = diagnose_traces([tmp_path])
    assert [(x.capture, x.reason) for x in diag.autograd_misses] == [
        ("!0", "node"), ("!1", "node"), ("!2", "shapes")]


def test_the_dynamic_fix_says_when_torch_reads_the_flag() -> None:
    """Round 26: torch reads torch._dynamo.config.compiled_autograd when torch.compile(fn) is
    called (_dynamo/eval_frame.py's OptimizeContext.__init__, 2.4-2.15) and turns compiled
    autograd on while the compiled fn runs; the fix said "where fn runs the backward under
    compiled_autograd = True", as if the flag were read at the backward (applied both ways:
    tests/integration/test_compiled_autograd_fix.py)."""
    assert "set before that torch.compile call" in DYNAMIC_FIX
    assert "not when the backward runs" in DYNAMIC_FIX and "fn running the backward" in DYNAMIC_FIX
    assert "runs the backward under" not in DYNAMIC_FIX

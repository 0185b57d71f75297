"""Paste hunt 31a (round 31, pytorch/pytorch threads): frames torch gave up on as the text log
says it. torch 2.0-2.10's "Skipping frame because there is a graph break in a for/while loop"
(symbolic_convert, INFO; its frame summary from 2.1), 2.11-2.15's "graph break in loop" chained
to the break's record, and 2.4-2.7's "Graph break: skip: from user code at:" (convert_frame)
each mean the whole frame runs eagerly; the first was read as "Nothing to fix", the second not
at all, the third's "skip:" as the break's reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text
from trace_records import envelope

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.logparse import events as ev
from dyncli.logparse.textframes import loop_skip
from dyncli.logparse.trace_map import trace_events

_LOOP = "Skipping frame because there is a graph break in a for/while loop"
# torch 2.1-2.10's glog layout of the INFO record and, under +dynamo, convert_frame's DEBUG echo
# ("Skipping frame %s %s \<newline> %s %s": the exception, co_name, co_filename, firstlineno)
_INFO = "I0426 00:11:21.035000 140 torch/_dynamo/symbolic_convert.py:1046] [0/0] "
_DEBUG = "V0426 00:11:21.036000 140 torch/_dynamo/convert_frame.py:611] [0/0] "
_SUMMARY = "<FrameSummary file /w/train.py, line 12 in run>"


def _advice(diag: Diagnosis) -> list[Advice]:
    """The loop-skip findings."""
    return [a for a in diag.suggestions if a.kind is AdviceKind.LOOP_SKIP]


def test_the_loop_skip_record_alone_is_a_frame_that_runs_eagerly() -> None:
    # pytorch#99609 (yanboliang's 2.1 nightly log of the repro): "Nothing to fix" before; the
    # record of April 2023 names neither the frame nor the line
    diag = diagnose_logs([PASTED / "pytorch-99609.log"])
    (skip,) = diag.loop_skips
    assert (skip.function, skip.file, skip.user_line) == ("", "", None)
    (cause,) = diag.causes
    assert cause.runs_eagerly and cause.line().startswith("[runs eagerly]")
    (a,) = cause.findings
    assert "skipped the whole frame" in a.message and "neither the frame nor the line" in a.message
    assert a.fix.startswith('remove that graph break: TORCH_LOGS="graph_breaks"')


def test_the_frame_summary_names_the_frame_and_the_break_line() -> None:
    # pytorch#100045 (the pull request's example: its frame summary without the prefix, 2.1's
    # layout of April 2023): 1 line not understood and "Nothing to fix" before
    diag = diagnose_logs([PASTED / "pytorch-100045.log"])
    assert diag.stats.unrecognized == 0
    (skip,) = diag.loop_skips
    assert (skip.function, skip.user_line) == ("<resume in forward>", 1086)
    assert skip.file.endswith("transformers/models/t5/modeling_t5.py")
    (a,) = _advice(diag)
    assert a.sites[0].line == 1086 and a.function == "<resume in forward>"
    assert "modeling_t5.py:1086 and skipped the whole frame" in a.message


def test_the_debug_echo_is_the_same_skip_and_gives_the_first_line(tmp_path: Path) -> None:
    # +dynamo: the INFO record, then convert_frame's echo of it (one skip, not two)
    text = (f"{_INFO}{_LOOP}\n{_INFO}{_SUMMARY}\n"
            f"{_DEBUG}Skipping frame {_LOOP}\n"
            f"{_DEBUG}{_SUMMARY} run                     /w/train.py 7\n")
    diag = diagnose_text(tmp_path, text)
    (skip,) = diag.loop_skips
    assert (skip.function, skip.file, skip.user_line, skip.first_line, skip.count) == \
        ("run", "/w/train.py", 12, 7, 1)
    assert diag.stats.unrecognized == 0 and len(_advice(diag)) == 1


def test_two_skips_of_one_loop_are_counted(tmp_path: Path) -> None:
    text = f"{_INFO}{_LOOP}\n{_INFO}{_SUMMARY}\n" * 2
    (skip,) = diagnose_text(tmp_path, text).loop_skips
    assert skip.count == 2


def test_torch_2_0s_echo_names_the_frame_on_its_line(tmp_path: Path) -> None:
    # 2.0's record had no frame summary: its echo's frame follows the sentence on its line
    text = (f"[2023-03-20 10:00:00,000] torch._dynamo.convert_frame: [DEBUG] Skipping frame "
            f"{_LOOP} fn                     /w/a.py 3\n")
    (skip,) = diagnose_text(tmp_path, text).loop_skips
    assert (skip.function, skip.file, skip.first_line, skip.user_line) == ("fn", "/w/a.py", 3, None)


_INFO_20 = "[2023-03-20 10:00:00,000] torch._dynamo.symbolic_convert: [INFO] "
_ECHO_20 = "[2023-03-20 10:00:00,001] torch._dynamo.convert_frame: [DEBUG] Skipping frame "


def test_torch_2_0s_record_and_its_echo_are_one_skip_of_the_echos_frame(tmp_path: Path) -> None:
    # 2.0 at DEBUG: the INFO record names no frame, its echo right after names it (one skip,
    # not a skip of no frame beside one of fn); each of two such pairs is one more skip of fn
    pair = f"{_INFO_20}{_LOOP}\n{_ECHO_20}{_LOOP} fn                     /w/a.py 3\n"
    (skip,) = diagnose_text(tmp_path, pair).loop_skips
    assert (skip.function, skip.file, skip.first_line, skip.count) == ("fn", "/w/a.py", 3, 1)
    assert skip.line == 1  # the INFO record's line: where the skip is written first
    (skip,) = diagnose_text(tmp_path, pair * 2).loop_skips
    assert (skip.function, skip.count) == ("fn", 2)
    # a record whose echo the paste lacks stays a skip of no named frame
    skips = diagnose_text(tmp_path, f"{_INFO_20}{_LOOP}\n" + pair).loop_skips
    assert sorted((s.function, s.count) for s in skips) == [("", 1), ("fn", 1)]


def _summaries(n: int) -> list[str]:
    # a frame summary of many ", line N in fn>" parts (each a place the file could end)
    return [_LOOP, "<FrameSummary file /w/a.py" + ", line 1 in f>" * (n // 14)]


def _blanks(n: int) -> list[str]:
    # torch 2.0's echo with a run of blanks and no line number after the name
    return [f"Skipping frame {_LOOP} f" + " " * n + "/w/a.py x"]


@pytest.mark.parametrize("make", [_summaries, _blanks], ids=["summary", "echo"])
def test_a_long_loop_skip_record_costs_linear_time(make: Callable[[int], list[str]]) -> None:
    def read(lines: list[str]) -> object:
        return loop_skip(lines, {"line": 1})

    assert_linear(read, make, 300_000)


@pytest.mark.parametrize("version", ["2.14.1", "2.15.0"])
def test_the_chained_graph_break_in_loop_is_the_frames_skip(version: str) -> None:
    # tests/data/<version>/causes/graph_break_codes: print() inside loop()'s for loop (line 28),
    # and torch's chained "graph break in loop: frame skipped: loop (… line 25)": the break's
    # finding alone before round 31, never that loop() ran eagerly
    case = PASTED.parent / version / "causes" / "graph_break_codes"
    for diag in (diagnose_logs([case / "run.log"]), diagnose_traces([case / "trace"], jobs=1)):
        (skip,) = diag.loop_skips
        assert (skip.function, skip.first_line, skip.user_line, skip.chained) == \
            ("loop", 25, 28, True)
        (a,) = _advice(diag)
        assert a.evidence[0].endswith("graph break in loop: frame skipped: loop "
                                      f"({skip.file} line 25)")
        assert a.fix.startswith("remove the graph break the same record names first")
        # the break itself is read as before: print(), its own fix
        assert [b.gb_type for b in diag.graph_breaks if b.user_line == 28] == \
            ["Failed to trace builtin operator"]


def test_a_break_after_a_loop_break_keeps_its_own_type(tmp_path: Path) -> None:
    # torch's type of a record is its first break's, never the chained one's, even where the
    # first's type line is not in the paste
    text = ("V1203 07:30:00.000000 1 torch/_dynamo/symbolic_convert.py:600] [0/0] "
            "[__graph_breaks] Graph break in user code at /w/loop.py:7\n")
    body = ["Graph Break Reason: Call to `torch._dynamo.graph_break()`",
            "  Explanation: User-inserted graph break. Message: None", "",
            "*** While handling this graph break, another graph break occurred: ***", "",
            "graph break in loop", "  Explanation: torch.compile detected a graph break in a "
            "for/while loop.", "", "  Developer debug context: frame skipped: fn (/w/loop.py "
            "line 3)"]
    prefix = text.split("Graph break")[0]
    diag = diagnose_text(tmp_path, text + "".join(f"{prefix}{x}\n" for x in body))
    (b,) = diag.graph_breaks
    assert b.gb_type == ""
    (skip,) = diag.loop_skips
    assert (skip.function, skip.file, skip.first_line, skip.user_line) == ("fn", "/w/loop.py", 3, 7)


@pytest.mark.parametrize("line", [
    # symbolic_shapes' DEBUG skip of a guard (pytorch#119238), convert_frame's other SkipFrames
    "[2024-02-05 15:21:43,445] [0/0] torch.fx.experimental.symbolic_shapes: [DEBUG] Skipping "
    "guard L['x'].stride()[0] == 2",
    f"{_DEBUG}Skipping frame because no content in function call fn /w/a.py 3",
], ids=["guard", "no-content"])
def test_other_skipping_lines_are_no_loop_skip(tmp_path: Path, line: str) -> None:
    diag = diagnose_text(tmp_path, line + "\n")
    assert not diag.loop_skips and not diag.causes and diag.stats.unrecognized == 0


def test_a_skip_record_cut_before_its_exception_says_the_frame_ran_eagerly() -> None:
    # pytorch#150477 (2.7 dev): "skip:" was the reason, told "move the untraceable call out"
    diag = diagnose_logs([PASTED / "pytorch-150477.log"])
    (b,) = diag.graph_breaks
    assert (b.reason, b.skipped_frame, b.reason_cut) == ("", True, True)
    assert (b.file.endswith("playground.py"), b.user_line) == (True, 16)
    (cause,) = diag.causes
    assert cause.title.endswith("torch ran the whole frame eagerly")
    assert cause.fix.startswith("the exception at the end of this record's traceback")
    assert "move the untraceable call out" not in cause.fix


def test_the_skip_records_exception_is_its_reason(tmp_path: Path) -> None:
    # the same record whole (2.6's words of a break under a user context manager): the
    # traceback's exception line is the reason, and the frame still ran eagerly
    lines = (PASTED / "pytorch-150477.log").read_text().splitlines()
    text = "\n".join([*lines[:3], "Traceback (most recent call last):", lines[4], lines[5],
                      "torch._dynamo.exc.Unsupported: Graph break under "
                      "GenericContextWrappingVariable"]) + "\n"
    diag = diagnose_text(tmp_path, text)
    (b,) = diag.graph_breaks
    assert (b.reason, b.skipped_frame) == ("Graph break under GenericContextWrappingVariable", True)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "ran it eagerly" in a.message
    assert diag.to_json()["graph_breaks"][0]["skipped_frame"] is True


def test_a_2_3_record_is_no_frame_skip(tmp_path: Path) -> None:
    # 2.3-2.5's "Graph break: from user code at:" splits the frame; it does not give it up
    text = ("Graph break: from user code at:\n"
            '  File "/w/a.py", line 4, in f\n    print(x)\n'
            "Traceback (most recent call last):\n"
            '  File "/v/torch/_dynamo/symbolic_convert.py", line 1, in wrapper\n'
            "torch._dynamo.exc.Unsupported: call_function BuiltinVariable(print)\n")
    (b,) = diagnose_text(tmp_path, text).graph_breaks
    assert not b.skipped_frame and b.reason == "call_function BuiltinVariable(print)"


# convert_frame's record of a frame it gave up on after 2.7 (its words in 2.11.0, 2.14.1 and
# 2.15.0's convert_frame.py), under graph_breaks with exc_info: no paste of it was found in the
# store, so the lines are torch's format with a program's place
_GB = "V1203 07:30:00.000000 1 torch/_dynamo/convert_frame.py:2474] [0/0] [__graph_breaks] "
_RESUME = [
    "Graph break: torch.compile cannot properly resume from this graph break, which results in "
    "a skip.",
    "torch.compile will skip tracing the frame fn (/w/a.py line 3) and fall back to eager.",
    "The graph break occurred in the following user code:",
    '  File "/w/a.py", line 6, in fn',
    "    assert x is None",
    "Traceback (most recent call last):",
    '  File "/v/torch/_dynamo/convert_frame.py", line 2400, in __call__',
    "    result = self._inner_convert(",
]


def test_the_resume_skip_record_is_a_break_whose_frame_ran_eagerly(tmp_path: Path) -> None:
    # its first line began the kind "Graph": read as 2.1-2.5's record, malformed, the break lost
    text = "".join(f"{_GB}{x}\n" for x in [*_RESUME, "torch._dynamo.exc.Unsupported: Graph "
                                            "break under GenericContextWrappingVariable"])
    diag = diagnose_text(tmp_path, text)
    assert diag.stats.malformed == 0
    (b,) = diag.graph_breaks
    assert (b.file, b.user_line, b.skipped_frame) == ("/w/a.py", 6, True)
    assert b.reason == "Graph break under GenericContextWrappingVariable"
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "gave up on the whole frame at this break and ran it eagerly" in a.message


def test_a_resume_skip_cut_before_its_exception_asks_for_it(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "".join(f"{_GB}{x}\n" for x in _RESUME))
    (b,) = diag.graph_breaks
    assert (b.user_line, b.reason, b.skipped_frame) == (6, "", True)
    assert diag.causes[0].fix.startswith("the exception at the end of this record's traceback")


def test_the_traces_resume_skip_artifact_is_the_same_break() -> None:
    # convert_frame writes the same text to the trace's dynamo_graph_break_reason artifact,
    # then the traceback (payload_fn: f"{user_stack_trace}\n{traceback.format_exc()}")
    payload = "\n".join([*_RESUME, "torch._dynamo.exc.Unsupported: Graph break under "
                          "GenericContextWrappingVariable"])
    (gb,) = trace_events(envelope("artifact", {"name": "dynamo_graph_break_reason",
                                               "encoding": "string"}, payload, frame_id=0,
                                  frame_compile_id=0, attempt=0), strict=True)
    assert isinstance(gb, ev.GraphBreak)
    assert (gb.file, gb.user_line, gb.skipped_frame) == ("/w/a.py", 6, True)
    assert gb.reason == "Graph break under GenericContextWrappingVariable"


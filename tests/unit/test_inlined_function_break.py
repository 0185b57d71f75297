"""A graph break inside an autograd.Function dynamo inlined (torch 2.15, captured logs in
tests/data/inlined_function/): torch breaks the caller at ``.apply`` and resumes it, and
compiles the Function's forward as a frame of its own, which breaks again. Two breaks; the
caller's resume function is the first one's, not a third break."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textbreaks import SPECULATED

DATA = Path(__file__).resolve().parent.parent / "data" / "inlined_function"


def test_the_callers_resume_is_the_records_break_under_graph_breaks() -> None:
    diag = diagnose_logs([DATA / "default-2.15.log"])
    (b,) = diag.graph_breaks
    assert (b.file.endswith("function_break.py"), b.user_line, b.count) == (True, 6, 2)
    assert not b.resumed_in and b.gb_code == "GB0059"
    assert any(s.endswith("function_break.py:14 in fn") for s in b.user_callers)
    (cause,) = diag.causes
    # the compiles of both resume functions are the break's
    assert cause.graph_breaks == 2 and cause.compiles == 2


def test_the_speculated_record_takes_its_frames_one_resume_under_dynamo() -> None:
    diag = diagnose_logs([DATA / "dynamo-2.15.log"])
    assert len(diag.graph_breaks) == 2
    (spec,) = [b for b in diag.graph_breaks if b.reason.startswith(SPECULATED)]
    assert (spec.file.endswith("function_break.py"), spec.user_line, spec.function) == \
        (True, 14, "fn")
    (other,) = [b for b in diag.graph_breaks if b is not spec]
    assert (other.user_line, other.function, other.resumed_in) == \
        (6, "forward", "torch_dynamo_resume_in_forward_at_6")


def test_a_speculated_record_with_two_resumes_of_its_frame_keeps_both(tmp_path: Path) -> None:
    # a second break in fn (its own resume, no record under TORCH_LOGS=dynamo): which resume
    # is the Function's is not in the log, so nothing is joined
    lines = (DATA / "dynamo-2.15.log").read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "resume_in_fn_at_14" in ln)
    extra = lines[at].replace("resume_in_fn_at_14", "resume_in_fn_at_15").replace("[3/0]", "[4/0]")
    diag = diagnose_text(tmp_path, "".join([*lines[:at], extra, *lines[at:]]))
    assert len(diag.graph_breaks) == 4
    (spec,) = [b for b in diag.graph_breaks if b.reason.startswith(SPECULATED)]
    assert not spec.file

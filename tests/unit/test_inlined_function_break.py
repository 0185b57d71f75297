"""A graph break inside an autograd.Function dynamo inlined (torch 2.15, captured logs in
tests/data/inlined_function/): torch breaks the caller at ``.apply`` and resumes it, and
compiles the Function's forward as a frame of its own, which breaks again. Two breaks; the
caller's resume function is the first one's, not a third break."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.read import diagnose_logs

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

"""Paste hunt 19 (round 23): graph breaks as users paste them from torch 2.4-2.15, each reading
checked on the corpus's copy (tests/data/pasted/, manifest.toml says what each proves)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textforeign_messages import bare_gb_type
from dyncli.logparse.textlog import parse_lines

PASTED = Path(__file__).parent.parent / "data" / "pasted"


def _break(name: str) -> Advice:
    (a,) = [a for a in diagnose_logs([PASTED / name]).suggestions
            if a.kind is AdviceKind.GRAPH_BREAK]
    return a


def test_a_printed_exceptions_bare_gb_type_is_torchs_message() -> None:
    # print("Original exception:\n", e): the type behind print's blank, torch's Explanation under it
    a = _break("pytorch-180845.log")
    assert "capture_scalar_outputs = True" in a.fix
    b = _break("pytorch-167266.log")  # its hints cut: the builtin and its types named
    assert "avoid calling builtin `bool` with argument types ['Tensor']" in b.fix
    assert "move the untraceable call" not in b.fix


def test_prose_ending_in_a_colon_above_an_explanation_is_not_a_gb_type() -> None:
    text = b"The error was:\n  Explanation: Dynamo does not know how to trace it\n"
    events = list(parse_lines(text.splitlines(keepends=True)))
    assert not [e for e in events if type(e).__name__ == "GraphBreak"]


def test_a_bare_gb_type_is_read_whole_without_its_trailing_blanks() -> None:
    # (round 24: matched whole after rstrip, not by a lazy type before "\s*$", which retried
    # a run of blanks at each of its 120 lengths; benchmarks/regex_linearity.py times it)
    assert bare_gb_type(b" Data-dependent branching   \r") == b"Data-dependent branching"
    assert bare_gb_type(b"Compile error:") is None
    assert bare_gb_type(b"a" + b" " * 4096 + b"x") is None
    assert bare_gb_type(b"x" * 121) is None and bare_gb_type(b"x" * 120) == b"x" * 120


def test_an_observed_exception_is_the_codes_own_error() -> None:
    a = _break("pytorch-173231.log")
    assert 'set_stance("force_eager")' in a.fix and "move the untraceable" not in a.fix


def test_pytests_short_summary_lines_are_read() -> None:
    diag = diagnose_logs([PASTED / "vllm-6917.log"])
    assert [b.reason for b in diag.graph_breaks] == ["hasattr TensorVariable shard_size"]
    assert len(diag.compile_crashes) == 1


def test_a_graph_break_record_begun_in_its_traceback_has_the_exceptions_reason() -> None:
    a = _break("pytorch-124900.log")
    assert "skip function graph_break" in a.message
    assert "calls torch._dynamo.graph_break()" in a.fix

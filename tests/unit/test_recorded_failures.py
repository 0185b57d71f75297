"""recording.py's record of a failed evaluate_expr is the failed call, not a data-dependent
error (round 35's left item).

torch's ``record_shapeenv_event`` wrapper logs ``failed while running evaluate_expr(*(…),
**{…})`` for any exception of the call: 2.1-2.7 every time (2.4.1 recording.py:281), 2.8 on
while ShapeEnv records its events (2.8.0 :312, 2.15.0 :349). dyncli read the record alone as a
data-dependent error in every release. The recordings here (tests/data/make_shape_env_failed.py,
torch 2.4.1 and 2.15.0) hold two records of one head's form: one whose traceback ends in
GuardOnDataDependentSymNode, one in the hint check's AssertionError (pytorch#130456's check),
both over an unbacked int; only the error's own words tell them apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import textdde
from dyncli.logparse.textdde import fact

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = {v: DATA / v / "shape_env_failed" / "run.log" for v in ("2.4.1", "2.15.0")}


def _failed(diag: Diagnosis) -> list[str]:
    """The shape-env-failed note's evidence lines."""
    return [
        line for a in diag.notes if a.kind is AdviceKind.SHAPE_ENV_FAILED for line in a.evidence
    ]


@pytest.mark.parametrize("version", sorted(RECORDED))
def test_the_records_error_tells_them_apart(version: str) -> None:
    """u0 > 5's record ends in the data-dependent error (its message: a guard fact, only
    logged: the program caught it); u1 < 20's in AssertionError: the failed call, saying so."""
    diag = diagnose_logs([RECORDED[version]])
    assert [(x.expr, x.what, x.raised) for x in diag.data_dependent_errors] == [
        ("u0 > 5", "guard", False)
    ]
    (failed,) = _failed(diag)
    assert "evaluate_expr(u1 < 20), raising AssertionError: True != False" in failed
    assert not diag.causes  # (both caught: the program went on)


def test_2_4s_record_of_the_expression_alone_is_read() -> None:
    """2.1-2.7 print the arguments the caller passed: ``*(u0 > 5,), **{}`` where it passed the
    expression alone (2.4.1's record); it was not read as the call's."""
    head = RECORDED["2.4.1"].read_text().splitlines()[1].split("] ", 1)[1]
    assert fact(head) == ("evaluate", "u0 > 5", None, "old")


def _head(version: str, expr: str) -> str:
    return next(
        line
        for line in RECORDED[version].read_text().splitlines()
        if f"failed while running evaluate_expr(*({expr}" in line
    )


def test_the_record_alone_proves_no_data_dependent_error(tmp_path: Path) -> None:
    """The DDE's record cut after its head (a paste that ends there) is the failed call, over
    a value read from a tensor's data; the note's fix says what to do where it was one."""
    for version in RECORDED:
        diag = diagnose_text(tmp_path, _head(version, "u0 > 5") + "\n")
        assert not diag.data_dependent_errors, version
        (failed,) = _failed(diag)
        assert (
            "evaluate_expr(u0 > 5), an error the log does not name (an expression over "
            "values read from a tensor's data (u0)" in failed
        )
        (note,) = diag.notes
        assert "GuardOnDataDependentSymNode" in note.fix and "torch._check" in note.fix


def test_a_record_over_sizes_only_is_never_read_as_data_dependent(tmp_path: Path) -> None:
    """An expression of backed sizes (s0) is no data-dependent expression: the note says so,
    and its fix names no torch._check."""
    head = _head("2.15.0", "u1 < 20").replace("u1 < 20", "Eq(s0, 3)")
    diag = diagnose_text(tmp_path, head + "\n")
    assert not diag.data_dependent_errors
    (failed,) = _failed(diag)
    assert "an expression over sizes only" in failed
    assert "torch._check" not in diag.notes[0].fix


def test_the_errors_own_words_prove_it_where_the_paste_cut_its_message(tmp_path: Path) -> None:
    """2.15's record of u0 > 5 with its message's lines after the exception line (its hint and
    Caused by) but without that line: torch's hint is written for a data-dependent error
    only, so the failure is one (where it asked: the Caused by's frame)."""
    lines = RECORDED["2.15.0"].read_text().splitlines()
    record = [
        line
        for line in lines[lines.index(_head("2.15.0", "u0 > 5")) :]
        if "recording.py:" in line and "GuardOnDataDependentSymNode" not in line
    ]
    record = record[: record.index(next(x for x in record if "For C++ stack trace" in x)) + 1]
    diag = diagnose_text(tmp_path, "\n".join(record) + "\n")
    (x,) = diag.data_dependent_errors
    assert (x.expr, x.what, x.raised) == ("u0 > 5", "evaluate", False)
    assert x.culprit.endswith("shape_env_failed.py:26 in <module>"), x.culprit
    assert not _failed(diag)


def test_another_records_error_does_not_prove_it(tmp_path: Path) -> None:
    """The AssertionError's record after a data-dependent one in the same compile (2.4.1's
    records carry no compile id: one key) stays the failed call: the first's words prove only
    the first."""
    text = RECORDED["2.4.1"].read_text()
    at = text.index("failed while running evaluate_expr(*(u1 < 20")
    start = text.rindex("\n", 0, at) + 1
    diag = diagnose_text(tmp_path, text[start:])
    assert not diag.data_dependent_errors
    assert "raising AssertionError: True != False" in _failed(diag)[0]


def test_a_hostile_2_7_record_costs_linear_time() -> None:
    """2.1-2.7's record pattern (an expression, then a bounded hint or a lone comma) on a
    line of commas and short words, with and without the closing ``**``."""

    def make(n: int) -> str:
        return "failed while running evaluate_expr(*(" + ", ab," * (n // 5)

    assert_linear(textdde._RECORDED_RE.search, make, 200_000)
    assert_linear(textdde._RECORDED_RE.search, lambda n: make(n) + "), **", 200_000)

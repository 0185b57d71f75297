"""Paste hunt 35a (round 35, logs as users paste them): a user's print of the GuardFail torch
gives a guard_fail_fn, and the failed-call reading of recording.py's record on real pastes.

pytorch#105279: the reporter's Error logs are one line, ``GuardFail(reason="tensor 'L['input']'
size mismatch at index 0. expected 146, actual 149", orig_code=<code object RNNScript at
0x2758840 ...)``: what ``torch._dynamo.optimize(…, guard_fail_fn=print)`` prints for a cache
entry whose guards failed as torch recompiled (2.1 nightly). It was refused as "not a torch
log". tests/data/<torch>/guard_fail/ holds the same print recorded under 2.4.1 and 2.15.0
(tests/data/make_guard_fail.py): 2.15's reasons name their entry, 2.4's do not.

pytorch#134616 and #146152 hold recording.py's record of a failed evaluate_expr over an unbacked
int with nothing of the error itself (the paste ends inside its traceback): the failed call
now, where they read as data-dependent errors (tests/unit/test_recorded_failures.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse import textrecompiles

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_printed_guard_fail_is_a_recompile_of_its_function() -> None:
    """pytorch#105279: one recompile of RNNScript (at least two compiles) on L['input']'s size,
    the reason torch gave, read from the repr's string (it was refused)."""
    diag = diagnose_logs([PASTED / "pytorch-105279.log"])
    (rec,) = diag.recompiles
    assert rec.function == "RNNScript" and rec.cause == "size"
    assert rec.reasons == (
        "tensor 'L['input']' size mismatch at index 0. expected 146, actual 149",
    )
    (frame,) = diag.frames
    assert (frame.function, frame.compiles, frame.at_least) == ("RNNScript", 2, True)
    assert diag.stats.unread == 0


def test_2_15s_entries_split_the_prints_into_recompiles() -> None:
    """2.15.0's three prints (``0/0`` | ``0/1``, ``0/0``): two recompiles, [0/1] and [0/2] of
    f, three compiles, the code object's file and line its place."""
    diag = diagnose_logs([DATA / "2.15.0" / "guard_fail" / "run.log"])
    assert [(r.compile_id, len(r.reasons)) for r in diag.recompiles] == [("0/1", 1), ("0/2", 2)]
    (frame,) = diag.frames
    assert (frame.frame_id, frame.function, frame.compiles, frame.first_line) == ("0", "f", 3, 12)
    assert frame.file.endswith("tests/data/programs/guard_fail_print.py")


def test_2_4s_prints_name_no_entry_so_a_run_proves_one_recompile() -> None:
    """2.4.1's same three prints without entry ids: one recompile of f after one entry at least
    (one recompile's entries and several recompiles' look alike), never more than the run
    proves (it read "at least 4 compiles" before the run was counted as one entry)."""
    diag = diagnose_logs([DATA / "2.4.1" / "guard_fail" / "run.log"])
    (rec,) = diag.recompiles
    assert len(rec.reasons) == 3
    (frame,) = diag.frames
    assert (frame.function, frame.compiles, frame.at_least) == ("f", 2, True)


def test_a_quoted_print_and_two_functions(tmp_path: Path) -> None:
    """The print behind a markdown quote reads the same; another function's print begins
    another recompile."""
    line = (PASTED / "pytorch-105279.log").read_text().strip()
    other = line.replace("RNNScript", "forward").replace("146", "7").replace("149", "8")
    diag = diagnose_text(tmp_path, f"> {line}\n> {other}\n")
    assert [r.function for r in diag.recompiles] == ["RNNScript", "forward"]


@pytest.mark.parametrize(
    "text",
    [
        "GuardFail(reason=\"tensor 'x' size mismatch",  # (the string cut: no reason)
        "GuardFail(reason=<unknown>, orig_code=None)",
    ],
)
def test_a_print_without_a_whole_reason_reads_nothing(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_text(tmp_path, text + "\n")


def test_a_hostile_print_costs_linear_time() -> None:
    """A reason of escapes that never closes, and a long code object: bounded scans."""

    def escapes(n: int) -> list[str]:
        return [textrecompiles.GUARD_FAIL + '"' + "\\x" * (n // 2)]

    def reader(lines: list[str]) -> object:
        try:
            return textrecompiles.guard_fail(lines, {"line": 1})
        except ValueError:
            return None

    assert_linear(reader, escapes, 200_000)

    def code(n: int) -> list[str]:
        return [textrecompiles.GUARD_FAIL + '"r", orig_code=<code object ' + "f" * n]

    assert_linear(reader, code, 200_000)


@pytest.mark.parametrize(
    ("case", "expr"), [("pytorch-134616.log", "Eq(u0, 1)"), ("pytorch-146152.log", "Eq(4*u1, 0)")]
)
def test_a_record_cut_before_its_error_is_the_failed_call(case: str, expr: str) -> None:
    """recording.py's record and its traceback's head, the exception past the paste: the
    failed call over a value read from a tensor's data, with what to do if it was a
    GuardOnDataDependentSymNode; not a data-dependent error (round 35)."""
    diag = diagnose_logs([PASTED / case])
    assert not diag.data_dependent_errors
    (note,) = [a for a in diag.notes if a.kind is AdviceKind.SHAPE_ENV_FAILED]
    assert f"evaluate_expr({expr}), an error the log does not name" in note.message
    assert "torch._check" in note.fix


def test_the_record_before_it_proves_it_by_its_own_words() -> None:
    """pytorch#134421's record at .507, the same expression's: its traceback ends in the
    GuardOnDataDependentSymNode on zuf0, so that failure is a data-dependent error (logged)."""
    diag = diagnose_logs([PASTED / "pytorch-134421-b.log"])
    (x,) = diag.data_dependent_errors
    assert (x.expr, x.what, x.raised) == ("zuf0", "guard", False)

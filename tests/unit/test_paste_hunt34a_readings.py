"""Paste hunt 34a (round 34, pytorch/pytorch threads): symbolic_shapes' ``failed during
evaluate_expr`` warning read per release.

torch logs ``failed during evaluate_expr(EXPR, hint=…`` where evaluate_expr raised. Up to 2.7
it does so for any error (2.6.0 symbolic_shapes.py:6306, 2.7.0 :6678, ``except Exception:``),
a GuardOnDataDependentSymNode too; from 2.8 a data-dependent error passes unlogged (2.8.0
:7354, 2.9.0 :7364, 2.13.0 :8234, 2.15.0 :8814: ``if isinstance(e,
GuardOnDataDependentSymNode): pass``), so the line is then another error's. dyncli read it as a
data-dependent error in every release. Now: a data-dependent error's line where the log shows a
release up to 2.7 (a stated version, the graph-break records' form, or recording.py's record
beside it in 2.1-2.7's form), a note of a ShapeEnv call that raised otherwise (from 2.8: not
data-dependent; where the release is not shown: the line alone proves no such error)."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textdde import fact

# torch 2.15.0's own warning (tests/data-style recording: TORCH_LOGS=dynamic, dynamic=True,
# ShapeEnv._evaluate_expr made to raise an AssertionError for `x.shape[0] > 3`, as the hint
# check of pytorch#130456 does; the program stopped on that AssertionError)
_W215 = ("W1203 16:52:15.320000 3949 torch/fx/experimental/symbolic_shapes.py:8818] [0/0] "
         "failed during evaluate_expr(s77 > 3, hint=True, size_oblivious=False, forcing_spec=False")
# pytorch#147096's warning (a 2.7 nightly, torch.export of PaliGemma2), without its record
_W147096 = ("W0213 09:47:01.171000 226363 site-packages/torch/fx/experimental/symbolic_shapes.py"
            ":6578] failed during evaluate_expr(Ne(u0, 589824), hint=None, size_oblivious=False, "
            "forcing_spec=False")
# recording.py's record of the same call in 2.8's form (_inner_evaluate_expr, 2.8.0 :7323:
# every argument positional)
_R28 = ("E0213 09:47:01.172000 226363 torch/fx/experimental/recording.py:316] failed while "
        "running evaluate_expr(*(Ne(u0, 589824), None, None, False, False, False, None), **{})")


def _read(diag: Diagnosis) -> tuple[list[tuple[str, str]], list[str]]:
    """(the data-dependent errors' (expr, what), the notes' kinds)."""
    return ([(x.expr, x.what) for x in diag.data_dependent_errors],
            [str(a.kind) for a in diag.notes])


def test_the_warning_is_its_own_fact() -> None:
    assert fact(_W215.split("] [0/0] ")[1]) == ("during", "s77 > 3")
    assert fact(_R28.split("] ")[1]) == ("evaluate", "Ne(u0, 589824)", None, "new")


def test_from_2_8_the_warning_is_another_error_than_a_data_dependent_one(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "PyTorch version: 2.15.0+cpu\n" + _W215 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    (note,) = diag.notes
    assert "evaluate_expr(s77 > 3), an error that is not data-dependent" in note.message
    assert "torch 2.8 on" in note.message
    assert not diag.causes


def test_up_to_2_7_it_stays_a_data_dependent_errors_line(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "PyTorch version: 2.7.1+cu126\n" + _W147096 + "\n")
    assert _read(diag) == ([("Ne(u0, 589824)", "evaluate")], ["data-dependent-error"])
    assert diag.data_dependent_errors[0].raised is False


def test_where_the_release_is_not_shown_the_line_proves_no_data_dependent_error(
        tmp_path: Path) -> None:
    for line in (_W215, _W147096):
        diag = diagnose_text(tmp_path, line + "\n")
        assert diag.releases is None
        assert _read(diag) == ([], ["shape-env-failed"]), line
        assert "the log does not show its release" in diag.notes[0].message


def test_a_nightly_between_2_7_and_2_8_is_not_read_as_either(tmp_path: Path) -> None:
    """A 2.8 nightly may write either form (stated_range: 2.7-2.8)."""
    diag = diagnose_text(tmp_path, "PyTorch version: 2.8.0.dev20250420+cu126\n" + _W215 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "the log does not show its release" in diag.notes[0].message


def test_recording_py_beside_it_tells_the_release(tmp_path: Path) -> None:
    """2.1-2.7's record (``*(EXPR, None), **{'fx_node': …}``) makes the warning a
    data-dependent error's line; 2.8's (seven arguments, ``**{}``) makes it another error's."""
    diag = diagnose_logs([PASTED / "pytorch-147096.log"])  # (the 2.7 nightly's, as pasted)
    assert [(x.expr, x.what) for x in diag.data_dependent_errors] == [("Ne(u0, 589824)",
                                                                       "evaluate")]
    diag = diagnose_text(tmp_path, _W147096 + "\n" + _R28 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "not data-dependent" in diag.notes[0].message


def test_2_8s_record_alone_reads_its_expression() -> None:
    """recording.py's record of 2.8 on was read with its last six arguments in the
    expression; the record alone stays what 2.1-2.7's is (an evaluate failure)."""
    got = fact(_R28.split("] ", 1)[1])
    assert got is not None and got[1] == "Ne(u0, 589824)"


def test_a_data_dependent_message_of_the_expression_is_one_in_any_release(tmp_path: Path) -> None:
    """The error's own message proves it whatever the warning's release."""
    text = (_W147096 + "\nGuardOnDataDependentSymNode: Could not guard on data-dependent "
            "expression Ne(u0, 589824) (unhinted: Ne(u0, 589824)).  (Size-like symbols: u0)\n")
    diag = diagnose_text(tmp_path, text)
    assert _read(diag)[0] == [("Ne(u0, 589824)", "guard")]

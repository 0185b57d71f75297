"""Paste hunt 30c (round 30, third helper): AOTAutograd's suppressed-backward warning pasted
from inside its record. graph_compile.py's module logger writes no other WARNING record (its
only log.warning, and no log.error or log.exception, in the 2.9-era, 2.10-era and 2.11-era
sources, 2.13.0, 2.14.1 and 2.15.0; its artifact loggers write at INFO and DEBUG), so its W
lines are that record's even without its head."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

_W = "W0815 22:53:17.219000 9155 torch/_functorch/_aot_autograd/graph_compile.py:2122] [0/0] "


def test_the_warnings_middle_is_its_note() -> None:
    # pytorch#163874's second excerpt (2.9 dev): 8 lines "not understood" before
    diag = diagnose_logs([PASTED / "pytorch-163874-b.log"])
    (note,) = diag.notes
    assert note.kind is AdviceKind.BACKWARD_DEFERRED
    assert "raised: torch._inductor.exc.InductorError: SubprocException" in note.message
    assert diag.stats.unrecognized == 0 and not diag.causes


def test_a_data_dependent_error_in_the_suppressed_compile_is_both() -> None:
    # pytorch#193693 (a 2026 build): the data-dependent error, and now the note that it was the
    # backward compile torch suppressed (the forward ran)
    diag = diagnose_logs([PASTED / "pytorch-193693.log"])
    assert [n.kind for n in diag.notes] == [AdviceKind.BACKWARD_DEFERRED]
    assert "GuardOnDataDependentSymNode" in diag.notes[0].message
    assert [e.expr for e in diag.data_dependent_errors] == ["Eq(Max(1, u0), 1)"]


def test_the_whole_record_reads_its_data_dependent_error_too(tmp_path: Path) -> None:
    # the same record with its head: the note and the error, as from inside it
    lines = (PASTED / "pytorch-193693.log").read_text().splitlines(keepends=True)
    head = _W + "failed to eagerly compile backwards for dynamic, suppressing in case " \
        "backwards not needed\n"
    diag = diagnose_text(tmp_path, head + "".join(lines))
    assert [n.kind for n in diag.notes] == [AdviceKind.BACKWARD_DEFERRED]
    assert [e.expr for e in diag.data_dependent_errors] == ["Eq(Max(1, u0), 1)"]


def test_other_levels_and_loggers_are_not_the_warning(tmp_path: Path) -> None:
    # an INFO line of graph_compile.py (its aot_graphs artifact) and a W line of another file
    text = ("I0815 22:53:17.219000 9155 torch/_functorch/_aot_autograd/graph_compile.py:1849] "
            "[0/0] [__aot_graphs] aot_config id: 0\n"
            "W0815 22:53:17.219000 9155 torch/_functorch/_aot_autograd/runtime_wrappers.py:99] "
            "[0/0]   File \"x.py\", line 1, in f\n")
    assert not diagnose_text(tmp_path, text).notes

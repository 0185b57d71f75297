"""Paste hunt 30b (round 30, second hunt: torch 2.9-2.15 forms and round 30's leftovers): logs
as users paste them into GitHub issues, read against what each thread says, each on the lines
the thread's stored excerpt has (the corpus's copies: tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def _diagnose_text(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "p.log"
    log.write_text(text)
    return diagnose_logs([log])


def test_symbolic_shapes_sympy_recursion_warning_is_a_note() -> None:
    # pytorch#128134: "RecursionError in sympy.xreplace(Eq(Mod(256*s1, s8), 0), …)" between two
    # dtype recompiles (torch 2.4 nightly): "1 torch record(s) not understood"; torch caught it
    # and compiled on, so a note, never a cause
    diag = diagnose_logs([PASTED / "pytorch-128134.log"])
    assert diag.stats.unread == 0
    (note,) = diag.notes
    assert note.kind is AdviceKind.SYMPY_RECURSION
    assert "sympy.xreplace(Eq(Mod(256*s1, s8), 0)" in note.evidence[0]
    assert note.fix.startswith("nothing to fix in your code")
    assert all(a.kind is not AdviceKind.SYMPY_RECURSION for c in diag.causes for a in c.findings)
    assert len(diag.recompiles) == 2


@pytest.mark.parametrize("line", [
    # 2.0's sympy.solve on torch's old logging layout
    "[2023-01-20 10:00:00,123] torch.fx.experimental.symbolic_shapes: [WARNING] "
    "RecursionError in sympy.solve(s0 - 4, s0)",
    # 2.4's sympy.expand behind torchrun's rank tag (pytorch#127817's title, at [1/18])
    "[rank0]:W0603 10:00:00.000000 1 torch/fx/experimental/symbolic_shapes.py:1325] [0/0] "
    "RecursionError in sympy.expand(Eq(Mod(256*s0 + 512, 256*s1), 0))",
    # 2.15's _fast_expand
    "W1202 18:00:00.000000 1 torch/fx/experimental/symbolic_shapes.py:2530] [0/0] "
    "RecursionError in _fast_expand(s0*(s1 + 1))",
    # the message alone, as a quote keeps it
    "RecursionError in sympy.xreplace(Eq(Mod(256*s1, s8), 0), {s8: s0 + 255})",
], ids=["2.0-solve", "2.4-expand-rank", "2.15-fast-expand", "bare"])
def test_every_releases_sympy_recursion_warning_is_the_note(tmp_path: Path, line: str) -> None:
    diag = _diagnose_text(tmp_path, line + "\n")
    assert [a.kind for a in diag.notes] == [AdviceKind.SYMPY_RECURSION]
    assert not diag.causes and diag.stats.unread == 0


def test_a_raised_recursion_error_is_not_the_warning(tmp_path: Path) -> None:
    # torch 2.0 briefly raised it (pytorch#90655: RuntimeError("RecursionError in
    # sympy.solve(…)")): a traceback's exception line is no caught warning
    diag = _diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/v/site-packages/torch/fx/experimental/symbolic_shapes.py", line 881, in '
        "_maybe_guard_eq\n    raise RuntimeError(msg)\n"
        "RuntimeError: RecursionError in sympy.solve(s0 - 4, s0)\n"))
    assert not any(a.kind is AdviceKind.SYMPY_RECURSION for a in diag.notes)

"""The guard a framework specialization names goes into a shell line
(``TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED=…``) as one shell word, by the project's own quoting
(dyncli.quoting.shell_quote), never inside bare double quotes: a guard's text is the log's, and
a hostile one (quotes, ``$``, backticks) must set the variable to itself and run nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis, SpecializationReport
from dyncli.diagnose.specializations import specializations

VAR = "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED"
SH = shutil.which("sh")


def _fix(guard: str) -> str:
    s = SpecializationReport(rank=None, compile_id="0/0", symbol="s0", sources=("L['x'].size()[0]",),
                             value="2", reason="range_refined_to_singleton", guard=guard)
    (a,) = [a for a in specializations(Diagnosis(specializations=(s,)))
            if a.kind is AdviceKind.FRAMEWORK_SPECIALIZATION]
    return a.fix


def test_a_plain_guard_keeps_torchs_double_quotes() -> None:
    assert f'{VAR}="Eq(2, s1)")' in _fix("Eq(2, s1)")


@pytest.mark.skipif(SH is None, reason="no sh")
@pytest.mark.parametrize("guard", ['Eq(s0, 2) and "$(touch pwned)"', "`touch pwned`",
                                   "it's $HOME \"x\" \\ `id`", "'; touch pwned; '"])
def test_a_hostile_guard_sets_the_variable_to_itself_and_runs_nothing(
        guard: str, tmp_path: Path) -> None:
    fix = _fix(guard)
    m = re.search(rf"({VAR}=.*)\)\Z", fix, re.S)  # the line, up to the fix's closing paren
    assert m is not None, fix
    assert f'"{guard}"' not in fix
    out = subprocess.run([SH, "-c", f'{m[1]}; printf %s "${VAR}"'], cwd=tmp_path,
                         capture_output=True, timeout=10, check=False)
    assert out.stdout == guard.encode(), (fix, out)
    assert list(tmp_path.iterdir()) == []  # `touch pwned` made nothing

"""Paste hunt 30 (round 30): logs as users paste them into GitHub issues, read against what each
thread says, each on the lines the thread's stored excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textlog import parse_lines

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def _diagnose_text(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "p.log"
    log.write_text(text)
    return diagnose_logs([log])


def test_nix_build_log_tag_is_taken_off() -> None:
    # diffusers#7441: nixpkgs' builder ran diffusers' tests on Python 3.12 with torch 2.2.1, every
    # line behind "diffusers> ": "not a torch log"; now torch's refusal of the Python
    diag = diagnose_logs([PASTED / "diffusers-7441.log"])
    (crash,) = diag.compile_crashes
    assert crash.error == "RuntimeError: Dynamo is not supported on Python 3.12+"
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "does not run on this Python" in a.fix and "report" not in a.fix.replace(
        "not a bug to report", "")


def test_a_prompt_like_tag_on_one_line_is_kept(tmp_path: Path) -> None:
    # a tool's prompt has the tag's form ("mysql> "): on a line alone it is not taken off, so a
    # traceback's exception after it is no torch log
    with pytest.raises(InputError):
        _diagnose_text(tmp_path, "mysql> RuntimeError: Dynamo is not supported on Python 3.12+\n"
                                 "done\n")


def test_nix_tag_on_every_line_of_a_glog_record(tmp_path: Path) -> None:
    diag = _diagnose_text(tmp_path, (
        "pkg> running tests\n"
        "pkg> V0101 00:00:00.000000 1 torch/_dynamo/guards.py:2772] [0/1] [__recompiles] "
        "Recompiling function f in /w/m.py:3\n"
        "pkg>     triggered by the following guard failure(s):\n"
        "pkg>     - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3\n"))
    (r,) = diag.recompiles
    assert any("size mismatch at index 0" in x for x in r.reasons)


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: "a.b-c+" * (n // 6) + " x", 300_000),
    (lambda n: "pkg> " * (n // 5), 300_000),
], ids=["name", "tags"])
def test_a_hostile_tag_line_costs_linear_time(make: Callable[[int], str], n: int) -> None:
    assert_linear(lambda line: list(parse_lines([line.encode(), line.encode()] * 2)), make, n)

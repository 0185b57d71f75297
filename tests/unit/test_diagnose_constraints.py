"""Constraint violations: one error however many times a log tells it, and what it cost.

The logs are real: pytorch#135005's paste (tests/data/pasted; mark_dynamic(a, 0, min=1,
max=8196) on a batch of 1, the excerpt ending at produce_guards' track_symint line) and the
recorded constraint_violation program (tests/data/logs, torch 2.14.1 with +dynamic: the
track_symint line, then torch's E-level record with its User stack).
tests/integration/test_diagnose_capture.py runs such a program and the printed fix.
"""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.api import run as diagnose

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_range_violated_by_a_size_one_input_is_the_input_s_size() -> None:
    d = diagnose(str(DATA / "pasted" / "pytorch-135005.log"))
    (s,) = d.specializations
    assert (s.sources, s.value, s.reason) == (("L['args1'][0].size()[0]",), "1",
                                              "constraint_violation")
    (a,) = [x for x in d.suggestions if x.kind == "constraint-violation"]
    assert "size 1" in a.message and "no line of code" in a.message
    assert "backed_size_oblivious = True" in a.fix and "maybe_mark_dynamic instead" not in a.fix
    (c,) = d.causes
    assert c.line().startswith("[1 failed compile(s)] ")  # the compile raised


def test_one_violation_told_twice_is_one_row_with_torch_s_user_stack() -> None:
    d = diagnose(str(DATA / "logs" / "constraint_violation.log"))
    (s,) = d.specializations
    assert s.reason == "constraint_violation" and s.value == "8"
    # the User stack's absolute path, not the guard's shortened one
    assert s.user is not None and s.user.line == 9
    assert s.user.file.endswith("/tests/data/programs/constraint_violation.py")
    assert s.user.file.startswith("/")
    (c,) = d.causes
    assert c.line().startswith("[1 failed compile(s)] ")


def test_the_exception_read_before_the_record_is_still_one_row(tmp_path: Path) -> None:
    """A paste with the program's exception first and torch's log after it (users paste the
    error, then the log): the id-less row takes the record's compile, it is not lost."""
    log = (DATA / "logs" / "constraint_violation.log").read_text()
    marked = next(line for line in log.splitlines() if "You marked" in line)
    item = marked[marked.index("- You marked"):]
    exception = ("torch.fx.experimental.symbolic_shapes.ConstraintViolationError: Constraints "
                 "violated (L['x'].size()[0])! For more information, run with "
                 'TORCH_LOGS="+dynamic".\n  ' + item + "\n")
    pasted = tmp_path / "pasted.log"
    pasted.write_text(exception + log)
    d = diagnose(str(pasted))
    (s,) = d.specializations
    assert (s.reason, s.value, s.compile_id) == ("constraint_violation", "8", "0/0")
    assert s.user is not None and s.user.line == 9

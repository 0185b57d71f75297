"""torch 2.3-2.5's graph-break record pasted with the glog prefix cut from every line (round 25,
helper 53's leftover). The record ("Graph break: from user code at:", the user stack) carries
the traceback of the Unsupported it logged (exc_info), whose last line reads as the last line
of a raise: it was read as a break raised by the program, placed nowhere. It is the record's:
its traceback starts where dynamo caught the exception, and its exception line ends the record.
A traceback after such a record whose first frame is not dynamo's is the program's, and one
that ends in torch._dynamo.exc.Unsupported still says the program stopped.

The records are the recorded compat logs' (tests/data/<release>/compat/text.log, real runs of
tests/data/compat_program.py) and pytorch-140394's paste, their prefixes cut here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dyncli.diagnose.read import diagnose_logs

DATA = Path(__file__).parent.parent / "data"
_PREFIX = re.compile(r"^\s*[VIWE]\d{4} [^\]]*\] \[[^\]]*\] \[__graph_breaks\] ")


def _cut_record(path: Path) -> list[str]:
    """The first graph-break record of ``path``, every line without its prefix."""
    lines = path.read_text().splitlines()
    start = next(i for i, t in enumerate(lines)
                 if "[__graph_breaks] Graph break:" in t and t.endswith("from user code at:"))
    out = []
    for t in lines[start:]:
        m = _PREFIX.match(t)
        if m is None or (out and "Graph break:" in t[m.end():]):
            break
        out.append(t[m.end():])
    return out


def _read(tmp_path: Path, lines: list[str]):  # type: ignore[no-untyped-def]
    log = tmp_path / "cut.log"
    log.write_text("\n".join(lines) + "\n")
    return diagnose_logs([log])


@pytest.mark.parametrize("release", ["2.3.1", "2.4.1", "2.5.1"])
def test_a_record_cut_of_its_prefixes_reads_as_the_record(tmp_path: Path, release: str) -> None:
    whole = DATA / release / "compat" / "text.log"
    cut = _cut_record(whole)
    assert cut[0] == "Graph break: from user code at:"
    assert cut[-1].startswith("torch._dynamo.exc.Unsupported: ")  # (what read as a raise)
    diag = _read(tmp_path, cut)
    (b,) = diag.graph_breaks
    assert not b.raised and not diag.compile_crashes
    assert (b.file.endswith("compat_program.py"), b.user_line) == (True, 38)
    assert b.reason == cut[-1].removeprefix("torch._dynamo.exc.Unsupported: ")
    # the same break as the record read with its prefixes
    (p,) = [x for x in diagnose_logs([whole]).graph_breaks if x.user_line == 38]
    assert (b.reason, b.code) == (p.reason, p.code)
    assert diag.stats.unrecognized == 0
    assert "raised as an error" not in diag.causes[0].title


def test_a_paste_cut_inside_the_records_traceback_is_no_crash(tmp_path: Path) -> None:
    # pytorch-140394 (a 2.6 dev "Graph break: skip: from user code at:" indented as a list
    # item, its traceback cut after convert_frame.py's first frame): read as a compile crash
    # "the paste ends inside the traceback" once the prefixes were cut. "skip:" is torch's word
    # for the frame it gave up on, not the reason (round 31): the reason is cut with the
    # traceback's exception
    cut = _cut_record(DATA / "pasted" / "pytorch-140394.log")
    diag = _read(tmp_path, cut)
    (b,) = diag.graph_breaks
    assert (b.file.endswith("tensor_specs.py"), b.user_line, b.reason) == (True, 2263, "")
    assert b.skipped_frame and b.reason_cut
    assert not b.raised and not diag.compile_crashes


# torch 2.15's traceback of a fullgraph=True run of compat_program.py's break (print), cut
_RAISED = [
    "Traceback (most recent call last):",
    '  File "/tmp/fg.py", line 6, in <module>',
    '    torch.compile(split, backend="eager", fullgraph=True)(torch.ones(2))',
    '  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line '
    "1276, in compile_wrapper",
    "    raise e.with_traceback(",
    "torch._dynamo.exc.Unsupported: Failed to trace builtin operator",
    "  Explanation: Dynamo does not know how to trace builtin operator `print` with argument "
    "types ['str'] (has_kwargs True)",
    "",
    "from user code:",
    '   File "/tmp/fg.py", line 4, in split',
    '    print("break", file=sys.stderr)',
]


def test_the_programs_traceback_after_a_record_is_its_own_raise(tmp_path: Path) -> None:
    # a record without a traceback of its own (2.1-2.2 logged none), then the program's: its
    # first frame is the program's, not dynamo's, so it is no part of the record
    head = _cut_record(DATA / "2.4.1" / "compat" / "text.log")[:3]
    diag = _read(tmp_path, [*head, *_RAISED])
    logged, raised = sorted(diag.graph_breaks, key=lambda b: b.raised)
    assert not logged.raised and raised.raised
    assert (raised.file, raised.user_line, raised.reason) == (
        "/tmp/fg.py", 4, "Failed to trace builtin operator")
    assert diag.causes[0].stops
    # and the record and then that traceback, each whole
    diag = _read(tmp_path, [*_cut_record(DATA / "2.4.1" / "compat" / "text.log"), *_RAISED])
    assert sorted((b.user_line, b.raised) for b in diag.graph_breaks) == [(4, True), (38, False)]


_GLOG = re.compile(r"^\S*\[[\d-]+ [\d:,]+\] \[[^\]]*\] \S+ \[DEBUG\] ")
# the development build's record whole (tests/unit/test_diagnose_dde.py's, after pytorch#119309:
# the traceback first, its exception, "from user code at:" and the user's frames)
_TB_FIRST = [
    "Graph break: Traceback (most recent call last):",
    '  File "/x/torch/_dynamo/utils.py", line 1628, in run_node',
    "    return node.target(*args, **kwargs)",
    "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on "
    "data-dependent expression Eq(u0, 0)",
    " from user code at:",
    '  File "/home/me/model.py", line 41, in forward',
    "    a, b = torch.split(x, sizes)",
]


def test_the_traceback_first_record_cut_of_its_prefixes_reads_as_the_record(
        tmp_path: Path) -> None:
    # pytorch-119309 (a 2.3 development build: "Graph break: Traceback (most recent call
    # last):"), its prefixes cut: it read as a compile crash cut inside its traceback
    pasted = DATA / "pasted" / "pytorch-119309.log"
    cut = [_GLOG.sub("", t) for t in pasted.read_text().splitlines()]
    assert cut[0] == "Graph break: Traceback (most recent call last):"
    diag = _read(tmp_path, cut)
    (b,) = diag.graph_breaks
    assert not b.raised and not diag.compile_crashes and diag.stats.unrecognized == 0
    (p,) = diagnose_logs([pasted]).graph_breaks
    assert (b.file, b.user_line, b.reason) == (p.file, p.user_line, p.reason) == ("", 0, "")
    # whole, with its exception's line: the reason and the place are the record's (the
    # exception is the record's too, not a data-dependent error of the program)
    for exc_line in (_TB_FIRST[3], _TB_FIRST[3] + " from user code at:"):
        lines = [*_TB_FIRST[:3], exc_line, *_TB_FIRST[4 + exc_line.endswith(":"):], "",
                 *_RAISED]
        diag = _read(tmp_path, lines)
        logged, raised = sorted(diag.graph_breaks, key=lambda b: b.raised)
        assert (logged.file, logged.user_line, logged.reason, logged.raised) == (
            "/home/me/model.py", 41, "GuardOnDataDependentSymNode: Could not guard on "
            "data-dependent expression Eq(u0, 0)", False)
        assert raised.raised and not diag.data_dependent_errors and not diag.compile_crashes

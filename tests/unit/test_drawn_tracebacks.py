"""Tracebacks as users' tools draw them (``dyncli.logparse.textdrawn``): IPython's with and
without terminal colours, rich's box, on torch 2.15's real output (tests/data/drawn/, its README
says how each was made). Paste hunt 21's other readings: test_paste_hunt21_readings.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textdrawn import RichBox, qualified, uncoloured
from dyncli.logparse.textlog import parse_lines

DRAWN = Path(__file__).parent.parent / "data" / "drawn"


@pytest.mark.parametrize("name", ["ipy-gb-2.15.log", "ipy-gb-color-2.15.log", "rich-gb-2.15.log"])
def test_a_fullgraph_break_drawn_by_ipython_or_rich_keeps_its_place_and_is_raised(name: str) -> None:
    (b,) = diagnose_logs([DRAWN / name]).graph_breaks
    # dynamo's "from user code:" stack names the line; IPython and rich name the exception's
    # class alone ("Unsupported: …"), after the traceback: raised, as Python's qualified line is
    assert (b.gb_code, b.user_line, b.raised) == ("GB0025", 6, True)
    assert b.file.endswith(("gb.py", ">"))


@pytest.mark.parametrize("name", ["ipy-crash-color-2.15.log", "rich-crash-2.15.log"])
def test_a_compile_crash_drawn_by_ipython_or_rich_names_torchs_frame_and_the_users(
        name: str) -> None:
    (c,) = diagnose_logs([DRAWN / name]).compile_crashes
    assert c.error.startswith("BackendCompilerFailed: backend='my_backend' raised:")
    assert c.at is not None and c.at.file.endswith("torch/_dynamo/repro/after_dynamo.py")
    assert c.user is not None and c.user.line == 5  # my_backend's raise (a cell's, or crash.py's)


def test_colours_whose_esc_the_paste_lost_are_taken_off_too(tmp_path: Path) -> None:
    bare = (DRAWN / "ipy-crash-color-2.15.log").read_bytes().replace(b"\x1b", b"")
    assert b"[39m" in bare
    (c,) = diagnose_text(tmp_path, bare).compile_crashes
    assert c.user is not None and (c.user.file, c.user.line) == ("Cell In[1]", 5)


def test_uncoloured_keeps_torchs_brackets() -> None:
    line = b"[0/1] [__recompiles] size mismatch at index 0. expected 3, actual 4 [0m"
    assert uncoloured(line) == b"[0/1] [__recompiles] size mismatch at index 0. expected 3, actual 4 "
    assert uncoloured(b"\x1b[1;31mRuntimeError\x1b[0m: x[0]") == b"RuntimeError: x[0]"
    assert uncoloured(b"L['x'][0] == 3") == b"L['x'][0] == 3"  # no reset: nothing taken


def test_a_coloured_glog_line_is_read(tmp_path: Path) -> None:
    text = ("\x1b[33mV1124 10:00:00.000000 1 torch/_dynamo/guards.py:3006] [0/1] [__recompiles] "
            "Recompiling function f in /home/u/m.py:3\x1b[0m\n"
            "\x1b[33mV1124 10:00:00.000000 1 torch/_dynamo/guards.py:3006] [0/1] [__recompiles]"
            "     triggered by the following guard failure(s):\x1b[0m\n"
            "\x1b[33mV1124 10:00:00.000000 1 torch/_dynamo/guards.py:3006] [0/1] [__recompiles]"
            "     - 0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4\x1b[0m\n")
    diag = diagnose_text(tmp_path, text)
    assert [r.cause for r in diag.recompiles] == ["size"]


def test_richs_wrapped_headers_join_as_rich_folded_them() -> None:
    box = RichBox()
    lines = [
        "╭──────── Traceback (most recent call last) ────────╮",
        # a path folded mid-word (bitsandbytes#522)
        "│ C:\\Users\\u\\venv\\lib\\site-packages\\accelerate\\accele │",
        "│ rator.py:1290 in prepare_model                   │",
        "│                                                  │",
        "│ ❱ 1290 │   model = torch.compile(model)           │",
        # the function wrapped at the blank rich dropped (kohya_ss#1141)
        "│ E:\\k\\venv\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py:375 in │",
        "│ check_if_dynamo_supported                        │",
        "│                                                  │",
        "│   373 def check_if_dynamo_supported():           │",
        "╰──────────────────────────────────────────────────╯",
    ]
    out = [box.line(t.encode()) for t in lines]
    assert [o for o in out if o] == [
        b"Traceback (most recent call last):",
        b'  File "C:\\Users\\u\\venv\\lib\\site-packages\\accelerate\\accelerator.py", line 1290, '
        b"in prepare_model",
        b"    model = torch.compile(model)",
        b'  File "E:\\k\\venv\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py", line 375, '
        b"in check_if_dynamo_supported",
    ]


def test_a_header_piece_before_a_line_outside_the_box_is_dropped() -> None:
    box = RichBox()
    assert box.line("│   874".encode()) == b""  # a code line the paste cut: its number alone
    box.line("│ /x/y.py:3 in f │".encode())
    box.outside()  # "... stack trace stuff..." between two pieces of the box
    assert box.line("│ /a/b.py:9 in g │".encode()) == b""
    assert box.line("│      │".encode()) == b'  File "/a/b.py", line 9, in g'


def test_only_torchs_classes_are_qualified() -> None:
    assert qualified(b"Unsupported: Call to x") == b"torch._dynamo.exc.Unsupported: Call to x"
    assert qualified(b"RuntimeError: boom") == b"RuntimeError: boom"
    assert qualified(b"Unsupported") == b"Unsupported"


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: "│" + " " * n, 1_000_000),
    (lambda n: "│" + "a:1 in " * n + "│", 150_000),
    (lambda n: "\x1b[" + "1;" * n + "m", 500_000),
    (lambda n: "[0m" + "[1;" * n, 300_000),
], ids=["blanks", "locations", "escape", "codes"])
def test_a_hostile_drawn_line_costs_linear_time(make: Callable[[int], str], n: int) -> None:
    assert_linear(lambda line: list(parse_lines([line.encode(), b"\n"] * 2)), make, n)


def test_jenkins_timestamps_on_every_line_are_not_the_programs(tmp_path: Path) -> None:
    # Jenkins' timestamper before each line of a notebook's output (MONAI tutorials#1988's form),
    # on torch 2.15's IPython traceback: read as without it
    stamped = b"".join(b"[2025-05-06T16:55:02.641Z] " + line for line in
                       (DRAWN / "ipy-crash-color-2.15.log").read_bytes().splitlines(True))
    (c,) = diagnose_text(tmp_path, stamped).compile_crashes
    assert c.user is not None and (c.user.file, c.user.line) == ("Cell In[1]", 5)
    # monai-tutorials-1988's own excerpt ends above torch's frames: a traceback, nothing of the
    # compiler in it (it was "not a torch log")
    log = tmp_path / "monai.log"
    log.write_text("[2025-05-06T16:55:02.641Z] Cell In[6], line 12, in train(model, inputs, labels)\n"
                   "[2025-05-06T16:55:02.641Z]      11 def train(model, inputs, labels):\n"
                   "[2025-05-06T16:55:02.641Z] ---> 12     outputs = model(inputs)\n")
    with pytest.raises(InputError, match="nothing of torch's compiler"):
        diagnose_logs([log])

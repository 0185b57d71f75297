"""torch's text quoted in markdown prose is words about a log, not a log; pasted in a fence or
behind a quote's ">" it is read.

dyncli's own CHANGELOG was read as a torch log (1 graph break): a bullet quoted torch's
warning in an inline code span opened at one line's end (`…/functions.py:725:`) and closed on
the next, which began with "UserWarning: Graph break due to unsupported builtin X`". Each line
every pasted case reads alone is put here in prose the ways docs and issues quote text (in a
sentence's code span, a bullet's, a span carried over from the line above, a table's cell),
and must not be read; the same line in a fence must be.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import TextLogParser

PASTED = Path(__file__).resolve().parents[2] / "tests" / "data" / "pasted"


def _read(text: bytes) -> bool:
    """Whether ``text`` holds a torch record, or a line of one (what diagnose does not refuse)."""
    stats = ParseStats()
    events = list(TextLogParser(stats).parse(text.splitlines(keepends=True)))
    return bool(events or stats.records or stats.torch_lines > 0)


def _torch_lines() -> list[tuple[str, bytes]]:
    """(case, line) for each line of the pasted corpus that is read on its own."""
    out: dict[bytes, str] = {}
    for path in sorted(PASTED.glob("*.log")):
        for line in path.read_bytes().splitlines():
            line = line.rstrip()
            if line.strip() and line not in out and _read(line + b"\n"):
                out[line] = path.name
    return [(case, line) for line, case in out.items()]


LINES = _torch_lines()


def _text(line: bytes) -> bytes:
    return line.strip(b" >`")


FORMS: dict[str, Callable[[bytes], bytes]] = {
    "sentence": lambda t: b"The paste said (`" + t + b"`) and stopped.\n",
    "bullet": lambda t: b"- `" + t + b"` is what torch wrote.\n",
    # a span opened at the end of a bullet's line, its text on the next (the CHANGELOG's form)
    "carried": lambda t: b"- torch warned (`a.py:1:`, `\n  " + t + b"`), then\n  stopped.\n",
    # the same at the margin, where a line with torch's prefix is a record's (round 25)
    "carried-margin": lambda t: b"torch warned (`a.py:1:`, `\n" + t + b"`), then\nstopped.\n",
    "table-code": lambda t: b"| kind | text |\n| --- | --- |\n| x | `" + t + b"` |\n",
    "table": lambda t: b"| kind | text |\n| --- | --- |\n| x | " + t.replace(b"|", b"\\|") + b" |\n",
    # (round 26) a table without its outer pipes, its first cell padded as docker compose pads
    # its service's name ("x      | "): read as that stamp before the cell before round 26
    "table-bare": lambda t: (b"kind   | text |\n------ | ---- |\nx      | "
                             + t.replace(b"|", b"\\|") + b" |\n"),
    "table-bare-open": lambda t: (b"kind   | text\n------ | ----\nx      | "
                                  + t.replace(b"|", b"\\|") + b"\n"),
}


def test_the_corpus_has_lines_to_quote() -> None:
    assert len(LINES) > 300


@pytest.mark.parametrize("form", sorted(FORMS))
def test_torch_lines_quoted_in_prose_are_not_read(form: str) -> None:
    read = [(case, line[:100]) for case, line in LINES if _read(FORMS[form](_text(line)))]
    assert not read, read[:5]


def test_torch_lines_in_a_fence_are_read() -> None:
    unread = [(case, line[:100]) for case, line in LINES
              if not _read(b"```text\n" + line + b"\n```\n")]
    assert not unread, unread[:5]


def test_the_changelog_s_own_lines() -> None:
    """The two lines of CHANGELOG.md that made it a log (a span carried over a line end)."""
    bullet = (b"  torch's Python warning at a builtin or C function it cannot trace (`.../functions.py:725:\n"
              b"  UserWarning: Graph break due to unsupported builtin X`, `UserWarning: Dynamo does not know how\n")
    assert not _read(b"- diagnose: what users see with no TORCH_LOGS set is read:\n" + bullet)
    # the same warning pasted alone, or in a fence, is torch's
    assert _read(b"UserWarning: Graph break due to unsupported builtin X\n")
    assert _read(b"- diagnose: read:\n```\n  UserWarning: Graph break due to unsupported builtin X\n```\n")


def test_a_paste_opened_by_a_backtick_is_read() -> None:
    """comfyui-wanvideowrapper-287: the user's error after one backtick, no prose before it
    (the span runs to the line's end): a paste in inline code, read; a span that closes and
    goes on in words is prose."""
    error = b"Dynamo failed to run FX node with fake tensors: call_function <built-in function mul>"
    assert _read(b"`!!! Exception during processing !!! " + error + b"\n")
    assert _read(b"`" + error + b"`\n")
    assert not _read(b"`" + error + b"` is what ComfyUI printed.\n")


def test_a_blank_line_ends_a_span() -> None:
    """A span left open by prose (an odd backtick) does not reach past its paragraph."""
    assert _read(b"an odd ` backtick\n\n  UserWarning: Graph break due to unsupported builtin X\n")
    assert not _read(b"an odd ` backtick\n  UserWarning: Graph break due to unsupported builtin X\n")


def test_a_trace_under_words_is_refused_as_a_trace(tmp_path: Path) -> None:
    """docs/diagnose-trace.md shows one trace envelope in a fence, and was read as a log with
    a record not understood. A trace's records (and their payload's tab-led lines) amid other
    text are the trace's: refused, saying what they are, whatever the trace holds."""
    traces = sorted((PASTED.parent / "2.15.0" / "traces").glob("*/dedicated_log_torch_trace*"))
    assert traces
    for trace in traces:
        path = tmp_path / "words.log"
        path.write_bytes(b"Here is my trace:\n" + trace.read_bytes())
        with pytest.raises(InputError, match="not a torch log: its torch lines are records of a "
                                             "TORCH_TRACE trace"):
            diagnose_logs([path])


def _all(text: bytes) -> tuple[list[object], tuple[int, int, int]]:
    stats = ParseStats()
    events = list(TextLogParser(stats).parse(text.splitlines(keepends=True)))
    return events, (stats.records, stats.recognized, stats.unrecognized)


_TB = b"""Traceback (most recent call last):
  File "/app/train.py", line 10, in <module>
    y = model(x)
  File "/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 600, in _fn
    return fn(*args, **kwargs)
  File "/venv/lib/python3.11/site-packages/torch/_inductor/compile_fx.py", line 700, in compile_fx
    raise RuntimeError("boom")
"""
# what tools put before each line of a program's output: torchrun's rank tag (with a blank: a
# launcher's), vLLM's logger stamp, docker compose's service column
_STAMPS = [b"[rank0]:", b"[rank0]: ", b"INFO 11-29 18:13:51 a.py:1] ", b"worker  | "]


@pytest.mark.parametrize("stamp", _STAMPS)
def test_a_stamped_fence_line_is_the_programs_line_to_both_readers(stamp: bytes) -> None:
    """Round 25: which lines are a fence's marks was decided twice, on the line as pasted
    (where a fence opens) and on it with its stamp off (what the tracebacks' reader saw), so
    a stamped "```" opened no fence but ended a traceback as a fence would. Decided once, on
    the line as pasted: a stamp before the marks makes them the program's output (an LLM
    server printing a completion), read as any other line of it is."""
    def tagged(text: bytes) -> bytes:
        return b"".join(stamp + line + b"\n" for line in text.splitlines())
    for after in (b"RuntimeError: boom\n", tagged(b"RuntimeError: boom")):
        fenced = _all(tagged(_TB) + stamp + b"```\n" + after)
        worded = _all(tagged(_TB) + stamp + b"Done\n" + after)
        assert fenced == worded, (stamp, after)
    # it opens no fence: prose's inline code under it is still prose
    bullet = (b"- torch warned (`a.py:1:`, `\n"
              b"UserWarning: Graph break due to unsupported builtin X`), then stopped.\n")
    assert not _read(stamp + b"```\n" + bullet)
    assert _read(b"```\n" + bullet)  # (a user's fence: a paste, read)


_GLOG = (b"W1130 12:00:00.123456 1234 torch/_dynamo/convert_frame.py:964] [0/8] "
         b"torch._dynamo hit config.recompile_limit (8)")


def test_a_glog_line_in_a_span_opened_above_is_prose() -> None:
    """Round 25 (round 24's review): a line with torch's whole prefix was read as a record
    even where prose's inline code span, opened at the line above's end, quotes it. Every
    file of tests/data (713: the pasted corpus, the recorded logs of every release) and the
    docs read the same without it; no thread found pastes a log line so."""
    assert not _read(b"The warning (`\n" + _GLOG + b"`) is what I see.\n")
    assert not _read(b"The warning (`\n[rank0]:" + _GLOG + b"`) is what I see.\n")
    # the span runs on: the next line is in it too; it closes: the next is read
    assert not _read(b"See `\n" + _GLOG + b"\n" + _GLOG + b"` here.\n")
    assert _read(b"See `a`\n" + _GLOG + b"\n")
    assert _read(b"See `a b\nc` d\n" + _GLOG + b"\n")
    # a blank line ends the paragraph and its span; a fence is a paste
    assert _read(b"an odd ` backtick\n\n" + _GLOG + b"\n")
    assert _read(b"an odd ` backtick\n```\n" + _GLOG + b"\n```\n")


def test_a_span_line_with_the_open_record_s_prefix_is_prose() -> None:
    """A line that repeats the prefix of the record above takes the parser's fast path; after
    a line that opened a span, it is still prose."""
    head = _GLOG.split(b"] [0/8] ")[0] + b"] [0/8] "
    record = head + b"torch._dynamo hit config.recompile_limit (8)\n"
    _, (records, _, unread) = _all(record + b"so `\n" + head + b"   function: 'f' (/a.py:1)`\n")
    _, (records_alone, _, _) = _all(record)
    assert records == records_alone and unread == 2


def test_a_log_line_after_a_program_line_with_one_backtick_is_read() -> None:
    # GNU tools quote `like this' (make, ld's "undefined reference to `cuLaunchKernel'", bash's
    # "unexpected token `('"): one backtick, an odd count, leaves no span of prose open over a
    # torch line with no backtick to close it. Before round 26 the recompile after make's line
    # was not read (round 25's span rule took any line after one as quoted). A span in prose
    # still opens across an apostrophe in its word (`don't`).
    text = b"".join(
        b"V1130 23:48:58.381000 20848 torch/_dynamo/guards.py:2997] [0/%d] [__recompiles] %s\n"
        % (n, body) for n, body in (
            (1, b"Recompiling function forward in /m.py:10"),
            (1, b"    triggered by the following guard failure(s):"),
            (1, b"    - 0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 8"),
            (2, b"Recompiling function forward in /m.py:10"),
            (2, b"    triggered by the following guard failure(s):"),
            (2, b"    - 0/1: tensor 'L['x']' size mismatch at index 0. expected 8, actual 12")))
    lines = text.splitlines(keepends=True)
    for program in (b"make: *** No rule to make target `all'.  Stop.\n",
                    b"/usr/bin/ld: main.o: undefined reference to `cuLaunchKernel'\n",
                    b"bash: -c: line 1: syntax error near unexpected token `('\n"):
        stats = ParseStats()
        events = list(TextLogParser(stats).parse([*lines[:3], program, *lines[3:]]))
        assert stats.records == 2 and stats.unrecognized == 1, (program, stats)
        assert len([e for e in events if type(e).__name__ == "Recompile"]) == 2
    assert not _read(b"I don't see `don't\n" + lines[0] + b"` in the log.\n")


def test_docker_composes_stamp_is_taken_off_outside_a_table() -> None:
    """Round 26: docker compose's "service  | " is a markdown row's form without its outer
    pipes; under a table's delimiter row it is a cell (above), elsewhere the stamp: before a
    table, after its blank line, and after a program's printed table whose next line has no
    pipe (a traceback that follows it at once is the traceback)."""
    stamped = b"".join(b"server-1   | " + line + b"\n"
                       for line in (_TB + b"RuntimeError: boom\n").splitlines())
    table = b"kind   | text |\n------ | ---- |\nx      | y |\n"
    crash = _all(stamped)
    assert crash[1][0] == 1, crash
    for text in (stamped + b"\n" + table, table + b"\n" + stamped):
        assert _all(text)[1][0] == 1, text
    printed = b"name | ms\n---- | --\na    | 1\n"  # a benchmark's table, then its crash
    assert _all(printed + _TB + b"RuntimeError: boom\n")[1][0] == 1

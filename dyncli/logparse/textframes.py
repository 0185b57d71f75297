"""dynamo's errors about a frame, as the text log or a traceback shows them: a frame it gave up
on (``WON'T CONVERT``), a compile whose guards failed on the frame they were made from (a bug
of torch's), and a fullgraph call that compiled no frame.
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.guardtext import PARAM_HINT

# convert_frame's format_error_msg (2.1-2.15): "WON'T CONVERT {co_name} {co_filename} line
# {co_firstlineno} " then "due to: " and the traceback (format_error_msg_verbose: "line N" ends
# the first line and "===== TorchDynamo Stack Trace =====" follows)
_WONT_RE = re.compile(r"^WON'T CONVERT (?P<fn><[^<>]{1,400}>|\S{1,400}) (?P<file>.{1,4096}?) "
                      r"line (?P<line>\d{1,9})\s*$")
_MAX_ERROR = 600  # characters of an exception's text kept


def wont_convert(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A frame dynamo gave up on (``ev.NotConverted``), with the exception its traceback ends
    in: the first line at the left margin after the traceback's frames, and the lines that
    continue it up to a blank one (``BackendCompilerFailed: backend='x' raised:`` /
    ``RuntimeError: …``)."""
    m = _WONT_RE.match(lines[0])
    if m is None:
        return []
    error: list[str] = []
    in_frames = False
    for text in lines[1:]:
        if text.startswith(" "):  # a traceback's frame, or its source line
            in_frames = True
            if error:
                break
            continue
        if in_frames and text.strip():
            error.append(text.strip())
        elif error:  # the blank line after the exception's text
            break
    return [ev.NotConverted(function=m["fn"], file=m["file"], first_line=int(m["line"]),
                            error=" ".join(error)[:_MAX_ERROR], **common)]


# symbolic_convert's record of a frame it skipped for a graph break inside a loop (2.0-2.10,
# INFO since pytorch#95968; gone in 2.11's, 2.14.1's and 2.15's sources, where the break's own
# record chains "graph break in loop"): "Skipping frame because there is a graph break in a
# for/while loop", from 2.1 (pytorch#100045) with f"\n{self.frame_summary()}" under it, the
# root frame's FrameSummary repr "<FrameSummary file F, line N in fn>" (N: the break's line in
# the loop). convert_frame echoes it at DEBUG as "Skipping frame %s %s \<newline> %s %s" (the
# exception, co_name, co_filename, co_firstlineno: a run of blanks between name and file)
LOOP_SKIP = "Skipping frame because there is a graph break in a for/while loop"
_SUMMARY_RE = re.compile(r"<FrameSummary file (?P<file>.{1,4096}?), line (?P<line>\d{1,9}) in "
                         r"(?P<fn><[^<>]{1,400}>|[^<>\s]{1,400})>(?P<rest>.*)")
# the echo's frame name after the exception's text; "file first_line" follow it
_ECHO_FN_RE = re.compile(r"\s*(?P<fn><[^<>]{1,400}>|\S{1,400})\s")


def loop_skip(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A frame dynamo skipped for a graph break in a loop (``ev.LoopSkip``), from its INFO
    record or convert_frame's DEBUG echo of it; [] for any other "Skipping …" line."""
    head = lines[0].strip()
    echo = head.startswith("Skipping frame " + LOOP_SKIP)
    if not (echo or head.startswith(LOOP_SKIP)):
        return []
    summary = _SUMMARY_RE.match(lines[1].strip()) if len(lines) > 1 else None
    # the echo's frame: after the FrameSummary (2.1 on) or after the sentence itself (2.0)
    tail = summary["rest"] if summary is not None else head.split(LOOP_SKIP, 1)[1]
    fn, file, first = _echo_frame(tail) if echo else ("", "", None)
    return [ev.LoopSkip(
        function=summary["fn"] if summary else fn, file=summary["file"] if summary else file,
        user_line=int(summary["line"]) if summary else None, first_line=first, echo=echo,
        **common)]


def _echo_frame(tail: str) -> tuple[str, str, int | None]:
    """(co_name, co_filename, co_firstlineno) of the echo's "fn   file first_line" (the name
    first, a run of blanks, the file, the first line last); ("", "", None) where it is not."""
    m = _ECHO_FN_RE.match(tail)
    if m is None:
        return "", "", None
    file, _, first = tail[m.end():].strip().rpartition(" ")
    if not file.strip() or not first.isdigit() or len(first) > 9:
        return "", "", None
    return m["fn"], file.strip(), int(first)


# guards.py's check of a compile's guards on the frame they were made from (2.11-2.15's words):
# "Guard failed on the same frame it was created. This is a bug - please create an issue."
# f"Guard fail reason: {reasons}", the reasons "51/0: tensor 'x' size mismatch …" (one, or
# several joined by "; "); an AssertionError, often re-raised as InternalTorchDynamoError and
# quoted by a wrapper's own error line (ComfyUI-SeedVR2#427)
# 2.6-2.10 raised the same check as f"Guard check failed: {reasons}" (guards.py 2.6.0:2335,
# 2.7.0:2510): torchao's smoothquant test (pytorch#145733), DebugMode (pytorch#165012)
SELF_CHECK = "Guard failed on the same frame it was created"
SELF_CHECK_OLD = "Guard check failed: "
# (where torch or a wrapper puts it: a line's start or after an exception's or a wrapper's
# "…: ", and with torch's "Guard fail reason:"; a document quoting the sentence is no log;
# the older words only with the failed entry after them, as torch wrote them)
_SELF_CHECK_RE = re.compile(r"(?:^|: )(?:Guard failed on the same frame it was created\.(?: This is "
                            r"a bug - please create an issue\.)?\s{0,4}Guard fail reason: "
                            r"(?:(?P<entry>\d{1,9}/\d{1,9}(?:_\d{1,9})?): )?|Guard check failed: "
                            r"(?P<old>\d{1,9}/\d{1,9}(?:_\d{1,9})?): )(?P<reason>.{0,4000})")
# what torch appends to any parameter's size guard (guards.cpp): advice for recompiles


def guard_self_check(text: str, common: dict[str, Any]) -> list[ev.Event]:
    """The compile whose guards failed on their own frame (``ev.GuardSelfCheck``), from a line
    that holds torch's sentence wherever it stands."""
    m = _SELF_CHECK_RE.search(text)
    if m is None:
        return []
    reason = m["reason"].split(PARAM_HINT, 1)[0].strip()
    return [ev.GuardSelfCheck(entry=m["entry"] or m["old"] or "", reason=reason[:_MAX_ERROR],
                              **common)]


# eval_frame.py's compile_wrapper (2.15): "torch.compile with fullgraph=True found no compiled
# frames." then " Skipped frames:" and a "  - {co_name} ({co_filename}:{co_firstlineno}):
# {reason}" line per frame (add_skip_reason), or " Compilation was not attempted and no cached
# compiled code was found."
_SKIPPED_RE = re.compile(r"^\s{0,40}- (?P<fn><[^<>]{1,400}>|\S{1,400}) \((?P<file>.{1,4096}):"
                         r"(?P<line>\d{1,9})\): (?P<reason>.{1,2000})$")
_MAX_SKIPPED = 64


def no_compiled_frames(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A fullgraph call that compiled no frame (``ev.NoCompiledFrames``), with the frames
    torch says it skipped and why."""
    skipped = [(m["fn"], m["file"], int(m["line"]), m["reason"].strip())
               for text in lines[1:_MAX_SKIPPED + 1] if (m := _SKIPPED_RE.match(text))]
    return [ev.NoCompiledFrames(skipped=tuple(skipped), **common)]

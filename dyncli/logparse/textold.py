"""torch's records as releases before 2.1 wrote them, and torchdynamo's before torch 2.0.

Read by the same parser as the later ones (``dyncli.logparse.textlog``), for pastes of old
threads and logs of old installs (issue 33): torch 2.0-2.2's one-line recompile tuple, with or
without a line number and, in 2.2's report-all mode, with a list of guards; the graph-break
message of 2.1-2.5 (the break's place is the last user frame), in 2.0 and torchdynamo with
its first frame on the first line; torchdynamo's one-line recompile-limit warning of 2022.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse.textmsg import _need
from dyncli.logparse.textrecompiles import (
    ERROR_ON_RECOMPILE,
    last_listed,
    literal,
    recompile_limit,
    recompiling,
)
from dyncli.logparse.textstack import user_stack

# torch 2.1–2.5 (symbolic_convert.py log_graph_break): "Graph break: [reason ]from user code
# at:", the user stack, then (2.3–2.5) the Python traceback of the exception whose last line
# is the reason ("torch._dynamo.exc.Unsupported: call_function BuiltinVariable(print) […]").
OLD_BREAK = "Graph break: "
_EXC_LINE_RE = re.compile(r"^(?:torch\._dynamo\.exc\.)?(?P<exc>\w{1,64}): (?P<msg>.*)$")

# torchdynamo 2022, one line: "torchdynamo hit recompilation cache limit (64) for function 'f'
# (file.py:39), due to the following guard failures: [['guard'], …]"
OLD_LIMIT_RE = re.compile(r"^torchdynamo hit recompilation cache limit \((?P<limit>\d{1,9})\) for "
                          r"function '(?P<fn>[^']{0,1024})' \((?P<where>[^()]{0,2048})\), due to the "
                          r"following guard failures: (?P<rest>.*)$")


def old_recompiling(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch 2.0-2.2 logged the recompile message as a tuple, on one line: ``('Recompiling
    function F in FILE[:LINE]', "triggered by the following guard failure: REASON")``, or
    with ``guard failures: [REASON, …]`` (a list) in 2.2's report-all mode."""
    head, reasons = old_tuple(lines[0])
    (rec,) = recompiling([head, *(f"- {r}" for r in reasons)], common)
    assert isinstance(rec, ev.Recompile)
    return [dataclasses.replace(rec, entries=1) if len(reasons) > 1 else rec]


def old_recompile_error(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The same tuple as error_on_recompile's exception (2.1-2.2's convert_frame.py raised
    ``RecompileError(message)`` with it): the recompile torch refused, no compile of it."""
    (rec,) = old_recompiling(lines, common)
    assert isinstance(rec, ev.Recompile)
    return [dataclasses.replace(rec, refused=ERROR_ON_RECOMPILE)]


_TUPLE_FAILURE = "triggered by the following guard failure"


def old_tuple(text: str) -> tuple[str, list[str]]:
    """(``Recompiling function …``, reasons) of torch 2.0-2.2's tuple message (a repr)."""
    value = literal(text)
    if not (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise ValueError("unparsable Recompiling tuple")
    head, tail = value
    _, sep, reasons = tail.partition(": ")
    if not tail.startswith(_TUPLE_FAILURE) or not sep:
        return head, []
    if tail.startswith(_TUPLE_FAILURE + "s: ["):  # 2.2's report-all list
        items = literal(reasons)
        if isinstance(items, list):
            return head, [str(i) for i in items]
    return head, [reasons]


def old_graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch 2.1–2.5's graph-break message: the break's place is the last frame of the user
    stack. torch 2.0 and torchdynamo wrote the first frame on the first line (``… from user
    code at   File "f.py", line 12, in fn``), the rest without a prefix."""
    head = lines[0][len(OLD_BREAK):].strip()
    at = head.find(_FROM_USER)
    inline = head[at + len(_FROM_USER):].strip() if at >= 0 else ""
    first_frame = inline.startswith("File ")  # torch 2.0's and torchdynamo's form
    if first_frame:
        head, lines = head[:at + len(_FROM_USER)] + ":", [lines[0], inline, *lines[1:]]
    if head.startswith("Traceback (most recent call last)"):
        return _traceback_break(lines, common)
    tb = next((i for i, t in enumerate(lines) if t.startswith("Traceback (most recent call last)")),
              len(lines))
    stack = user_stack(lines[1:tb])
    if not head.endswith("from user code at:"):
        raise ValueError("unparsable graph break")
    # a paste that ends at the header (pytorch#107865) still shows the break and its reason;
    # its place is unknown
    where = stack[-1] if stack else ev.UserLoc("", 0, "", "")
    reason = head[:-len("from user code at:")].strip()
    # convert_frame's record of a frame it gave up on (2.4-2.7): "skip:" is no reason but its
    # word for "the whole frame falls back to eager"; the reason is the exception after the
    # stack, as in 2.3-2.5's records (pytorch#140394 read "skip:" as the reason)
    skipped = reason == "skip:"
    # the reason on the first line is 2.1-2.2's form (2.0's and torchdynamo's, whose frame is
    # there too: FORM_FIRST); an empty one 2.3-2.5's, whose reason is the exception after the stack
    releases = (ev.FORM_FIRST if first_frame else ev.FORM_SKIP if skipped else
                ev.FORM_INLINE if reason else ev.FORM_AFTER)
    if skipped:
        reason = ""
    for text in reversed(lines[tb + 1:]):
        em = _EXC_LINE_RE.match(text) if not text.startswith(" ") else None
        if em is not None:
            reason = reason or _reason_of(em)
            break
    if not reason and not skipped:
        # torch 2.3 wrote the reason after the stack (the exception's traceback): a record
        # without one was cut short, and its last frame is a frame on the way, not
        # necessarily the break's place (pytorch#126026's paste stops at a call in line 612);
        # the skip's stack is the exception's own (its real_stack): the break's place
        where = ev.UserLoc("", 0, "", "")
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=reason.strip(),
                          user_stack=stack, releases=releases, skipped_frame=skipped, **common)]


_FROM_USER = "from user code at"
# an exception's line at the end of a traceback: "torch.fx.experimental.symbolic_shapes.
# GuardOnDataDependentSymNode: Could not guard on …", "torch._dynamo.exc.Unsupported: …"
_RAISED_RE = re.compile(r"^(?:[A-Za-z_]\w{0,63}\.){0,8}(?P<exc>[A-Z]\w{0,63}): (?P<msg>.+)$")


def raised_reason(lines: list[str]) -> str:
    """The reason the last exception line of a traceback at the margin gives (``torch._dynamo.
    exc.Unsupported: 'skip function graph_break in file …'``), or "" where there is none."""
    for text in reversed(lines):
        em = _EXC_LINE_RE.match(text) if not text.startswith(" ") else None
        if em is not None:
            return _reason_of(em)
    return ""


def _reason_of(m: re.Match[str]) -> str:
    """A graph break's reason from its exception line: dynamo's ``Unsupported`` says only its
    message, and so does 2.1-2.6's ``UserError`` for a branch on a tensor's value (an Unsupported
    too, read as the branch's break wherever it stands: pytorch#138689's 2.4 record, whose
    ``torch._dynamo.exc.UserError: Dynamic control flow …`` was told "move the untraceable call
    out"); any other exception keeps its name."""
    if m["exc"] == "Unsupported" or (
            m["exc"] == "UserError" and m["msg"].startswith(breaks.CONTROL_FLOW)):
        return m["msg"]
    return f"{m['exc']}: {m['msg']}"


def _traceback_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A 2.3 development build's graph break whose reason is a traceback (``Graph break:
    Traceback (most recent call last):``, its frames, the exception, ``… from user code at:`` and the user's
    frames: pytorch#119309). The reason is the last exception line before the user's frames;
    a paste cut inside the traceback is a break at a place the log does not show."""
    end = next((i for i, t in enumerate(lines) if t.rstrip().endswith(_FROM_USER + ":")),
               len(lines))
    reason = ""
    for text in reversed(lines[:end + 1]):
        text = text.rstrip()
        if text.endswith(_FROM_USER + ":"):
            text = text[:-len(_FROM_USER + ":")].rstrip()
        m = _RAISED_RE.match(text)
        if m is not None:
            reason = _reason_of(m)
            break
    stack = user_stack(lines[end + 1:]) if end < len(lines) else ()
    where = stack[-1] if stack else ev.UserLoc("", 0, "", "")
    # (no reason: a record cut, said by diagnose as any other: GraphBreakReport.reason_cut)
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=reason[:2000],
                          user_stack=stack, releases=ev.FORM_AFTER, **common)]


# torch 2.1-2.5's record pasted with the prefix cut from every line: its head at the margin
# ("Graph break: [reason ]from user code at:"), then the user stack and (2.3-2.5: exc_info) the
# traceback of the Unsupported it logged, whose last line reads as Python's last line of a
# raise ("torch._dynamo.exc.Unsupported: …"). That traceback is the record's, not the program's:
# it starts where dynamo caught the exception (symbolic_convert.py's wrapper, convert_frame.py),
# and the exception line ends the record. A traceback whose first frame is not dynamo's (a
# 2.1-2.2 record has none of its own) is the program's, given back to be read as one.
_TB_HEAD = "Traceback (most recent call last)"
_DYNAMO_FRAME_RE = re.compile(r'^\s{1,8}File "[^"\n]{0,1024}?[/\\]torch[/\\]_dynamo[/\\]')


# a development build of 2.3 (pytorch#119309, February 2024; 2.2.2 logs the exception's text
# there, 2.3.1 the head above with exc_info) put the traceback first: "Graph break: Traceback
# (most recent call last):", its frames, the exception's line, "from user code at:" (on that
# line or the next) and the user's frames (``_traceback_break``)
_TB_BREAK_HEAD = OLD_BREAK + _TB_HEAD + ":"


def old_break_head(text: str) -> bool:
    """Whether ``text`` (a line without a prefix) is the head of that record, or of the
    development build's with the traceback first."""
    return text.startswith(OLD_BREAK) and (text.rstrip().endswith(_FROM_USER + ":")
                                           or text.rstrip() == _TB_BREAK_HEAD)


def old_break_continues(margins: int, last: str, text: str, head: str = "") -> bool | None:
    """Whether ``text``, a line without a prefix, continues that record (whose first line is
    ``head``), whose last line is ``last`` and which has taken ``margins`` lines at the margin
    after its head (the traceback's head, then its exception's line: with that, the record is
    whole; the development build's, traceback first: its exception's line). None: the
    traceback head just taken is not the record's (its first frame is not dynamo's)."""
    if head.rstrip() == _TB_BREAK_HEAD:
        if text[:1] in (" ", "\t"):
            return bool(text.strip())
        exc = text.rstrip().removesuffix(_FROM_USER + ":").rstrip()
        return margins == 0 and _RAISED_RE.match(exc) is not None
    if margins >= 2:
        return False
    if last.startswith(_TB_HEAD):
        return True if _DYNAMO_FRAME_RE.match(text) else None
    if text[:1] in (" ", "\t"):
        return bool(text.strip())
    if margins == 0:
        return text.startswith(_TB_HEAD)
    return _RAISED_RE.match(text) is not None


def old_limit(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torchdynamo's warning of 2022 on one line: ``torchdynamo hit recompilation cache limit
    (64) for function 'f' (file.py:39), due to the following guard failures: [['g'], …]``."""
    om = _need(OLD_LIMIT_RE.match(lines[0]), "recompile limit")
    file, _, line = om["where"].rpartition(":")
    return [ev.RecompileLimit(limit_name="cache_size_limit", limit=om["limit"], function=om["fn"],
                              file=file, first_line=int(line) if line.isdigit() and len(line) < 10 else None,
                              last_reason=last_listed(om["rest"]), before_2_2=True, **common)]


# torch's warning at a Tensor.item() it does not capture (variables/tensor.py, 2.4-2.15; on by
# default, no TORCH_LOGS): "Graph break from `Tensor.item()`, consider setting:", the config
# line and the env form of it, then "Graph break: from user code at:" and the stack, all one
# record (distrifuser#26, pytorch_scatter#457)
# (the backticks are torch's; a paste outside a code fence, or copied from a rendered page, loses
# them: transformers#37944)
CONSIDER_HEAD = "Graph break from `Tensor.item()`, consider setting:"  # (2.15's words)
# consider_setting's reason after what torch names (its one warning of the kind: Tensor.item())
NOT_CAPTURED = ", which torch does not capture by default"
ITEM_WARNED = f"Tensor.item(){NOT_CAPTURED}"
CONSIDER_RE = re.compile(r"^Graph break from `?(?P<what>[^`,]{1,200}?)`?, consider setting:\s*$")
_SETTING_RE = re.compile(r"^\s{1,40}(?P<set>(?:torch\.[\w.]{1,200} = \S{1,40})|(?:env \w{1,100}=\S{1,40}))\s*$")


def consider_setting(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch's Tensor.item() warning: its reason, torch's setting as the hint, and the place
    (the last frame of its stack)."""
    what = _need(CONSIDER_RE.match(lines[0]), "graph break").group("what")
    settings = [m["set"] for t in lines[1:12] if (m := _SETTING_RE.match(t))]
    at = next((i for i, t in enumerate(lines) if t.startswith(OLD_BREAK)), len(lines))
    stack = user_stack(lines[at + 1:])
    # the last frame is the place when torch's code line under it is there; a paste that ends
    # on a frame's File line (distrifuser#26, pytorch_scatter#457) ends on the way there
    where = stack[-1] if stack and stack[-1].code else ev.UserLoc("", 0, "", "")
    hint = (f"{settings[0]} (torch's own hint" + (f"; or {settings[1]}" if len(settings) > 1 else "")
            + f"): the graph then captures {what} instead of breaking") if settings else ""
    return [ev.GraphBreak(file=where.file, user_line=where.line,
                          reason=f"{what}{NOT_CAPTURED}",
                          hints=(hint,) if hint else (), user_stack=stack, **common)]


# convert_frame's record of a frame it gave up on, the successor of 2.4-2.7's "Graph break:
# skip:" (read in 2.11.0's, 2.14.1's and 2.15.0's convert_frame.py: a soft failure that
# symbolic_convert did not log, with exc_info): "Graph break: torch.compile cannot properly
# resume from this graph break, which results in a skip.", then f"torch.compile will skip
# tracing the frame {format_frame_info(code)} and fall back to eager.", "The graph break occurred
# in the following user code:", the user stack, and the exception's traceback
RESUME_SKIP = "torch.compile cannot properly resume from this graph break"
_SKIP_FRAME_RE = re.compile(r"^torch\.compile will skip tracing the frame " + breaks.FRAME_INFO
                            + " and fall back to eager")
_OCCURRED = "The graph break occurred in the following user code:"


def resume_skip(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """convert_frame's record of a frame it skipped at a graph break it could not resume from
    (``RESUME_SKIP``): the break at the user stack's last frame, its reason the exception after
    the record's traceback (cut: none), the frame said skipped (``skipped_frame``)."""
    at = next((i for i, t in enumerate(lines) if t.strip() == _OCCURRED), len(lines))
    tb = next((i for i, t in enumerate(lines) if t.startswith("Traceback (most recent call last)")),
              len(lines))
    stack = user_stack(lines[at + 1:tb]) if at < tb else ()
    where = stack[-1] if stack else ev.UserLoc("", 0, "", "")
    reason = raised_reason(lines[tb + 1:])
    frame = next((m for t in lines[1:3] if (m := _SKIP_FRAME_RE.match(t.strip()))), None)
    # (the releases: read in a 2.9/2.10-era copy of convert_frame.py, 2.11.0, 2.14.1 and 2.15.0;
    # 2.8's not read, so the form does not tell the release)
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=reason,
                          user_stack=stack or tuple(ev.UserLoc(m["file"], 0, m["fn"], "")
                                                    for m in (frame,) if m is not None),
                          skipped_frame=True, **common)]


def graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A graph-break record of any release: ``Graph break in user code at …`` (torch >= 2.6,
    ``textbreaks.graph_break``), the older ``Graph break: … from user code at …``, convert_frame's
    skip (``RESUME_SKIP``), or the warning at a Tensor.item() (``Graph break from
    `Tensor.item()`, consider setting:``)."""
    if lines[0].startswith(OLD_BREAK + RESUME_SKIP):
        return resume_skip(lines, common)
    if lines[0].startswith(OLD_BREAK):
        return old_graph_break(lines, common)
    if CONSIDER_RE.match(lines[0]):
        return consider_setting(lines, common)
    return breaks.graph_break(lines, common)


def torchdynamo(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torchdynamo's records before torch 2.0 that begin with its name: the limit warnings
    (``torchdynamo hit config.cache_size_limit (64)`` with its lines, or ``… hit recompilation
    cache limit`` on one line)."""
    if lines[0].startswith("torchdynamo hit recompilation cache limit"):
        return old_limit(lines, common)
    if lines[0].startswith("torchdynamo hit "):
        return recompile_limit(lines, common)
    return []

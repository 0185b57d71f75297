"""Graph breaks in the TORCH_LOGS text format and in torch's exceptions: the ``Graph break in
user code at …`` record, an ``Unsupported`` as an exception prints it (whole, or its type line
cut by a paste), exc.py's warning of a break, and torch._dynamo.explain()'s report.

Each message parser takes the record's lines and the common event fields and returns events,
as those of ``dyncli.logparse.textmsg`` do. ``graph_break_body`` is shared with the trace
(``dyncli.logparse.trace_map``: its ``dynamo_graph_break_reason`` artifact holds the same
text), so both give one answer. Formats are those of torch 2.14 (symbolic_convert.py,
exc.py). torch's warning of a call it cannot trace is read in ``textbuiltins``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.textmsg import _need
from dyncli.logparse.textstack import FILE_RE, break_site, user_stack

GRAPH_BREAK_RE = re.compile(
    r"^Graph break (?P<dup>\(user stack suppressed[^)]*\) )?in user code at (?P<file>.+):(?P<line>\d{1,9})[ \t]*$")


_GB_LINK_RE = re.compile(r"/gb/gb(?P<code>\d{4})\.html")
_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred"


@dataclass(frozen=True, slots=True)
class BreakBody:
    """The lines of a graph-break message after its first line (text log and trace alike)."""

    reason: str = ""  # "Graph Break Reason: …" (torch's generic wording)
    gb_type: str = ""  # the first unindented line after it: the registry's Gb_type
    gb_code: str = ""  # GB0025, from the documentation link
    explanation: str = ""
    hints: tuple[str, ...] = ()
    stack: tuple[ev.UserLoc, ...] = ()
    debug: str = ""  # "Developer debug context: …" (torch >= 2.7): what broke, in torch's words
    # (function, file, first line) of the frame torch skipped because the break is in a loop
    # (2.11-2.15 chain "graph break in loop" after the break: "frame skipped: fn (F line N)")
    loop_skip: tuple[str, str, int] | None = None


# the debug context's length kept (torch's is one line or a few: "unsupported operator: X")
_DEBUG_MAX = 2000
# symbolic_convert.raise_loop_graph_break (2.11-2.15): the break chained after one in a loop,
# its context f"frame skipped: {format_frame_info(code)}" = "fn (file line N)"
LOOP_GB = "graph break in loop"
# torch's format_frame_info(code), "fn (file line N)": here and in convert_frame's skip record
# ("torch.compile will skip tracing the frame fn (file line N) and fall back to eager")
FRAME_INFO = r"(?P<fn><[^<>]{1,400}>|\S{1,400}) \((?P<file>.{1,4096}) line (?P<line>\d{1,9})\)"
_FRAME_SKIPPED_RE = re.compile("frame skipped: " + FRAME_INFO)


def frame_info(m: re.Match[str] | None) -> tuple[str, str, int] | None:
    """(function, file, first line) of a ``FRAME_INFO`` match; None for no match."""
    return (m["fn"], m["file"], int(m["line"])) if m is not None else None


def graph_break_body(lines: list[str]) -> BreakBody:
    """Reason, torch's graph-break type and code, explanation, hints and user stack.

    Only the first break of the message counts: what follows "another graph break
    occurred" (e.g. torch's "graph break in loop") is a consequence of it. The user stack
    runs from "User code traceback:" to the Python traceback, if any.
    """
    reason, gb_type, code, explanation = "", "", "", ""
    hints: list[str] = []
    debug: list[str] = []  # its lines (torch indents a context's later lines 4 spaces)
    in_debug, debug_len = False, 0
    stack_at, end = len(lines), len(lines)
    primary = True
    in_loop = False  # the chained "graph break in loop", and the frame it skipped
    loop_skip: tuple[str, str, int] | None = None
    for i, text in enumerate(lines):
        body = text.strip()
        if not primary and i < stack_at:
            if body == LOOP_GB:
                in_loop = True
            elif in_loop and body.startswith("Developer debug context:") \
                    and (skip := frame_info(_FRAME_SKIPPED_RE.match(body.split(":", 1)[1].strip()))):
                loop_skip = skip
        if in_debug and body and text.startswith("    ") and i < stack_at:
            if debug_len < _DEBUG_MAX:
                debug.append(body)
                debug_len += len(body) + 1
            continue
        in_debug = False
        if body.startswith("Developer debug context:"):
            if primary and not debug:
                debug.append(body.split(":", 1)[1].strip())
                in_debug, debug_len = True, len(debug[0])
        elif body.startswith("Graph Break Reason:") or (body.startswith("Reason:") and not reason):
            # ("Reason: Unsupported: …" is torch 2.6's wording of the same line)
            reason = body.split(":", 1)[1].strip()
        elif body.startswith(_ANOTHER_BREAK):
            primary = False
        elif body.startswith("Explanation:"):
            explanation = explanation or body.split(":", 1)[1].strip()
        elif body.startswith("Hint:"):
            if primary:
                hints.append(body.split(":", 1)[1].strip())
        elif body.startswith(("User code traceback:", "User Stack", "from user code")):
            stack_at = i + 1
        elif body.startswith("Traceback (most recent call last)") and i >= stack_at:
            end = i
            break
        elif "/gb/gb" in body and not code:
            link = _GB_LINK_RE.search(body)
            code = f"GB{link['code']}" if link else ""
        elif primary and reason and not gb_type and body and not text.startswith(" ") \
                and i < stack_at:
            gb_type = body
    if gb_type == LOOP_GB:  # (chained after a UserError, not an Unsupported: the break itself)
        in_loop = True
        loop_skip = frame_info(_FRAME_SKIPPED_RE.match(" ".join(debug)))
    return BreakBody(reason=reason, gb_type=gb_type, gb_code=code, explanation=explanation,
                     hints=tuple(hints), stack=user_stack(lines[stack_at:end]),
                     debug=" ".join(debug)[:_DEBUG_MAX],
                     loop_skip=loop_skip or (("", "", 0) if in_loop else None))


def graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Graph break in user code at FILE:LINE`` + reason, explanation, hints, user stack."""
    m = _need(GRAPH_BREAK_RE.match(lines[0]), "graph break")
    b = graph_break_body(lines[1:])
    return [ev.GraphBreak(file=m["file"], user_line=int(m["line"]), reason=b.gb_type or b.reason,
                          explanation=b.explanation, hints=b.hints, user_stack=b.stack,
                          duplicate=bool(m["dup"]), gb_type=b.gb_type, gb_code=b.gb_code,
                          debug=b.debug, releases=ev.FORM_NEW, **common),
            *loop_skipped(b, common, m["file"], int(m["line"]))]


def loop_skipped(b: BreakBody, common: dict[str, Any], file: str = "",
                 line: int = 0) -> list[ev.Event]:
    """The frame torch skipped because the break ``b`` (at ``file``:``line``) is in a loop
    (2.11-2.15's chained "graph break in loop"), as 2.0-2.10's own record of it is read
    (``ev.LoopSkip``; the break's line is the frame's where it is in the frame's file, not in a
    call it inlined); [] for any other break."""
    if b.loop_skip is None:
        return []
    fn, skipped, first = b.loop_skip
    return [ev.LoopSkip(function=fn, file=skipped, first_line=first or None, chained=True,
                        user_line=line if line and skipped and file == skipped else None,
                        **common)]


_FX_FILE_RE = re.compile(r"^\s{0,40}# File: (?P<file>.{1,1024}?):(?P<line>\d{1,9}) in "
                         r"(?P<fn>[^,]{1,200})(?:, code: (?P<code>.{0,1024}))?$")
_EXECUTING_RE = re.compile(r"^\s{0,40}While executing %(?P<node>\w{1,200}) ")
_EXC_PARTS = ("Explanation:", "Hint:", "Developer debug context:")


# convert_frame.raise_unimplemented_cache_limit_exceeded (2.12-2.15): the recompile limit as
# an Unsupported (GB0039), which fullgraph=True re-raises as FailOnRecompileLimitHit: a limit
# hit, not a graph break (torchtitan#3898 read it as a break "to move out")
_LIMIT_GB = "Dynamo recompile limit exceeded"
_LIMIT_SET_RE = re.compile(r"exceeding the (?P<name>\w{1,80}) cache size limit "
                           r"\(currently set to (?P<limit>\d{1,9})\)")
_LIMIT_TYPE_RE = re.compile(r"Limit type: (?P<name>\w{1,80})")


def _limit_exceeded(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The recompile limit torch raised as an Unsupported: the limit's name and value from
    its Explanation (``… exceeding the recompile_limit cache size limit (currently set to
    8)``) or its debug context (``Limit type: recompile_limit``); the function is not named."""
    text = " ".join(lines)
    m = _LIMIT_SET_RE.search(text)
    t = _LIMIT_TYPE_RE.search(text)
    name = (m["name"] if m else "") or (t["name"] if t else "") or "recompile_limit"
    return [ev.RecompileLimit(limit_name=name, limit=m["limit"] if m else "", partial=True,
                              **common)]


# the head unsupported_break's first line keeps where the exception's class was qualified:
# Python prints a traceback's last line so (and pytest's summary, a wrapper quoting it), never
# torch's own records (their Unsupported is after "Reason: " or inside a record), so the break
# was raised, not logged: fullgraph=True, torch._dynamo.error_on_graph_break(True) (2.9 on) or
# a strict export turn every graph break into this exception, and the program stopped on it
RAISED_UNSUPPORTED = "torch._dynamo.exc.Unsupported: "
# torch 2.1-2.6's UserError for a Python branch on a tensor's value where no graph break may be
# (fullgraph=True, export, a function dynamo inlines: symbolic_convert.generic_jump, 2.1.0 and
# 2.6.0 read; 2.7 replaced it by "Data-dependent branching"), read as that break, raised
# (textforeign_messages says why), and given the branch's fix (diagnose.advice)
CONTROL_FLOW = "Dynamic control flow is not supported at the moment."


def unsupported_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A graph break's message as an exception prints it (``Unsupported: Failed to trace
    builtin operator`` with its ``Explanation:`` and ``Hint:`` lines and torch's gb link;
    ``torch._dynamo.exc.Unsupported: call_method …`` at the end of a traceback: fullgraph=True
    raised it, ``raised``), and its user stack where ``from user code:`` follows."""
    raised = lines[0].startswith(RAISED_UNSUPPORTED)
    first = lines[0].split("Unsupported: ", 1)[1].strip()
    if first.startswith(_LIMIT_GB):
        return _limit_exceeded(lines, common)
    b = graph_break_body(lines[1:])
    where = break_site(b.stack)
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=first[:300],
                          explanation=b.explanation, hints=b.hints, gb_type=first[:300],
                          gb_code=b.gb_code, user_stack=b.stack, debug=b.debug, raised=raised,
                          **common)]


# torch's parts of a graph-break message after its Explanation (exc.py's
# format_graph_break_message, 2.7-2.15): "  Hint: …" (none where the registry has no hint)
# and "  Developer debug context: …" (always, even empty)
_AFTER_EXPLANATION = ("Hint:", "Developer debug context:")
CUT_TYPE = "a graph break (its type line is not in the paste)"
# a traceback the paste cut in dynamo's ``unimplemented`` (exc.py: unimplemented 2.0-2.6 and
# 2.9-2.15, unimplemented_v2 2.7-2.8, unimplemented_with_warning), which raises Unsupported:
# a graph break, raised to the program (only fullgraph=True, export or error_on_graph_break let
# one out of the compile), its message past the end of the paste (speech-to-speech#27)
UNIMPLEMENTED_CUT = ("a graph break (the paste ends in dynamo's unimplemented, which raises it, "
                     "before its message)")
# a traceback whose outermost frame is dynamo's break_graph_if_unsupported wrapper
# (symbolic_convert.py): the exception was caught there, where dynamo catches a graph break's
# Unsupported, and the traceback is torch's log of it (2.0's log.debug("break_graph_if_unsupported
# triggered compile", exc_info=True) under config.log_level = DEBUG, pytorch#94795: training went
# on), its exception cut by the paste. A program's uncaught exception prints its traceback from
# the program's own outermost frame, never from inside torch's tracer
LOGGED_CUT = ("a graph break torch logged (its traceback begins in dynamo's "
              "break_graph_if_unsupported, which caught it and went on; the paste ends before "
              "its exception)")
# pytest's report of a raised graph break pasted from dynamo's "from user code:" on: its user
# stack, dynamo's closing line, then pytest's "…/torch/_dynamo/eval_frame.py:1034: Unsupported"
# naming the exception's class where it was raised (pytorch#175875); its message is above
MESSAGE_ABOVE = ("a graph break (pytest names its exception, torch._dynamo.exc.Unsupported; "
                 "its message is above the paste)")


# output_graph.py's warning where the backend (AOTAutograd) raised one of fake tensors'
# exceptions it may fall back from (DataDependentOutputException, DynamicOutputShapeException,
# UnsupportedOperatorException, UnsupportedFakeTensorException) on the graph dynamo gave it:
# "Backend compiler failed with a fake tensor exception at" + the frame where the graph ended +
# "Adding a graph break." (exc.unimplemented_with_warning; torch 2.3's words, torchrec#1888's
# log; 2.15 words it as a graph-break type of its own): a graph break at that frame. The
# exception, which names the op, is in the graph_breaks record only
FAKE_BACKEND = "Backend compiler failed with a fake tensor exception"


def fake_backend_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The break torch added where the backend raised a fake tensor exception
    (``FAKE_BACKEND``), at the frame its message names."""
    stack = user_stack(lines[1:])
    where = break_site(stack)
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=FAKE_BACKEND,
                          user_stack=stack, **common)]


# higher_order_ops.py's record where dynamo could not trace the body of a higher-order call (a
# user's autograd.Function, torch.utils.checkpoint, wrap) into one graph: "speculate_subgraph:
# while introspecting {what}, we were unable to trace function `{fn}` into a single graph. This
# means that Dynamo was unable to prove safety for this API and will fall back to eager-mode
# PyTorch, which could lead to a slowdown." (2.1-2.2 at WARNING, then log.exception of the
# Unsupported: flash-attention#596, pytorch#93468; 2.15 at INFO). dynamo then raises that
# Unsupported: a graph break at the call (its place in the graph_breaks record, not here)
SPECULATED = "speculate_subgraph: "
HOP_LOGGER = b"higher_order_ops"
_SPECULATED_RE = re.compile(r"^speculate_subgraph: while introspecting (?P<what>.{1,200}?), we were "
                            r"unable to trace function `(?P<fn>[^`]{1,200})` into a single graph")


def speculated(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The graph break dynamo's fallback from a higher-order call's body makes
    (``SPECULATED``): its place is not in the record."""
    m = _SPECULATED_RE.match(lines[0].strip())
    if m is None:
        return []
    reason = (f"{SPECULATED}dynamo could not trace `{m['fn']}` of {m['what']} into one graph, "
              "and runs that call eagerly")
    return [ev.GraphBreak(file="", user_line=0, reason=reason, partial=True, **common)]


def cut_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch's graph-break message as an exception prints it, its type line cut: the paste
    begins at torch's ``  Explanation: …`` (vllm-ascend#5145: a vLLM worker's error, its excerpt
    begun there). Torch's beyond doubt only with a second of torch's parts under it (a ``Hint:``
    or its ``Developer debug context:``: format_graph_break_message writes the three in this
    order, two spaces in); an Explanation line alone is not read. Its place where ``from user
    code:`` and its stack follow; the type is said to be missing (the explanation is kept).
    2.12-2.15's recompile limit, raised in the same form, is a limit (its Explanation says so),
    not a break."""
    if not any(t.strip().startswith(_AFTER_EXPLANATION) for t in lines[1:]):
        raise ValueError("an Explanation line without torch's other parts")
    if _LIMIT_SET_RE.search(" ".join(lines)):
        return _limit_exceeded(lines, common)
    b = graph_break_body(lines)
    where = break_site(b.stack)
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=CUT_TYPE,
                          explanation=b.explanation, hints=b.hints, gb_code=b.gb_code,
                          user_stack=b.stack, debug=b.debug, partial=not b.stack, **common)]


def exc_warning(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch's graph-break warning from ``_dynamo/exc.py`` (``unimplemented(log_warning=True)``,
    torch 2.7-2.14; prime-rl#999: "Backend compiler exception", inductor failing on a
    ``.item()``): its type, ``  Explanation: …``, ``  Hint: …``, ``  Developer debug context:
    …``. Its place, when the message shows the FX node that failed (``While executing %item``),
    is the ``# File:`` comment above that node's line in the graph printed with it; otherwise
    the log does not show it. A paste that begins inside the message keeps what it has; one
    with none of those parts is not read as a break."""
    if not any(t.strip().startswith(_EXC_PARTS) for t in lines):
        raise ValueError("an exc.py warning without its explanation")
    first = lines[0].strip()
    gb_type = "" if first.startswith((*_EXC_PARTS, "While executing")) else first
    b = graph_break_body(lines)  # (its explanation and hints; the type is the first line)
    where = ev.UserLoc("", 0)
    node = next((m["node"] for t in lines if (m := _EXECUTING_RE.match(t))), None)
    if node is not None:
        defined = re.compile(rf"^\s{{0,40}}{re.escape(node)}(?::[^=]{{0,200}})? = ")
        at = next((i for i, t in enumerate(lines) if defined.match(t)), None)
        found = next((m for t in reversed(lines[:at]) if (m := _FX_FILE_RE.match(t))), None) \
            if at is not None else None
        if found is not None:
            where = ev.UserLoc(found["file"], int(found["line"]), found["fn"].strip(),
                               (found["code"] or "").strip())
    return [ev.GraphBreak(file=where.file, user_line=where.line,
                          reason=gb_type or b.explanation or "a graph break (its type is not in the log)",
                          explanation=b.explanation, hints=b.hints,
                          user_stack=(where,) if where.file else (), gb_type=gb_type,
                          debug=b.debug, **common)]


# torch._dynamo.explain()'s report (ExplainOutput.__str__, backends/debugging.py: 2.1-2.15):
# "Break Reasons:", then per break "  Break Reason N:", "    Reason: …", "    User Stack:" and a
# "<FrameSummary file F, line N in fn>" per frame; torchdynamo's of 2022: " Break reasons:",
# then "N. reason" and its 'File "F", line N, in fn' lines (torchdynamo#1100, fairseq)
EXPLAIN_HEADS = ("Break Reasons:", "Break reasons:")
_EXPLAIN_REASON_RE = re.compile(r"^\s{0,12}(?:Reason: |\d{1,4}\. )(?P<reason>.{0,2000}?)\s*$")
_FRAME_SUMMARY_RE = re.compile(r"^\s{0,16}<FrameSummary file (?P<file>.{1,4096}), line "
                               r"(?P<line>\d{1,9}) in (?P<fn>[^>]{1,400})>\s*$")
_MAX_EXPLAINED = 256
# the counts at the report's head (ExplainOutput.__str__: "Graph Count: {n}", "Graph Break
# Count: {n}", "Op Count: {n}", 2.1-2.15)
_EXPLAIN_COUNT_RE = re.compile(r"^\s{0,12}(?P<what>Graph Count|Graph Break Count|Op Count): "
                               r"(?P<n>\d{1,9})\s{0,40}$")
_EXPLAIN_COUNTED = {"Graph Count": "graphs", "Graph Break Count": "breaks"}


def explain_count(text: str, common: dict[str, Any]) -> list[ev.Event] | None:
    """The count of an explain() report's head line (``ev.ExplainCount``; none for its op
    count), or None where ``text`` is no such line."""
    m = _EXPLAIN_COUNT_RE.match(text)
    if m is None:
        return None
    what = _EXPLAIN_COUNTED.get(m["what"])
    return [ev.ExplainCount(what=what, count=int(m["n"]), **common)] if what else []


def explained_breaks(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """One graph break per reason of torch._dynamo.explain()'s report, placed at the last
    frame of its user stack (torch's own order: the innermost last). The report's counts are
    not compiles: explain() compiles the function again to count them."""
    out: list[ev.Event] = []
    reason: str | None = None
    stack: list[ev.UserLoc] = []

    def done() -> None:
        if reason is not None and len(out) < _MAX_EXPLAINED:
            at = stack[-1] if stack else ev.UserLoc("", 0)
            out.append(ev.GraphBreak(file=at.file, user_line=at.line, reason=reason,
                                     user_stack=tuple(stack), **common))

    for text in lines[1:]:
        m = _EXPLAIN_REASON_RE.match(text)
        if m is not None and not text.strip().startswith("File "):
            done()
            reason, stack = m["reason"] or "(no reason given)", []
            continue
        f = _FRAME_SUMMARY_RE.match(text) or FILE_RE.match(text)
        if f is not None and reason is not None:
            stack.append(ev.UserLoc(f["file"], int(f["line"]), f["fn"].strip()))
    done()
    return out

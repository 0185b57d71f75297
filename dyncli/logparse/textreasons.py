"""Multi-line records of the TORCH_LOGS text format: recompiles, graph breaks, recompile
limits and constraint violations, with the user stacks they carry.

Each message parser takes the record's lines and the common event fields and returns events,
as those of ``dyncli.logparse.textmsg`` do. ``user_stack``, ``guard_failure`` and
``graph_break_body`` are shared with the trace (``dyncli.logparse.trace_map``: its
``recompile_reasons`` and ``dynamo_graph_break_reason`` artifacts hold the same text), so
both give one answer. Formats are those of torch 2.14 (torch/_dynamo/guards.py,
convert_frame.py, symbolic_convert.py, exc.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from dyncli.logparse import events as ev
from dyncli.logparse.guardtext import (
    DUCK_NOTE,
    PARAM_HINT,
    UNKNOWN_ORIGIN_RE,
    comment_of,
    guard_part,
    split_failed,
)
from dyncli.logparse.textmsg import _need, parse_sloc
from dyncli.logparse.textpaste import clean, unlink

# Patterns ending in "\s*$" after a free-form group are quadratic in a run of blanks (each
# position re-scans the run); these take the group up to the end and strip it in code.
# (" in FILE:LINE" cut from a paste too: sglang#23428's "Recompiling function f")
RECOMPILING_RE = re.compile(r"^Recompiling function (?P<fn>\S+)(?: in (?P<where>.+))?\s*$")
FILE_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d{1,9}), in (?P<fn>.+)$')
GRAPH_BREAK_RE = re.compile(
    r"^Graph break (?P<dup>\(user stack suppressed[^)]*\) )?in user code at (?P<file>.+):(?P<line>\d{1,9})[ \t]*$")
# "torch._dynamo hit config.recompile_limit (8)"; torchdynamo's before 2.0: "torchdynamo hit …"
LIMIT_RE = re.compile(r"^torch(?:\._dynamo|dynamo) hit config\.(?P<name>\w+) \((?P<limit>[^)]*)(?:\)|$)")
LIMIT_FN_RE = re.compile(r"^\s*function: '(?P<fn>[^']*)' \((?P<file>.+):(?P<line>\d{1,9})\)")
_YOU_MARKED = (" as dynamic but your code specialized it to be a constant (", "You marked ")
_INFERRED = (" was inferred to be a constant (", "Not all values of ")
_RELAXED = "RelaxedUnspecConstraint("


def user_stack(lines: list[str]) -> tuple[ev.UserLoc, ...]:
    """``File "f", line n, in fn`` + code lines → UserLocs (code = the line after)."""
    out: list[ev.UserLoc] = []
    pending: re.Match[str] | None = None
    for text in lines:
        fm = FILE_RE.match(text)
        if fm is not None:
            if pending is not None:
                out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip()))
            pending = fm
        elif pending is not None and text.strip() and not set(text.strip()) <= {"^", "~"}:
            out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip(),
                                  text.strip()))
            pending = None
    if pending is not None:
        out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip()))
    return tuple(out)


def recompiling(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Recompiling function F in FILE:LINE`` + ``- 0/0: reason`` lines + user stack.

    torch 2.0's tuple names the file without a line; a path an editor made a markdown link
    (``in [/a/b.py:38](https://…)``) is read as the path."""
    m = _need(RECOMPILING_RE.match(unlink(lines[0])), "Recompiling")
    where = (m["where"] or "").rstrip(" \t")
    file, _, line = where.rpartition(":")
    if not (line.isdigit() and len(line) <= 9 and file):
        file, line = where, ""
    failures, stack, entries = recompile_body(lines[1:])
    return [ev.Recompile(function=m["fn"], file=file, first_line=int(line) if line else None,
                         failures=failures, user_stack=stack, entries=entries, **common)]


# eval_frame.py's fail_callback under torch.compiler.set_stance("fail_on_recompile") (2.6 on):
# "Detected recompile when torch.compile stance is 'fail_on_recompile'", from 2.9 with ". filename:
# '…', function name: '…', line number: N", from 2.15 with torch's guard failures under it
# (pytorch#139202, #163500, #165445): a recompile the stance refused, the run stopped there
STANCE_RE = re.compile(r"^(?:[\w.]{0,100}Error: )?Detected recompile when torch\.compile stance is "
                       r"'fail_on_recompile'(?:\. filename: '(?P<file>[^']{1,4096})', function name: "
                       r"'(?P<fn>[^']{1,400})', line number: (?P<line>\d{1,9}))?")


def stance_recompile(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The recompile ``fail_on_recompile`` refused, with the function and the guard failures
    where torch's error gives them."""
    m = _need(STANCE_RE.match(lines[0].strip()), "fail_on_recompile")
    failures, stack, entries = recompile_body(lines[1:])
    return [ev.Recompile(function=m["fn"] or "", file=m["file"] or "",
                         first_line=int(m["line"]) if m["line"] else None, failures=failures,
                         user_stack=stack, entries=entries, refused=True, **common)]


def recompile_body(lines: list[str]) -> tuple[tuple[ev.GuardFailure, ...], tuple[ev.UserLoc, ...], int]:
    """The guard failures, the user stack and the number of ``guard N failures:`` groups
    (recompiles_verbose: one per cache entry) of a recompile message's lines after its first."""
    failures: list[ev.GuardFailure] = []
    stack_lines: list[str] = []
    in_stack = False
    groups = 0
    empty = False  # a blank message line after the header: torch 2.4's empty reason
    for text in lines:
        # "    - 0/0: reason" and "    - User stack trace:" are items; "    -   File …" and
        # "    -     code" (deeper indent) belong to the stack of the item before them.
        body = text.strip()
        empty = empty or (not body and not failures and not in_stack)
        top = True
        if body.startswith("- "):
            body, top = body[2:], not body[2:].startswith(" ")
            body = body.strip()
        if top and body.startswith("User stack trace:"):
            in_stack = True
            continue
        if top and body.startswith("#") and failures and not in_stack:
            # the guard's comment a paste wrapped onto lines of its own ("# due to 0/1
            # specialization in the framework;" / "# to avoid …", sglang#23428)
            prev = failures[-1]
            failures[-1] = guard_failure(prev.failed, f"{prev.reason}  {body}")
            continue
        # ("- 0/0: " with nothing after it is entry 0/0 and no guard: torch 2.5-2.9's backend
        # mismatch, pytorch#154707; split_failed reads the entry alone)
        failed, reason = split_failed(body) if top else ("", body)
        groups += top and body.startswith("guard ") and body.endswith(" failures:")
        # (headers such as "triggered by the following guard failure(s):" or, with
        # recompiles_verbose, "guard 0 failures:" end with a colon and are not reasons; nor
        # is torch's hint "The following environment variable would enable dynamic
        # compilation to start, avoiding this recompile: …" of torch 2.8 dev)
        if failed or (top and body and not in_stack and not body.endswith(":")
                      and not body.startswith(TORCH_HINT)):
            # torch < 2.5 printed the reason without the "0/0: " of the failed cache entry
            in_stack = False
            failures.append(guard_failure(failed, reason))
        elif in_stack:
            stack_lines.append(body)
    if empty and not failures:  # torch wrote the reason, and it was empty (guardtext.NO_GUARD)
        failures.append(ev.GuardFailure(failed="", reason=""))
    return tuple(failures), user_stack(stack_lines), groups


TORCH_HINT = "The following environment variable would enable dynamic compilation"
_GB_LINK_RE = re.compile(r"/gb/gb(?P<code>\d{4})\.html")
_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred"


def guard_failure(failed: str, reason: str) -> ev.GuardFailure:
    """One recompile reason (``2 <= x.size()[0] <= 8  # code  # file:line in fn (…)``) split
    into the guard, the user location of its comment and torch's "first use" note.

    Shared by the text log and the trace (``recompile_reasons``), so both give one answer.
    torch >= 2.14 appends, to a guard it blames on 0/1 specialization, "(user code shown is
    first use of this value--…) and <code>  # <file:line> (<framework>)": the note is
    reported as ``first_use``, never folded into the guard or the code, and the user line
    is the one after "and" (``guardtext.user_comment``). A pasted reason's HTML entities and
    markdown links are undone first.
    """
    comment, note = comment_of(clean(reason))
    duck = DUCK_NOTE in comment
    unknown = UNKNOWN_ORIGIN_RE.search(comment) if comment else None
    user = parse_sloc(comment)[0] if comment and not duck and unknown is None else None
    return ev.GuardFailure(failed=failed, reason=clean(guard_part(reason)).rstrip(), user=user,
                           first_use=note, duck=duck,
                           unknown_origin=unknown.group(0) if unknown else "")


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


# the debug context's length kept (torch's is one line or a few: "unsupported operator: X")
_DEBUG_MAX = 2000


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
    for i, text in enumerate(lines):
        body = text.strip()
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
        elif reason and not gb_type and body and not text.startswith(" ") and i < stack_at:
            gb_type = body
    return BreakBody(reason=reason, gb_type=gb_type, gb_code=code, explanation=explanation,
                     hints=tuple(hints), stack=user_stack(lines[stack_at:end]),
                     debug=" ".join(debug)[:_DEBUG_MAX])


def graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Graph break in user code at FILE:LINE`` + reason, explanation, hints, user stack."""
    m = _need(GRAPH_BREAK_RE.match(lines[0]), "graph break")
    b = graph_break_body(lines[1:])
    return [ev.GraphBreak(file=m["file"], user_line=int(m["line"]), reason=b.gb_type or b.reason,
                          explanation=b.explanation, hints=b.hints, user_stack=b.stack,
                          duplicate=bool(m["dup"]), gb_type=b.gb_type, gb_code=b.gb_code,
                          debug=b.debug, releases=ev.FORM_NEW, **common)]


_FX_FILE_RE = re.compile(r"^\s{0,40}# File: (?P<file>.{1,1024}?):(?P<line>\d{1,9}) in "
                         r"(?P<fn>[^,]{1,200})(?:, code: (?P<code>.{0,1024}))?$")
_EXECUTING_RE = re.compile(r"^\s{0,40}While executing %(?P<node>\w{1,200}) ")
_EXC_PARTS = ("Explanation:", "Hint:", "Developer debug context:")


# (a paste may cut the message before its closing backtick: sageattention#337's second copy)
# (torch names a function whose module it cannot find "<unknown module>.list.copy": a method of
# a Python builtin type, reached from matplotlib's code in a compiled step)
_BUILTIN_RE = re.compile(r"(?:unsupported builtin (?P<a>[\w.]{1,300}?)\.(?:\s|$)"
                         r"|trace the builtin `(?P<b>(?:<unknown module>)?[^`\s]{1,300}))")
_UNKNOWN_MODULE = "<unknown module>."


def warned_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch's Python warning at a call it cannot trace (``UserWarning: Graph break due to
    unsupported builtin X. …``, torch 2.5; ``UserWarning: Dynamo does not know how to trace the
    builtin `X.` …``, 2.6 on): a graph break at a place the warning does not name, and torch's
    hint (a custom op, or allow_in_graph if it is traceable)."""
    name = builtin_name(" ".join(t.strip() for t in lines))
    if name is None:
        reason = lines[0].split(". ", 1)[0].strip()
        return [ev.GraphBreak(file="", user_line=0, reason=reason[:300], **common)]
    return [ev.GraphBreak(file="", user_line=0, reason=_WARNED.format(name),
                          hints=(builtin_hint(name),), **common)]


# warned_break's reason, and its reader (diagnose merges the warning into the exception that
# names the same builtin: under fullgraph=True torch prints both for one break)
_WARNED = "a call of {}, a builtin or C/C++ function dynamo cannot trace"
_WARNED_RE = re.compile(r"^a call of ((?:<unknown module>\.)?\S{1,300}), a builtin or C/C\+\+ "
                        r"function dynamo cannot trace$")


def warned_builtin(reason: str) -> str | None:
    """The builtin of a break ``warned_break`` read (its reason), or None."""
    m = _WARNED_RE.match(reason)
    return m[1] if m else None


def builtin_name(text: str) -> str | None:
    """The builtin torch's words say it cannot trace (``zlib.crc32``), or None."""
    m = _BUILTIN_RE.search(text)
    return (m["a"] or m["b"]).rstrip(".") if m else None


def builtin_hint(name: str) -> str:
    """torch's hints for a builtin it cannot trace, as one fix; for torch's own private C
    functions (``torch._C._dynamo.guards.assert_size_stride``, pytorch#154536: reached from
    inductor's cached output code, never called by the user) a report to torch instead, and
    for DDP's buffer broadcast the settings that keep it out of the compiled forward."""
    if name.startswith("torch._C._distributed_c10d") and name.endswith("._broadcast_coalesced"):
        return DDP_BUFFERS_FIX
    if name.startswith(_UNKNOWN_MODULE) or name.startswith("builtins."):
        # (torch's first hint for a Python builtin: file an issue; no custom op wraps it)
        short = name.removeprefix(_UNKNOWN_MODULE).removeprefix("builtins.")
        return (f"{short} is Python's own (a builtin dynamo does not trace there): torch's hint "
                "is to report it to PyTorch; meanwhile call it outside the compiled function, or "
                "compile less of the code that reaches it")
    if name.startswith("torch._C.") or name.startswith("torch._"):
        return (f"{name} is torch's own, reached from code torch generated or called, not a "
                "call of yours to move or wrap: report it to torch with a repro; where it "
                "appears only on a second run, when torch reuses its cached compiled code, "
                "TORCHINDUCTOR_FX_GRAPH_CACHE=0 avoided it (pytorch#154536)")
    return (f"wrap {name} in a custom operator (torch.library.custom_op) or, if it is "
            f"traceable, torch.compiler.allow_in_graph({name}) (torch's own hint); or call it "
            "outside the compiled function")


# DDP's forward broadcasts the module's buffers from rank 0 (_pre_forward -> _sync_buffers ->
# dist._broadcast_coalesced) when the DDP wrapper itself is compiled (pytorch#141827, #139440).
# Measured with 2 gloo ranks, torch 2.15 (tests/integration/test_ddp_fixes.py): the break is gone
# with broadcast_buffers=False, with forward_sync_buffers=False (2.15's name; broadcast_buffers
# is deprecated there), and with DDP(torch.compile(model)).
DDP_BUFFERS_FIX = (
    "DDP's forward broadcasts the module's buffers (BatchNorm's running statistics, say) from "
    "rank 0 at every call, a collective dynamo cannot trace (pytorch#141827): "
    "DistributedDataParallel(model, broadcast_buffers=False) where the buffers need not match "
    "across ranks (torch 2.15 names it forward_sync_buffers=False), or compile the module and "
    "wrap that in DDP, DDP(torch.compile(model)), which has no break but one backward graph, so "
    "DDP's gradient all-reduce no longer overlaps the backward bucket by bucket")


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
    where = b.stack[-1] if b.stack else ev.UserLoc("", 0, "", "")
    return [ev.GraphBreak(file=where.file, user_line=where.line, reason=first[:300],
                          explanation=b.explanation, hints=b.hints, gb_type=first[:300],
                          gb_code=b.gb_code, user_stack=b.stack, debug=b.debug, raised=raised,
                          **common)]


# torch's parts of a graph-break message after its Explanation (exc.py's
# format_graph_break_message, 2.7-2.15): "  Hint: …" (none where the registry has no hint)
# and "  Developer debug context: …" (always, even empty)
_AFTER_EXPLANATION = ("Hint:", "Developer debug context:")
CUT_TYPE = "a graph break (its type line is not in the paste)"


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
    where = b.stack[-1] if b.stack else ev.UserLoc("", 0, "", "")
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


def recompile_limit(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``torch._dynamo hit config.recompile_limit (8)`` + function + last reason (torch 2.0 and
    torchdynamo: ``reasons:``)."""
    m = _need(LIMIT_RE.match(lines[0]), "recompile limit")
    body = limit_body(lines[1:])
    return [ev.RecompileLimit(limit_name=m["name"], limit=m["limit"], function=body.function,
                              file=body.file, first_line=body.line, last_reason=body.last,
                              before_2_2=body.before_2_2, reasons_off=body.reasons_off,
                              **common)]


class LimitBody(NamedTuple):
    """What a recompile-limit warning's lines after its first say. ``before_2_2``: the form of
    torchdynamo, torch 2.0 and 2.1 (``reasons:``, or torch 2.1's line asking for
    TORCHDYNAMO_REPORT_GUARD_FAILURES=1), whose default limit was 64; ``reasons_off``: that
    line, which stands where the reason would (torch 2.1 printed none unless asked)."""

    function: str
    file: str
    line: int | None
    last: str
    before_2_2: bool
    reasons_off: bool


# torch 2.1's warning without TORCHDYNAMO_REPORT_GUARD_FAILURES (convert_frame.py): "to diagnose
# recompilation issues, set env variable TORCHDYNAMO_REPORT_GUARD_FAILURES=1 and also see …"
_REPORT_OFF = "set env variable TORCHDYNAMO_REPORT_GUARD_FAILURES=1"


def limit_body(lines: list[str]) -> LimitBody:
    """The function, its file and line, the last reason and the release's form of a
    recompile-limit warning's lines after its first."""
    fn, file, line, last = "", "", None, ""
    old = off = False
    for text in lines:
        fm = LIMIT_FN_RE.match(unlink(text))
        body = text.strip()
        if fm is not None:
            fn, file, line = fm["fn"], fm["file"], int(fm["line"])
        elif body.startswith("last reason:"):
            last = body.split("last reason:", 1)[1].strip()
        elif body.startswith("reasons:"):  # torch 2.0 and torchdynamo: the reason, or a list
            last = last_listed(body.split("reasons:", 1)[1].strip())
            old = True
        elif _REPORT_OFF in body:
            old = off = True
    return LimitBody(fn, file, line, last, old, off)


_QUOTED_RE = re.compile(r"'((?:[^'\\]|\\.){0,4096})'|\"((?:[^\"\\]|\\.){0,4096})\"")


def last_listed(text: str) -> str:
    """The last guard of torch's list of failures (``[['a'], ['b']]``, ``["a", "b"]``), cut or
    not; the text itself when it is no list."""
    if not text.startswith("["):
        return text
    value = literal(text)
    while isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, str):
        return value
    found = _QUOTED_RE.findall(text)  # a list cut short by the paste: its last whole item
    return next((a or b for a, b in reversed(found) if a or b), text)


def literal(text: str) -> object:
    """A Python literal as torch printed it (a repr), or None; bounded in size."""
    if len(text) > 100_000:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


# an item's head: torch's "  - ", under a paste's markdown quote ("> Not all values …",
# Samsung/TICO#248) or a list's
_ITEM_HEAD_RE = re.compile(r"^(?:> ?){0,8}[-*]? ?")


def constraint_violations(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """Every ``You marked … specialized it to be a constant (8)`` in an error record."""
    stack_from = next((i for i, t in enumerate(lines) if t.strip().startswith("User stack")), None)
    user = None
    if stack_from is not None:
        end = next((i for i in range(stack_from + 1, len(lines)) if not lines[i].strip()), len(lines))
        frames = user_stack(lines[stack_from + 1:end])
        user = frames[-1] if frames else None
    out: list[ev.Event] = []
    suggesting = False
    for text in lines:
        if suggesting and (fix := suggested_fix(text)) is not None:
            out.append(ev.SuggestedFix(name=fix[0], value=fix[1], **common))
            continue
        suggesting = text.strip() == SUGGESTED_FIXES
        ranged = range_violation(text)
        if ranged is not None:
            out.append(ev.RangeViolation(message=_ITEM_HEAD_RE.sub("", text.strip(), 1)[:600], user=user,
                                         **ranged, **common))
            continue
        found = _constant(text, *_YOU_MARKED) or _constant(text, *_INFERRED, " are valid because ") \
            or export_specialized(text)
        if found is not None and found[0].startswith(_RELAXED) and found[0].endswith(")"):
            # torch <= 2.6 names the constraint, not the source: RelaxedUnspecConstraint(L['x']…)
            found = (found[0][len(_RELAXED):-1], found[1])
        if found is not None:
            out.append(ev.ConstraintViolation(message=_ITEM_HEAD_RE.sub("", text.strip(), 1),
                                              source=_constrained(found[0]), value=found[1],
                                              user=user, **common))
    if not out and lines and lines[0].startswith("Error while creating guard"):
        # the compile failed making a guard; a paste that stops before torch's error after it
        # (pytorch#141251, #115492) shows only which guard: SHAPE_ENV is the shape guards
        made = next((t.split(":", 1)[1].strip() for t in lines[1:12]
                     if t.strip().startswith("Create Function:")), "")
        if not made and any(t.strip() == "Source: shape_env" for t in lines[1:12]):
            made = "SHAPE_ENV"  # (a paste cut before the Create Function line: pytorch#145587)
        if not made and any("GuardBuilder.SHAPE_ENV" in t or "produce_guards" in t
                            for t in lines[1:60]):
            made = "SHAPE_ENV"  # (the traceback alone: pytorch#133653, #140011)
        out.append(ev.GuardError(create_function=made[:80], **common))
    return out


# an item's first words, where a paste wrapped the line (torch writes each item on one line:
# 2.15 symbolic_shapes.py produce_guards_verbose, "  - " + the message): pytorch#157921 quotes
# "You marked L['x'].size()[0] as dynamic but your code specialized it to be a" and
# "    constant (8192). If you're using mark_dynamic, …" under it
WRAPPED_MARK = "as dynamic but your code"
# the item's words from there to its constant: a wrapped line ends inside them (prose that
# quotes the words goes on in its own: "… but your code specialized it, so export failed")
_MARK_REST = " specialized it to be a constant"


def wrapped_mark(text: str) -> bool:
    """Whether a line is the start of torch's "You marked" item cut by a wrap (its constant on
    a later line), not prose that quotes its words."""
    body = _ITEM_HEAD_RE.sub("", text.strip(), 1)
    at = body.find(WRAPPED_MARK)
    return at >= 0 and body.startswith("You marked ") \
        and _MARK_REST.startswith(body[at + len(WRAPPED_MARK):])


def wrapped_violation(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A constraint violation's item a paste wrapped onto indented lines: joined, then read."""
    return constraint_violations([" ".join(t.strip() for t in lines)], common)


# torch.export's named Dim: "Not all values of seq_len = L['x'].size()[1] in the specified
# range seq_len <= 128 are valid …" (symbolic_shapes' var_with_range; pytorch#140011)
# … and torch 2.15's "You marked seq_len as dynamic but your code specialized it …" (the Dim's
# name where mark_dynamic's item names a source, L['x'].size()[0])
_DIM_NAMED = re.compile(r"^(?:(?:Not all values of |You marked )(?P<name>\w{1,200}) = "
                        r"|You marked (?P<bare>\w{1,200}) as dynamic "
                        r"|(?:solving the guards generated for )?(?P<forced>\w{1,200}) = \S)")
FORCED, HINT_01, HINT_STATIC = "forced", "hint01", "hint_static"


# symbolic_shapes' StrictMinMaxConstraint item (produce_guards: 2.1 :2900, 2.3 :3212, 2.15 :6834):
# "Not all values of {var_with_range} satisfy the generated guard {guard}." where var_with_range
# is "{name} = {source} in the specified range {rendered}" (export's Dim) or "{source} = {source}
# in the specified range …" (mark_dynamic's min/max); 2.1 numbers the items ("  1. "), 2.3 on
# bullets them ("  - "); pytest (tensorrt#2794) and ONNX (onnxscript#2539) print them as given
_RANGE_HEAD = "Not all values of "
_RANGE_MID = " in the specified range"
_RANGE_TAIL = " satisfy the generated guard "
_MAX_GUARD = 600  # characters of a guard kept
_ITEM_LEAD = re.compile(r"\s{0,12}(?:- |\d{1,3}\. )?")  # the item's bullet (2.3 on) or number (2.1)


def range_violation(text: str) -> dict[str, Any] | None:
    """source, dim, range and guard of a StrictMinMaxConstraint item, found with str.find
    (no lazy regex over a hostile line), or None."""
    tail = text.find(_RANGE_TAIL)
    if tail < 0:
        return None
    head = text.rfind(_RANGE_HEAD, 0, tail)
    if head < 0 or _ITEM_LEAD.fullmatch(text[:head]) is None:
        return None  # (the words inside other text, a doc's sentence: not torch's item)
    var = text[head + len(_RANGE_HEAD):tail]
    mid = var.find(_RANGE_MID)
    if mid < 0:
        return None
    named, rendered = var[:mid], var[mid + len(_RANGE_MID):].strip()
    name, sep, source = named.partition(" = ")
    if not sep:
        name, source = "", named
    guard = text[tail + len(_RANGE_TAIL):].strip()
    more = guard.find(" For more information")
    guard = (guard[:more] if more >= 0 else guard).rstrip(".").strip()
    dim = name if name.isidentifier() and name != source else ""
    return {"source": source.strip()[:300], "dim": dim[:100], "range": rendered[:300],
            "guard": guard[:_MAX_GUARD]}


# torch.export's own answer after the items: "Suggested fixes:" then one "  name = value" line
# each (symbolic_shapes' DimConstraints.prettify_results; export's _collect_and_set_constraint
# …): "_b = Dim('_b', min=1, max=32)", "b = 2*_b", "b = 6"
SUGGESTED_FIXES = "Suggested fixes:"
_SUGGESTED_RE = re.compile(r"^\s{1,12}(?P<name>[A-Za-z_]\w{0,99}) = (?P<value>\S.{0,299})$")


def suggested_fix(text: str) -> tuple[str, str] | None:
    """(name, value) of one line of torch's ``Suggested fixes:`` block, or None."""
    m = _SUGGESTED_RE.match(text.rstrip())
    return (m["name"], m["value"].strip()) if m else None


def _constrained(source: str) -> str:
    """The source of a violation's item without torch's dim name and range around it."""
    source = source.split(_RANGE_MID, 1)[0]
    name, sep, rest = source.partition(" = ")
    return rest if sep and name.isidentifier() else source


def export_dim(message: str) -> str | None:
    """The name of torch.export's Dim a violation's item names (``seq_len``), or None."""
    m = _DIM_NAMED.match(message)
    return (m["name"] or m["bare"] or m["forced"]) if m else None


# export's other answers about a Dim (paste hunt 13, pytorch#126127), each "export needs X = V":
# - DimConstraints.prettify_results, under "Specializations unexpectedly required (b, c)!":
#   2.3/2.4 "  - {b} = {source} must be specialized to {V} because the guards generated for it
#   are too complex." (symbolic_shapes.py 2.3 :1691); 2.15 "  - solving the guards generated
#   for {b} = {source} resulted in a specialized value of {V}." (:3840)
# - non_strict_utils' conflicts of a Dim.DYNAMIC hint (2.15 :868, :873; a ValueError under
#   "Found the following conflicts between user-specified ranges and inferred ranges from model
#   tracing:"): "- Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but export
#   0/1 specialized due to hint of {1} for dimension inputs['x'].shape[0]." and "…, but tracing
#   inferred a static shape of {V} for dimension {path}."
# (head, tail before the value, form): found with str.find, never a lazy regex over the line
_EXPORT_FORMS = (
    ("", " must be specialized to ", " because the guards generated for it are too complex",
     FORCED),
    ("solving the guards generated for ", " resulted in a specialized value of ", "", FORCED),
    ("Received user-specified dim hint ", ", but export 0/1 specialized due to hint of ",
     " for dimension ", HINT_01),
    ("Received user-specified dim hint ", ", but tracing inferred a static shape of ",
     " for dimension ", HINT_STATIC),
)
_EXPORT_HEADS = {form: head for head, _, _, form in _EXPORT_FORMS}


def export_specialized(text: str) -> tuple[str, str] | None:
    """(what, value) of one of export's items above: what is ``b = L['x'].size()[0]`` (the
    Dim and its source) or the dimension's path ``inputs['x'].shape[0]``; or None."""
    item = _ITEM_LEAD.match(text)
    rest = text[item.end() if item else 0:].rstrip().rstrip(".")
    for head, mid, tail, form in _EXPORT_FORMS:
        if not rest.startswith(head) or (at := rest.find(mid)) < 0:
            continue
        what, value = rest[len(head):at], rest[at + len(mid):]
        if form == FORCED:
            if tail:
                if not value.endswith(tail):
                    continue
                value = value[:-len(tail)]
            return (what[:300], value[:40]) if what and value.isdigit() else None
        value, sep, path = value.partition(tail)
        return (path[:300], value[:40]) if sep and path and value.lstrip("-").isdigit() else None
    return None


def export_form(message: str) -> str:
    """Which of export's items above a violation's message is (``FORCED``, ``HINT_01``,
    ``HINT_STATIC``), or "" for the others."""
    rest = message.lstrip("- ")
    return next((form for head, mid, _, form in _EXPORT_FORMS
                 if rest.startswith(head) and mid in rest), "")


def _constant(text: str, tail: str, head: str, cut: str = "") -> tuple[str, str] | None:
    """(source, value) of ``<head><source>[<cut>…]<tail><value>)``, found with str.find.

    Replaces lazy regexes (``You marked (.+?) as dynamic … [(](.*)[)]``) that re-scanned the
    rest of the line from every occurrence of their head: quadratic on a hostile line.
    """
    end = text.find(tail)
    if end < 0:
        return None
    start = text.rfind(head, 0, end)
    close = text.find(")", end + len(tail))
    if start < 0 or close < 0:
        return None
    source = text[start + len(head):end]
    if cut:
        at = source.find(cut)
        if at < 0:
            return None
        source = source[:at]
    if not source:
        return None
    return source, text[end + len(tail):close]


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


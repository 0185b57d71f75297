"""Recompile records of the TORCH_LOGS text format: ``Recompiling function …`` with its guard
failures and user stack, the recompile ``fail_on_recompile`` or ``error_on_recompile`` refused,
and the recompile-limit warning (with torch 2.0's and torchdynamo's forms).

Each message parser takes the record's lines and the common event fields and returns events,
as those of ``dyncli.logparse.textmsg`` do. ``guard_failure`` is shared with the trace
(``dyncli.logparse.trace_map``: its ``recompile_reasons`` artifact holds the same text), so
both give one answer. Formats are those of torch 2.14 (torch/_dynamo/guards.py,
convert_frame.py).
"""

from __future__ import annotations

import ast
import re
from typing import Any, NamedTuple

from dyncli.logparse import events as ev
from dyncli.logparse.guardtext import (
    DUCK_NOTE,
    UNKNOWN_ORIGIN_RE,
    comment_of,
    guard_part,
    split_failed,
)
from dyncli.logparse.textmsg import _need, parse_sloc
from dyncli.logparse.textpaste import clean, unlink
from dyncli.logparse.textstack import user_stack

# Patterns ending in "\s*$" after a free-form group are quadratic in a run of blanks (each
# position re-scans the run); these take the group up to the end and strip it in code.
# (" in FILE:LINE" cut from a paste too: sglang#23428's "Recompiling function f")
RECOMPILING_RE = re.compile(r"^Recompiling function (?P<fn>\S+)(?: in (?P<where>.+))?\s*$")


# "torch._dynamo hit config.recompile_limit (8)"; torchdynamo's before 2.0: "torchdynamo hit …"
LIMIT_RE = re.compile(r"^torch(?:\._dynamo|dynamo) hit config\.(?P<name>\w+) \((?P<limit>[^)]*)(?:\)|$)")
LIMIT_FN_RE = re.compile(r"^\s*function: '(?P<fn>[^']*)' \((?P<file>.+):(?P<line>\d{1,9})\)")


def recompiling(lines: list[str], common: dict[str, Any], refused: str = "") -> list[ev.Event]:
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
                         failures=failures, user_stack=stack, entries=entries, refused=refused,
                         **common)]


# torch._dynamo.config.error_on_recompile's "RecompileError: Recompiling function F in
# FILE:LINE" with the guard failures under it (guards.py's get_and_maybe_log_recompilation_
# reasons: the message the recompiles log writes, raised in its place), a traceback's last lines
# or pytest's summary of them (diffusers#11085): torch raised at the guard failure, before the
# recompile, and the run stopped there
ERROR_ON_RECOMPILE = "error_on_recompile"


def recompile_error(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The recompile ``error_on_recompile`` refused: ``recompiling``'s record, no compile of it."""
    return recompiling(lines, common, refused=ERROR_ON_RECOMPILE)


# eval_frame.py's fail_callback under torch.compiler.set_stance("fail_on_recompile") (2.6 on):
# "Detected recompile when torch.compile stance is 'fail_on_recompile'", from 2.9 with ". filename:
# '…', function name: '…', line number: N", from 2.15 with torch's guard failures under it
# (pytorch#139202, #163500, #165445): a recompile the stance refused, the run stopped there
FAIL_ON_RECOMPILE = "fail_on_recompile"
STANCE_RE = re.compile(r"^(?:[\w.]{0,100}Error: )?Detected recompile when torch\.compile stance is "
                       r"'fail_on_recompile'(?:\. filename: '(?P<file>[^']{1,4096})', function name: "
                       r"'(?P<fn>[^']{1,400})', line number: (?P<line>\d{1,9}))?")


# the same error for a function whose entries are precompiled (a compile package's, torch 2.9
# on: pytorch#156433): "Failed on the following precompiled guards: ", then per entry its guard
# tree (TREE_GUARD_MANAGER:, "+- …", "| +- …") and GuardManager.check_verbose's GuardDebugInfo
# ("result=0," then "verbose_code_parts=[\"tensor 'L['x']' size mismatch at index 0. …\"],"),
# whose parts are the failed guards' reasons
PRECOMPILED = "Failed on the following precompiled guards:"
_PRECOMPILED_PARTS_RE = re.compile(r"^verbose_code_parts=(?P<parts>\[.{0,8000}\]),?$")


def _precompiled_failures(lines: list[str]) -> list[ev.GuardFailure]:
    """The failed guards of the precompiled entries' GuardDebugInfo (``result=0``)."""
    out: list[ev.GuardFailure] = []
    failed = False
    for text in lines:
        body = text.strip()
        if body.startswith("result="):
            failed = body.removeprefix("result=").rstrip(",") in ("0", "False")
        elif failed and (m := _PRECOMPILED_PARTS_RE.match(body)) is not None:
            try:
                parts = ast.literal_eval(m["parts"])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            out += [guard_failure("", p) for p in parts if isinstance(p, str) and p.strip()]
    return out


def stance_recompile(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The recompile ``fail_on_recompile`` refused, with the function and the guard failures
    where torch's error gives them (its precompiled entries' too)."""
    m = _need(STANCE_RE.match(lines[0].strip()), "fail_on_recompile")
    at = next((i for i, t in enumerate(lines) if t.strip().startswith(PRECOMPILED)), len(lines))
    failures, stack, entries = recompile_body(lines[1:at])
    failures += tuple(_precompiled_failures(lines[at:]))
    return [ev.Recompile(function=m["fn"] or "", file=m["file"] or "",
                         first_line=int(m["line"]) if m["line"] else None, failures=failures,
                         user_stack=stack, entries=entries, refused=FAIL_ON_RECOMPILE,
                         **common)]


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


# torch._dynamo.optimize(…, guard_fail_fn=F) calls F with a GuardFail(reason, orig_code) for
# each cache entry whose guards failed as torch recompiles the frame (types.py's NamedTuple,
# 2.0-2.15; 2.4.1 guards.py get_and_maybe_log_recompilation_reason, 2.15.0 :6313): a user's
# print of it is its repr, ``GuardFail(reason="tensor 'L['input']' size mismatch at index 0.
# expected 146, actual 149", orig_code=<code object RNNScript at 0x2758840, file "t.py", line
# 12>)`` (pytorch#105279, its code object cut to "…"). Its reason is the recompile reason
# TORCH_LOGS="recompiles" writes (2.5 on behind the entry's compile id, "0/0: …")
GUARD_FAIL = "GuardFail(reason="
_CODE_OBJECT_RE = re.compile(r", orig_code=<code object (?P<fn>[^\s<>,]{1,200}|<[\w.]{1,200}>) "
                             r"at 0x[0-9a-fA-F]{1,16}(?:, file \"(?P<file>[^\"]{1,1024})\", "
                             r"line (?P<line>\d{1,9}))?")
_REASON_CHARS = 4096  # of a printed reason read


def guard_fail(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The recompiles that a run of printed ``GuardFail(reason=…, orig_code=<code object F …>)``
    lines proves, their failures the reasons printed, their function the code object's. At a
    recompile torch calls the hook for each cache entry, newest first: from 2.5 each reason
    names its entry (``0/1: …``, then ``0/0: …``; pytorch#130043), so an entry as new as the
    one before it, or another function, begins the next recompile, whose compile is one past
    its newest entry (2.15.0's print of three calls of sizes 3, 4, 5: ``0/0`` | ``0/1``,
    ``0/0``); 2.1-2.4's reasons name none, and a run of one function is one recompile after one
    entry, at least (2.4.1's print of the same three lines)."""
    parsed: list[tuple[int, str, ev.CompileId | None, str, str, int | None]] = []
    for i, line in enumerate(lines):
        text = line.strip()
        if not text.startswith(GUARD_FAIL):
            continue
        reason, rest = _string_at(text, len(GUARD_FAIL))
        if reason is None:
            continue
        m = _CODE_OBJECT_RE.match(rest)
        entry, _ = split_failed(reason)
        parsed.append((i, reason, ev.CompileId.parse(entry) if entry else None,
                       m["fn"] if m else "", (m["file"] or "") if m else "",
                       int(m["line"]) if m and m["line"] else None))
    if not parsed:
        raise ValueError("no GuardFail reason")
    groups: list[list[tuple[int, str, ev.CompileId | None, str, str, int | None]]] = []
    for item in parsed:
        last = groups[-1][-1] if groups else None
        if last is None or item[3] != last[3] or _newer(item[2], last[2]):
            groups.append([item])
        else:
            groups[-1].append(item)
    out: list[ev.Event] = []
    for group in groups:
        failures, _, _ = recompile_body([f"- {reason}" for _, reason, *_ in group])
        _, _, _, function, file, first = group[0]
        ids = [cid for _, _, cid, *_ in group]
        cid = common.get("compile_id")
        known = [x for x in ids if x is not None and x.frame is not None and x.compile is not None
                 and x.autograd is None]
        numbered = bool(known) and len(known) == len(ids) and len({x.frame for x in known}) == 1
        if numbered:
            cid = ev.CompileId(known[0].frame, max(x.compile or 0 for x in known) + 1)
        # (reasons without entry ids: one recompile's entries or several recompiles' look
        # alike, so the run proves one entry before it, at least: entries=1)
        out.append(ev.Recompile(function=function or "?", file=file, first_line=first,
                                failures=failures, entries=0 if numbered or len(group) == 1 else 1,
                                **{**common, "compile_id": cid,
                                                      "line": common.get("line", 0) + group[0][0]}))
    return out


def _newer(entry: ev.CompileId | None, before: ev.CompileId | None) -> bool:
    """Whether a cache entry printed after ``before`` begins another recompile: of one frame,
    numbered as high or higher (torch lists one recompile's entries newest first)."""
    if entry is None or before is None or entry.frame != before.frame \
            or entry.compile is None or before.compile is None:
        return False
    return entry.compile >= before.compile


def is_guard_fail(text: str) -> bool:
    """Whether ``text`` is a printed GuardFail whose reason is whole (a string literal)."""
    return text.startswith(GUARD_FAIL) and _string_at(text, len(GUARD_FAIL))[0] is not None


def _string_at(text: str, start: int) -> tuple[str | None, str]:
    """The Python string literal (a repr: '…' or "…", backslash escapes) at ``start`` and the
    text after it; (None, "") where none ends within ``_REASON_CHARS``."""
    quote = text[start:start + 1]
    if quote not in ("'", '"'):
        return None, ""
    i, end = start + 1, min(len(text), start + 1 + _REASON_CHARS)
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            value = literal(text[start:i + 1])
            return (value, text[i + 1:]) if isinstance(value, str) else (None, "")
        i += 1
    return None, ""

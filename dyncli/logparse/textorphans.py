"""Records a paste began inside of, lines a record lost its prefix on, and torchdynamo's.

A paste that starts in the middle of a record (issue 33, pattern 3) hands the parser lines
that carry torch's prefix but no record's first line: only the ``function:`` / ``last
reason:`` lines of a recompile-limit warning, only the ``triggered by`` / ``- 0/0: …`` lines of
a recompile, the tail of a graph break. Each still proves something (the limit was hit at
that compile id; that cache entry failed; the frame broke), so ``orphan`` names the kind of
record such a line belongs to and the handlers below read what is left of it, marked
``partial``. Before torch 2.1 the continuation lines of a warning had no prefix at all
(torch 2.0's ``function:`` / ``reasons:`` lines, the user stack of torchdynamo's one-line
graph break); ``continues`` says which unprefixed lines still belong to the open record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.glog import level_of
from dyncli.logparse.textbreaks import LOGGED_CUT, graph_break_body
from dyncli.logparse.textold import CONSIDER_HEAD, consider_setting, raised_reason
from dyncli.logparse.textrecompiles import limit_body, recompile_body
from dyncli.logparse.textstack import FILE_RE, user_stack
from dyncli.logparse.textviolations import constraint_violations

Handler = Callable[[list[str], dict[str, Any]], list[ev.Event]]

# The body lines of a recompile-limit warning, with or without their prefix.
_LIMIT_BODY = re.compile(rb"^\s*(?:function: '|last reason: |reasons: |To log all recompilation "
                         rb"reasons|To diagnose recompilation issues|to diagnose recompilation issues)")
# a markdown quote's marks before a line of a warning quoted whole ("> torch._dynamo hit
# config.recompile_limit (8)", ">    function: 'f' (…)"): the head is read behind them
# (textpaste's bare rule), and so is the body
_QUOTE_RE = re.compile(rb"^(?:>[ \t]?){1,8}")
_RECOMPILE_BODY = (b"triggered by the following guard failure", b"- ")
_VERBOSE_HEAD = re.compile(rb"^guard \d{1,9} failures:")
LIMIT_FN = re.compile(rb"^\s*function: '[^']{0,1024}' \(")


def orphan_recompile(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The failure lines of a recompile whose ``Recompiling function`` line is not in the log."""
    failures, stack, entries = recompile_body(lines)
    return [ev.Recompile(function="", failures=failures, user_stack=stack, partial=True,
                         entries=entries, **common)]


def orphan_limit(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The body of a recompile-limit warning whose first line is not in the log: the limit
    was hit at this compile id, its name and value are not known."""
    body = limit_body(lines)
    return [ev.RecompileLimit(limit_name="", function=body.function, file=body.file,
                              first_line=body.line, last_reason=body.last, partial=True,
                              before_2_2=body.before_2_2, reasons_off=body.reasons_off,
                              **common)]


def orphan_graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The tail of a graph-break record: the frame broke; where, only its first line said."""
    b = graph_break_body(lines)
    # torch 2.3-2.5 logged the exception's traceback in the record (exc_info): a paste begun
    # inside it still ends in the exception that is the reason (pytorch#124900: "torch._dynamo.
    # exc.Unsupported: 'skip function graph_break in file …/decorators.py'")
    reason = b.gb_type or b.reason or raised_reason(lines)
    return [ev.GraphBreak(file="", user_line=0, reason=reason,
                          explanation=b.explanation, hints=b.hints, gb_type=b.gb_type,
                          gb_code=b.gb_code, partial=True, **common)]


# dynamo's DEBUG log of a graph break it caught: "break_graph_if_unsupported triggered compile"
# with exc_info (2.0-2.2; every line of it prefixed in 2.1-2.2's logging layout), the
# traceback's first frame break_graph_if_unsupported's wrapper in symbolic_convert.py: a paste
# begun at its "Traceback (most recent call last):" (pytorch#118334, 2.2 nightly: the record's
# message line above the paste)
_TRACEBACK_HEAD = b"Traceback (most recent call last):"
_TRACER_PREFIX = (b"symbolic_convert.py:", b"torch._dynamo.symbolic_convert: [")


def orphan_logged_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The traceback dynamo logged for a graph break it caught and went on from: that break,
    its reason the exception's line where the paste has it, else cut (``LOGGED_CUT``). Its
    first frame is break_graph_if_unsupported's wrapper, or ``step`` (2.0-2.15's "step
    triggered compile", the same catch one level up); any other is not read (malformed)."""
    frames = user_stack(lines[1:])
    if not frames or frames[0].function not in ("wrapper", "step") \
            or not frames[0].file.replace("\\", "/").endswith("_dynamo/symbolic_convert.py"):
        raise ValueError("a traceback of dynamo's tracer not begun where it catches a break")
    return [ev.GraphBreak(file="", user_line=0, reason=raised_reason(lines) or LOGGED_CUT,
                          partial=True, **common)]


# The body of torch's Tensor.item() warning (variables/tensor.py _warn_capture_scalar_outputs,
# 2.4-2.15) after its first line: the setting, "or:", its env form, "to include these operations
# in the captured graph." Only that warning says capture_scalar_outputs there, and it is torch's
# one warning about Tensor.item() (specforge#222's excerpt begins at the setting)
_ITEM_BODY = (b"torch._dynamo.config.capture_scalar_outputs = True",
              b"env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1",
              b"to include these operations in the captured graph.")
_TENSOR_PY = (b"variables/tensor.py:", b"variables\\tensor.py:")


def orphan_item(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The body of torch's Tensor.item() warning whose first line the paste cut: that
    warning still (its reason, torch's setting, the place its stack ends at: not ``partial``,
    as the cut line named no place)."""
    return consider_setting([CONSIDER_HEAD, *lines], common)


# The body of torch's "Error while creating guard:" record (_guards.py: the guard's fields,
# then the traceback), from a paste that began inside it (pytorch#147264 starts at "Source:")

def orphan_guard_error(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The body of a guard-creation error whose ``Error while creating guard:`` line is not in
    the log: the compile failed making that guard (SHAPE_ENV: the shape guards)."""
    return constraint_violations(["Error while creating guard:", *lines], common)


# convert_frame's record of a frame it gave up on (format_error_msg: "WON'T CONVERT fn file line
# N", "due to:", the traceback, the exception, "from user code:"), at INFO for an Unsupported
# torch treats as soft and at WARNING under suppress_errors; its head cut by the paste
# (pytorch#93720: 2.1's "[INFO]" lines from "torch._dynamo.exc.Unsupported: assert with
# non-string message"; unsloth#1175: 2.5's "W… convert_frame.py:1009]" lines from
# "BackendCompilerFailed: backend='inductor' raised:")
_EXC_HEAD_RE = re.compile(r"^(?:[A-Za-z_]\w{0,100}\.){0,8}\w{0,100}(?:Error|Exception|Failed|"
                          r"Unsupported)\b:")


# the directory of torch's a traceback frame is in -> the part of the compiler that raised,
# where the paste cut the exception off (chattts#106: frames through inductor's codegen)
_RAISED_IN = (("_inductor", "the backend (inductor)"),)


def _raised_in(lines: list[str]) -> str:
    """Who raised, told by the deepest ``File "…", line N, in`` frame of a cut traceback: a
    row of ``_RAISED_IN`` whose torch directory holds it ("" for any other, or no frame)."""
    deepest = ""
    for text in lines:
        if text.lstrip().startswith('File "') and (m := FILE_RE.match(text)) is not None:
            deepest = m["file"].replace("\\", "/")
    return next((who for part, who in _RAISED_IN if f"torch/{part}/" in deepest), "")


def orphan_not_converted(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The body of a ``WON'T CONVERT`` record whose head the paste cut: the frame torch gave up
    on, named by the innermost frame of its ``from user code:`` stack where it has one, and
    the exception it raised. A body of traceback frames alone is that record still: the
    only W/I records of ``convert_frame`` with ``File "…", line N, in`` lines are
    format_error_msg's, logged with exc_info under suppress_errors (2.3 convert_frame.py:824,
    2.7 :1280, 2.15 :2493; its other warnings, the recompile limit's and cProfile's, have
    none): its function and error are past the paste's ends. Nothing for any other body."""
    at = next((i for i, t in enumerate(lines) if _EXC_HEAD_RE.match(t)), None)
    if at is None:
        if not any(t.lstrip().startswith('File "') and FILE_RE.match(t) for t in lines):
            return []
        return [ev.NotConverted(function="?", raised_in=_raised_in(lines), **common)]
    error = [lines[at].strip()]
    for text in lines[at + 1:at + 4]:  # "backend='inductor' raised:" then the error
        if not text.strip() or text[:1] in (" ", "\t") or not error[-1].endswith(":"):
            break
        error.append(text.strip())
    tail = lines[at:]
    start = next((i for i, t in enumerate(tail) if t.strip() == "from user code:"), None)
    stack = user_stack(tail[start + 1:]) if start is not None else ()
    user = stack[-1] if stack else None
    return [ev.NotConverted(function=user.function if user else "?", file=user.file if user else "",
                            first_line=None, error=" ".join(error)[:600], **common)]


def orphan(prefix: bytes, message: bytes) -> Handler | None:
    """The handler for a record that begins with ``message``, a line from inside a record of
    a known kind (a paste that began there); None when it is no such line."""
    body = message.lstrip()
    if _LIMIT_BODY.match(body):
        return orphan_limit
    # (the artifact is "[__recompiles]" in glog's prefix, ".__recompiles: [" in torch 2.1-2.2's)
    if b"__recompiles" in prefix and (body.startswith(_RECOMPILE_BODY) or _VERBOSE_HEAD.match(body)):
        return orphan_recompile
    if b"__graph_breaks" in prefix and body:
        return orphan_graph_break
    if body.rstrip() == _TRACEBACK_HEAD and any(t in prefix for t in _TRACER_PREFIX):
        return orphan_logged_break
    if body.rstrip() in _ITEM_BODY and any(t in prefix for t in _TENSOR_PY):
        return orphan_item
    # (an error record of torch/_guards.py, behind a rank tag or not: "[rank0]:E0215 …")
    # (every line of it: the error's fields, or the traceback torch logs with it, whose
    # ConstraintViolationError items are read: pytorch#140011, #133653)
    if b"_guards.py:" in prefix and (prefix[:1] == b"E" or b"]:E" in prefix[:24]) and body:
        return orphan_guard_error
    if ((b"convert_frame.py:" in prefix and level_of(prefix) in (b"I", b"W"))
            or b"convert_frame: [INFO]" in prefix or b"convert_frame: [WARNING]" in prefix) and body:
        return orphan_not_converted
    return None


# the line an exception's traceback ends in: "AssertionError: …", "torch._dynamo.exc.Unsupported: …"
_EXCEPTION_LINE = re.compile(rb"^[A-Za-z_][\w.]{0,200}(?:Error|Exception|Unsupported|Exit|Interrupt)\b"
                             rb"[^\s:]{0,80}:")


def unquoted(line: bytes) -> bytes:
    """``line`` without a markdown quote's marks at its start (the line itself if it has none)."""
    m = _QUOTE_RE.match(line) if line[:1] == b">" else None
    return line[m.end():] if m is not None else line


def continues(kind: bytes, first: bytes, line: bytes, tail: bool) -> bool:
    """Whether ``line``, which has no torch prefix, belongs to the open record of ``kind``
    whose first line is ``first``: torch 2.0's and torchdynamo's warnings put the prefix on
    their first line only (a recompile-limit warning's ``function:`` and ``reasons:`` lines;
    the user stack after a one-line graph break, until a blank line: ``tail``), as does
    ``logging.basicConfig``'s layout (the indented stack under "from user code at:"), and an editor
    can push a record's text to the next line (``W… [2/128]    ⏎function: 'forward' (…)``)."""
    if kind in (b"torch._dynamo", b"torchdynamo"):
        return _LIMIT_BODY.match(unquoted(line)) is not None
    if kind == b"Recompiling" and tail and line[:1] in (b" ", b"\t"):
        # a recompile record whose lines after the first lost their prefix (sglang#23428: the
        # reporter kept "[rank0]: [0/1] [__recompiles]" on the first line only): its own body
        body = line.lstrip()
        return body.startswith((*_RECOMPILE_BODY, b"# ")) or _VERBOSE_HEAD.match(body) is not None
    if kind == b"WON'T" and tail:
        # torchdynamo's and torch 2.0's WON'T CONVERT (torchdynamo#1010): "due to:", the
        # traceback and the exception it ends in, up to the first blank line
        return (line.startswith((b"due to:", b"Traceback (most recent call last):", b" ", b"\t"))
                or _EXCEPTION_LINE.match(line) is not None)
    if kind == b"Skipping" and tail:
        # the loop skip's frame summary, which 2.1's layout of April 2023 printed without the
        # prefix (pytorch#100045)
        return line.startswith(b"<FrameSummary file ")
    if not tail or kind != b"Graph":
        return False
    # torch 2.0's one-line form; torch 2.1-2.3's "Graph break: from user code at:" with the
    # stack on the lines after it, which logging.basicConfig's layout leaves without a prefix
    # (pytorch#126026: "DEBUG:torch._dynamo.symbolic_convert.__graph_breaks:Graph break: …")
    return b" from user code at   File " in first or (
        first.rstrip().endswith(b"from user code at:") and line[:1] in (b" ", b"\t"))

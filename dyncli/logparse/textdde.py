"""Data-dependent errors in TORCH_LOGS text and in pasted tracebacks: the facts of one line. Pure.

torch raises ``GuardOnDataDependentSymNode`` when a branch, a guard or a size needs the value
of a symbol read from a tensor's data (``u0``: ``.item()``, ``.tolist()``, ``nonzero()``…):
``Could not guard on data-dependent expression EXPR`` (or ``Could not extract specialized
integer from data-dependent expression EXPR``; ``ShapeEnv._make_data_dependent_error``), with
``Caused by: (FILE:LINE in FN)``, the frame that asked. Users paste it in many forms, none of
them a record of its own (issue 33; tests/data/pasted): the last lines of a traceback logged
by ``recording.py`` (E-level, ``failed while running evaluate_expr(*(EXPR, None), …)``),
``symbolic_shapes.py``'s warning ``failed during evaluate_expr(EXPR, hint=…``, fake_tensor's
``failed while attempting to run meta for aten.OP``, a W-level ``InductorError`` from
``graph_compile.py``, or the message alone, without any log prefix (dynamo's ``Tried to use
data-dependent value …`` graph-break text).

So each line is read on its own (:func:`fact`), wherever it stands, and the analysis joins the
facts of one compile (``dyncli.diagnose.analyzer``).
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.textmsg import parse_sloc
from dyncli.logparse.textstack import FILE_RE, user_stack
from dyncli.logparse.torchtree import is_torch_file

# a cheap test first (bytes): a line can hold a fact only if it holds one of these
MARKS = (b"data-dependent expression", b"evaluate_expr(", b"Caused by: ",
         b"run meta for ", b"we were trying to evaluate is ", b"guard_size_oblivious would fix",
         b"data-dependent friendly APIs", b"#constrain-as-size-example")

_GUARD_RE = re.compile(
    r"Could not (?P<what>guard on|extract specialized integer from) data-dependent expression "
    r"(?P<expr>.+?)(?: \(unhinted: .*|\.?\s*\(Size-like symbols:.*|\s*)$")
# recording.py: "failed while running evaluate_expr(*(u0 >= 9, None), **{'fx_node': None})"
# (2.1-2.7: evaluate_expr(expr, hint) itself records, its keywords after); 2.8 on
# _inner_evaluate_expr records, every argument positional: "evaluate_expr(*(Ne(u0, 1), None,
# False, False, False, False, None), **{})" (2.8.0 symbolic_shapes.py:7323, 2.15.0 :8783).
# The form tells the release (``RECORDED_FORMS``): where symbolic_shapes' warning beside it is
# a data-dependent error's line (2.1-2.7) or never one (2.8 on)
_RECORDED_NEW_RE = re.compile(r"failed while running evaluate_expr\(\*\((?P<expr>.+)"
                              r"(?:, [^,()]{1,40}){6}\), \*\*\{\}")
# (2.1-2.7 print the arguments the caller passed: ``*(EXPR, None), **{'fx_node': …}`` from a
# SymNode, ``*(EXPR,), **{}`` where the caller passed the expression alone, 2.4.1's record of
# tests/data/programs/shape_env_failed.py)
_RECORDED_RE = re.compile(r"failed while running evaluate_expr\(\*\((?P<expr>.+)(?:, [^,()]*|,)\), "
                          r"\*\*")
# symbolic_shapes.py: "failed during evaluate_expr((u0//3), hint=None, size_oblivious=False, …"
# (its log.warning in evaluate_expr's except, 2.3-2.15). Up to 2.7 it is written for any error
# there, a GuardOnDataDependentSymNode too (2.7.0 :6678 ``except Exception:``); 2.8 on only
# for an error that is not data-dependent (2.8.0 :7354, 2.15.0 :8814: ``if isinstance(e,
# GuardOnDataDependentSymNode): pass``). So the line is a ``during`` fact, a data-dependent
# error only where the log shows a release up to 2.7 (dyncli.diagnose.analyzer)
_DURING_RE = re.compile(r"failed during evaluate_expr\((?P<expr>.+?), hint=")
# the releases each form of recording.py's record is written by (2.x minors; None: the newest)
RECORDED_FORMS = {"old": (1, 7), "new": (8, None)}
# "Caused by: (FRAMEWORK)" or "Caused by: CODE  # FILE:LINE in FN (FRAMEWORK)" (torch's SLoc:
# the user's line where tracing had one, and the frame that asked, in parentheses)
_CAUSED_RE = re.compile(r"Caused by: (?P<sloc>.{1,2000})$")
_META_RE = re.compile(r"failed while attempting to run meta for (?P<op>[\w.]+)")
# torch 2.1-2.2's message (ShapeEnv._make_data_dependent_error): "It appears that you're trying
# to get a value out of symbolic int/float whose value is data-dependent (and thus we do not
# know the true value.)  The expression we were trying to evaluate is Eq(32*i0, 0) (unhinted:
# …).  Scroll up …" (pytorch#116336); it does not say whether a guard or an int was asked
_OLD_RE = re.compile(r"The expression we were trying to evaluate is (?P<expr>.+?) \(unhinted: ")
# torch's own hint in the message: 2.4-2.6 "ATTENTION: guard_size_oblivious would fix the error,
# evaluating expression to True." (with "Maybe you need to add guard_size_oblivious to framework
# code": FBGEMM#2923's fake kernel); 2.8-2.15 "consider using data-dependent friendly APIs such
# as guard_or_false, guard_or_true and statically_known_true." (pytorch#193693; 2.9 without the
# period, its "Caused by:" on the same line: ``_glued``). Both are about
# the code that asked (framework code: torch's, or a custom op's fake kernel), not the user's
_ATTENTION_RE = re.compile(r"ATTENTION: guard_size_oblivious would fix the error, evaluating "
                           r"expression to (?P<val>True|False)")
_FRIENDLY = "data-dependent friendly APIs such as guard_or_false, guard_or_true and " \
    "statically_known_true"
# dynamo's UserError for a GuardOnDataDependentSymNode ends with its exportdb link, case
# "constrain_as_size_example" (_dynamo/utils.py get_fake_value, variables/tensor.py, export's
# _trace.py: 2.1-2.15 use that case for nothing else): the line proves a data-dependent error
# where the paste cut its message (executorch#8988: only the link and `from user code:` left)
_LINK = "exportdb/index.html#constrain-as-size-example"
MAX_EXPR = 300  # characters of an expression kept (torch's can run to pages)
# characters of a line the regexes read: torch's messages fit, and a hostile line of many
# "evaluate_expr(" (each a start the lazy and greedy expressions scan from) stays linear-ish
MAX_TEXT = 8192


def events(message: bytes, common: dict[str, Any], lineno: int,
           logged: bool = False) -> tuple[ev.Event, ...]:
    """The event of a line that states a fact of a data-dependent error, if it does (a line
    without one of ``MARKS`` costs four substring searches); ``logged`` where the line is in
    recording.py's record of a failed ShapeEnv call (``DataDependentError.logged``), as the
    record's head and symbolic_shapes' warning are by their words (``logged_failure``)."""
    at = -1
    for m in MARKS:
        if (i := message.find(m)) >= 0:
            at = i
            break
    if at < 0 or message.count(b"`", 0, at) % 2:  # (in a document's inline code: an example)
        return ()
    out = []
    for text in _glued(message.decode("utf-8", "replace")):
        found = fact(text)
        if found is not None:
            user = found[2] if len(found) > 2 else None
            out.append(ev.DataDependentError(
                what=found[0], value=found[1], user=user,
                form=found[3] if len(found) > 3 else "",
                logged=logged or found[0] in ("op", "during")
                or (found[0] == "evaluate" and logged_failure(text)),
                **{**common, "line": lineno}))
    return tuple(out)


def _glued(text: str) -> tuple[str, ...]:
    """The line's parts that are a fact each: torch 2.9's message has no line break between
    its hint and its ``Caused by:`` ("… guard_or_true and statically_known_trueCaused by:
    (_meta_registrations.py:2449 in pick_memory_format)", symbolic_shapes.py 2.9.0: 6553;
    piper1-gpl#148), two facts on one line; every other line is one."""
    at = text.find(_FRIENDLY)
    if at < 0:
        return (text,)
    caused = text.find("Caused by: ", at + len(_FRIENDLY))
    return (text,) if caused < 0 else (text[:caused], text[caused:])


Fact = tuple[str, str] | tuple[str, str, ev.UserLoc | None] | tuple[str, str, None, str]


def fact(text: str) -> Fact | None:
    """The data-dependent fact of one line: ``("guard" | "int" | "evaluate", EXPR)`` (with
    recording.py's record, its form: ``RECORDED_FORMS``), ``("during", EXPR)`` (symbolic_shapes'
    warning: a data-dependent error's line up to 2.7 only),
    ``("culprit", "FILE:LINE in FN", user line or None)``, ``("op", "aten.select.int")`` or
    ``("hint", WHAT)`` (torch's own answer for the code that asked) or ``("linked", CASE)`` (the
    exportdb link of dynamo's data-dependent UserError); None for any other line."""
    text = text[:MAX_TEXT]
    m = _GUARD_RE.search(text)
    if m is not None:
        return ("guard" if m["what"] == "guard on" else "int"), _expr(m["expr"])
    m = _DURING_RE.search(text)
    if m is not None:
        return "during", _expr(m["expr"])
    m = _RECORDED_NEW_RE.search(text)
    if m is not None:
        return "evaluate", _expr(m["expr"]), None, "new"
    m = _RECORDED_RE.search(text)
    if m is not None:
        return "evaluate", _expr(m["expr"]), None, "old"
    m = _OLD_RE.search(text)
    if m is not None:
        return "evaluate", _expr(m["expr"])
    if _LINK in text:
        return "linked", "constrain-as-size-example"
    m = _ATTENTION_RE.search(text)
    if m is not None:
        return "hint", f"guard_size_oblivious (it would evaluate the expression to {m['val']})"
    if _FRIENDLY in text:
        return "hint", "guard_or_false, guard_or_true or statically_known_true"
    m = _CAUSED_RE.search(text)
    if m is not None:
        user, framework = parse_sloc(m["sloc"].strip())
        if framework or user is not None:
            return "culprit", framework, user
    m = _META_RE.search(text)
    if m is not None:
        return "op", m["op"]
    return None


# (fake_tensor's "failed while attempting to run meta for OP", the only line an ``op`` fact is
# read from, is its log.exception of a meta kernel that raised, re-raised after it: logged too)
def logged_failure(text: str) -> bool:
    """Whether ``text`` is torch's log of a failed evaluate_expr, which torch writes and then
    re-raises to the code that asked (recording.py's record_shapeenv_event wrapper: "failed
    while running evaluate_expr(…)", 2.1-2.15; symbolic_shapes' "failed during
    evaluate_expr(…", 2.3-2.15), rather than the error's own message: the code that asked may
    catch it and go on (pytorch#134421: export trying an operator's overloads, up to 2.7 or so
    logged every time)."""
    text = text[:MAX_TEXT]
    return _RECORDED_RE.search(text) is not None or _DURING_RE.search(text) is not None


def _expr(text: str) -> str:
    """An expression as one text: outer parentheses and a trailing period dropped, bounded."""
    text = text.strip().rstrip(".").strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text[:MAX_EXPR]


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


def same(a: str, b: str) -> bool:
    """Whether two readings name one expression (torch prints it with and without spaces)."""
    return a.replace(" ", "") == b.replace(" ", "")


# ShapeEnv._make_data_dependent_error logs, at DEBUG, "Data dependent variable '%s' allocated
# at:\n%s" for each free symbol of the expression it could not decide, and only while it builds
# the GuardOnDataDependentSymNode (2.1 symbolic_shapes.py:3265, 2.3 :3672, 2.15 :7970): the
# record proves a data-dependent error on that symbol (2.1 names unbacked ints i1, 2.2 on u1),
# and its stack is where the value was made (pytorch#116703: nonzero under dynamic=True)
_ALLOCATED_RE = re.compile(r"^Data dependent variable '(?P<sym>[a-z]{1,3}\d{1,9})' allocated at:")


def allocated(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The symbol of a ``Data dependent variable 'u0' allocated at:`` record, with the last
    frame of its stack outside torch (where the value was made), as a ``symbol`` fact."""
    m = _ALLOCATED_RE.match(lines[0].strip()) if lines else None
    if m is None:
        return []
    frames = user_stack(lines[1:])
    made = next((f for f in reversed(frames) if not is_torch_file(f.file)), None)
    return [ev.DataDependentError(what="symbol", value=m["sym"], user=made, **common)]


# Headings of torch's message whose next lines say more (bare, as an exception prints them):
# the frame torch blamed in 2.3-2.5 ("Potential framework code culprit (scroll up for full
# backtrace):" then a `File` line: torch's own frame, torchrec#2326, pytorch#134230); the
# user's call in non-strict export ("The following call raised this error:" then its `File`
# line, 2.5-2.15 symbolic_shapes._blame_user_code); and export's own fixes, numbered
# torch._check lines (2.4 "Suggested fixes (please choose one of the following):", 2.5-2.15
# "To fix the error, insert one of the following checks before this call:",
# _suggest_torch_checks; pytorch#125378, #132393)
HEADS = {
    b"Potential framework code culprit (scroll up for full backtrace):": "framework",
    b"The following call raised this error:": "call",
    b"Suggested fixes (please choose one of the following):": "checks",
    b"To fix the error, insert one of the following checks before this call:": "checks",
}
_CHECK_RE = re.compile(r"^\s{0,8}\d{1,2}\. (?P<check>torch\._check\(.{1,300}\))\"?$")


# dynamo's stack under an error it raised (``from user code:``, exc.format_error_msg_verbose /
# augment_exc_message, 2.1-2.15): the frames traced, the innermost last; under a data-dependent
# error the last frame that is not torch's is the user's line that needed the value
# (executorch#8988: utils.py:355 ``tmp_A == tmp_B``). Read only within this many lines after one
# of the error's own facts, so a graph break's stack elsewhere in a paste is never joined to it.
STACK_HEAD = b"from user code:"
STACK_AFTER = 64
FAR = -(1 << 30)  # (a line number no stack is within STACK_AFTER of)


def in_stack(raw: bytes, last: ev.UserLoc | None, lineno: int,
             owner: dict[str, Any] | None = None) -> tuple[bool, ev.DataDependentError | None]:
    """Whether ``raw`` is a line of dynamo's stack under ``from user code:`` (a ``File`` line, or
    the code line under one: indented), and the fact it states: a user frame (``stack``: not
    torch's; the code line gives ``last``, that frame, its code), with ``owner``'s fields (the
    rank, pid and compile id of the error it is under, where its record had a prefix). A blank
    line or any other ends the stack."""
    text = raw.decode("utf-8", "replace")[:MAX_TEXT].rstrip()
    m = FILE_RE.match(text)
    common: dict[str, Any] = {**(owner or {}), "line": lineno}
    if m is not None:
        loc = ev.UserLoc(m["file"], int(m["line"]), m["fn"].strip())
        return True, (None if is_torch_file(loc.file)
                      else ev.DataDependentError(what="stack", value="", user=loc, **common))
    if not text.strip() or text[:1] not in (" ", "\t"):
        return False, None
    if last is None:  # the code line of a torch frame
        return True, None
    code = ev.UserLoc(last.file, last.line, last.function, text.strip()[:300])
    return True, ev.DataDependentError(what="stack", value="", user=code, **common)


def heading(raw: bytes) -> str:
    """The kind of a heading of torch's data-dependent message (``HEADS``), or ""."""
    return HEADS.get(raw.strip(), "")


def under(kind: str, raw: bytes, lineno: int) -> ev.DataDependentError | None:
    """The fact a line under a heading of ``kind`` states: the blamed frame (``framework``: a
    culprit; ``call``: the user's call), or one of torch's suggested checks; None if it is not
    the line such a heading is followed by. (Without a rank, as :func:`events` reads the
    message's own lines where they have no prefix: the facts of one message join.)"""
    text = raw.decode("utf-8", "replace")[:MAX_TEXT].rstrip()
    common: dict[str, Any] = {"line": lineno}
    if kind == "checks":
        m = _CHECK_RE.match(text)
        return ev.DataDependentError(what="check", value=m["check"], **common) if m else None
    m = FILE_RE.match(text)
    if m is None:
        return None
    loc = ev.UserLoc(m["file"], int(m["line"]), m["fn"].strip())
    if kind == "framework":
        return ev.DataDependentError(what="culprit", value=f"{loc.file}:{loc.line} in "
                                     f"{loc.function}", **common)
    return ev.DataDependentError(what="culprit", value="", user=loc, **common)

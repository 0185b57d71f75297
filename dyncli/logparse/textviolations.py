"""Constraint violations of dynamic marking and torch.export, as an error record or a paste
prints their items: ``You marked … specialized it to be a constant (8)``, a value range the
guards do not allow (``Not all values of …``), export's specializations and Dim hints, its
``Suggested fixes:``, and the guard a compile failed to create.

``constraint_violations`` takes the record's lines and the common event fields and returns
events, as the parsers of ``dyncli.logparse.textmsg`` do; ``range_violation`` and
``suggested_fix`` are shared with the trace (``dyncli.logparse.trace_map``).
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.textstack import user_stack

_YOU_MARKED = (" as dynamic but your code specialized it to be a constant (", "You marked ")
_INFERRED = (" was inferred to be a constant (", "Not all values of ")
_RELAXED = "RelaxedUnspecConstraint("


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


_MARK_WRAP_MAX = 4000  # characters of a line that may finish a wrapped item


def rejoined_mark(last: str, line: str) -> str | None:
    """A "You marked" item of a guard-error record that a paste wrapped before its constant
    (torch-spyre#3005: "[0/0] - You marked L['x'].size()[0] as dynamic" then, at the margin,
    "but your code specialized it to be a constant (9). If you're …"), joined with the line
    that finishes it; None where ``last`` is no such start or ``line`` does not finish it."""
    body = _ITEM_HEAD_RE.sub("", last.strip(), 1)
    at = body.find(" as dynamic")
    if not body.startswith("You marked ") or len(line) > _MARK_WRAP_MAX \
            or _constant(body, *_YOU_MARKED) is not None or (at >= 0 and "(" in body[at:]):
        return None  # (not an item's start, or one whose constant is already there)
    for sep in (" ", ""):
        joined = f"{last.rstrip()}{sep}{line.strip()}"
        found = _constant(_ITEM_HEAD_RE.sub("", joined.strip(), 1), *_YOU_MARKED)
        if found is not None and len(found[0]) < len(body):
            return joined
    return None


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

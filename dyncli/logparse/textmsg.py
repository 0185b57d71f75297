"""Message parsers of the TORCH_LOGS text format: one function per kind of record.

Each takes the message text of a record (``lines``: the first line and its continuations,
prefix removed) and the common event fields, and returns events. A ``ValueError`` means the
record is of a known kind but did not parse (counted as malformed by ``textlog``). Formats are
those of torch 2.14 (torch/fx/experimental/symbolic_shapes.py, torch/_dynamo/guards.py,
pgo.py, symbolic_convert.py, convert_frame.py, variables/builder.py); older releases print
the same facts with small differences, which the optional groups absorb.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.safe import need_int, small_int

_RANGE = r"\[(?P<lo>[^,\]]{1,64}), (?P<hi>[^\]]{1,64})\]"
# create_symbol: the head is matched anchored, the value range is then searched for with
# bounded parts (at most ~130 steps per " [" of the line): linear whatever the line.
CREATE_SYMBOL_HEAD_RE = re.compile(r"^create_symbol (?P<sym>\S+) = (?P<val>\S+) for ")
_RANGE_AT_RE = re.compile(rf" {_RANGE}(?= |$)")
CREATE_UNBACKED_RE = re.compile(
    rf"^create_unbacked_sym(?P<kind>int|float|bool) (?P<sym>\S+) {_RANGE}(?: (?P<sloc>.*))?$")
GUARD_RE = re.compile(
    r"^(?P<prefix>eval|runtime_assert)(?P<tags>(?: \(forcing_spec\)| \[guard suppressed\])*) "
    r"(?P<expr>.+?) \[guard added\](?: (?P<sloc>.*))?$")
REPLACEMENT_RE = re.compile(
    r"^set_replacement (?P<sym>\S+) = (?P<tgt>.+?) \((?P<reason>[\w ]{1,64})\)"
    r"(?: VR\[(?P<lo>[^,\]]{1,64}), (?P<hi>[^\]]{1,64})\])?")
VAR_RANGE_RE = re.compile(
    r"^_update_var_to_range (?P<sym>\S+) = VR\[(?P<lo>[^,\]]+), (?P<hi>[^\]]+)\](?: \((?P<how>\w+)\))?")
_MARKING = " as dynamic (from "
SOURCES_ENTRY_RE = re.compile(
    r"^(?P<src>.+?) was marked dynamic due to dynamic-sources entry: (?P<entry>.+)$")
SOURCES_LIST_RE = re.compile(
    r"^(?P<src>.+?)(?: dim (?P<dim>\d{1,9}))? marked dynamic via dynamic-sources list")
# Patterns ending in "\s*$" after a free-form group are quadratic in a run of blanks (each
# position re-scans the run); these take the group up to the end and strip it in code.
RECOMPILING_RE = re.compile(r"^Recompiling function (?P<fn>\S+) in (?P<file>.+):(?P<line>\d{1,9})[ \t]*$")
FAILURE_RE = re.compile(r"^(?P<cid>!?\d+(?:/\d+)*(?:_\d+)?): (?P<reason>.*)$")
FILE_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d{1,9}), in (?P<fn>.+)$')
GRAPH_BREAK_RE = re.compile(
    r"^Graph break (?P<dup>\(user stack suppressed[^)]*\) )?in user code at (?P<file>.+):(?P<line>\d{1,9})[ \t]*$")
LIMIT_RE = re.compile(r"^torch\._dynamo hit config\.(?P<name>\w+) \((?P<limit>[^)]*)\)")
LIMIT_FN_RE = re.compile(r"^\s*function: '(?P<fn>[^']*)' \((?P<file>.+):(?P<line>\d{1,9})\)")
LAMBDA_RE = re.compile(r"LAMBDA_GUARD: (?P<expr>.+?)(?:  # (?P<rest>.*))?$")
_YOU_MARKED = (" as dynamic but your code specialized it to be a constant (", "You marked ")
_INFERRED = (" was inferred to be a constant (", "Not all values of ")
START_TRACING_RE = re.compile(
    r"^Step \d{1,9}: torchdynamo start tracing (?P<fn>\S+) (?P<file>.+):(?P<line>\d{1,9})[ \t]*$")
DDE_RE = re.compile(
    r"^could not evaluate (?P<expr>.+?) due to data dependency, it was assumed to be "
    r"(?P<val>\w+) with no runtime assertions ?(?P<sloc>.*)$")
# "<code>  # file:line in fn (framework_file:line in fn)" -- torch's SLoc.__str__ (torch/_guards.py).
# The framework location is the last "(...)" of the line; it is cut with rfind, then checked.
_FLOC_RE = re.compile(r"[^()]*:\d+ in [^()]*")
# Greedy: the LAST "# file:line in fn" is torch's (user code may hold its own "# comment").
_USER_RE = re.compile(r"^(?P<code>.*)\s# (?P<file>[^\s:]+):(?P<line>\d{1,9}) in (?P<fn>[^\s(]+)")


# Kept per distinct location text (those up to _SLOC_CACHED characters): a log repeats the
# same few user locations in every compile's guards, recompile reasons and symbols.
_SLOC_CACHED = 512


def parse_sloc(text: str | None) -> tuple[ev.UserLoc | None, str]:
    """Split torch's ``user code  # file:line in fn (framework loc)`` into (UserLoc, framework)."""
    if not text:
        return None, ""
    if len(text) <= _SLOC_CACHED:
        return _parse_sloc_cached(text)
    return _parse_sloc(text)


def _parse_sloc(text: str) -> tuple[ev.UserLoc | None, str]:
    text = text.split(", for more info run with", 1)[0].rstrip()
    framework = ""
    if text.endswith(")"):
        start = text.rfind("(")
        if start >= 0 and _FLOC_RE.fullmatch(text, start + 1, len(text) - 1):
            framework, text = text[start + 1:-1], text[:start].rstrip()
    um = _USER_RE.match(text)
    if um is None:
        return None, framework
    return ev.UserLoc(um["file"], int(um["line"]), um["fn"], um["code"].strip()), framework


# (results are immutable: a frozen UserLoc and a str; at most ~2 MB of keys)
_parse_sloc_cached = functools.lru_cache(maxsize=4096)(_parse_sloc)


def _need(m: re.Match[str] | None, what: str) -> re.Match[str]:
    if m is None:
        raise ValueError(f"unparsable {what}")
    return m


def create_symbol(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``create_symbol s77 = 6 for L['x'].size()[0] [2, int_oo] <sloc>``."""
    if " duck sized " in lines[0]:
        return []
    head = _need(CREATE_SYMBOL_HEAD_RE.match(lines[0]), "create_symbol")
    rng = _need(_RANGE_AT_RE.search(lines[0], head.end() + 1), "create_symbol range")
    user, framework = parse_sloc(lines[0][rng.end() + 1:])
    return [ev.CreateSymbol(symbol=head["sym"], value=head["val"],
                            source=lines[0][head.end():rng.start()], lower=rng["lo"],
                            upper=rng["hi"], user=user, framework=framework, **common)]


def create_unbacked(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``create_unbacked_symint u0 [-int_oo, int_oo] <sloc>`` (symfloat, symbool too)."""
    m = _need(CREATE_UNBACKED_RE.match(lines[0]), "create_unbacked_symbol")
    user, framework = parse_sloc(m["sloc"])
    return [ev.CreateUnbacked(kind="sym" + m["kind"], symbol=m["sym"], lower=m["lo"],
                              upper=m["hi"], user=user, framework=framework, **common)]


def guard_added(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``eval Eq(s77, 10) [guard added] <sloc>`` / ``runtime_assert … [guard added]``."""
    if "[guard added]" not in lines[0]:
        return []  # [statically known], [trivial], Ignored guard...: not a new guard
    m = _need(GUARD_RE.match(lines[0]), "guard")
    user, framework = parse_sloc(m["sloc"])
    tags = m["tags"] or ""
    return [ev.GuardAdded(expr=m["expr"], prefix=m["prefix"], user=user, framework=framework,
                          suppressed="guard suppressed" in tags, forcing_spec="forcing_spec" in tags,
                          **common)]


def set_replacement(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``set_replacement s77 = 10 (range_refined_to_singleton) VR[10, 10]``."""
    m = _need(REPLACEMENT_RE.match(lines[0]), "set_replacement")
    return [ev.SetReplacement(symbol=m["sym"], target=m["tgt"], reason=m["reason"],
                              lower=m["lo"] or "", upper=m["hi"] or "", **common)]


def var_to_range(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``_update_var_to_range s77 = VR[10, 10] (update)``; other debug forms are ignored."""
    m = VAR_RANGE_RE.match(lines[0])
    if m is None:
        return []
    return [ev.VarToRange(symbol=m["sym"], lower=m["lo"], upper=m["hi"], how=m["how"] or "",
                          **common)]


def marking(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``marking L['x'] as dynamic (from automatic dynamic/PGO)``."""
    text = lines[0].rstrip()
    cut = text.rfind(_MARKING)
    if not text.startswith("marking ") or cut < 9 or not text.endswith(")") \
            or cut + len(_MARKING) >= len(text) - 1:
        raise ValueError("unparsable marking")
    return [ev.MarkedDynamic(source=text[8:cut], origin=text[cut + len(_MARKING):-1], **common)]


def dynamic_sources(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``L['x'] was marked dynamic due to dynamic-sources entry: L['x']:0`` and the list form."""
    m = SOURCES_ENTRY_RE.match(lines[0])
    if m is not None:
        entry = m["entry"].strip()
        dim = entry.rsplit(":", 1)[1] if ":" in entry.rsplit("]", 1)[-1] else None
        return [ev.MarkedDynamic(source=m["src"], origin="dynamic-sources", entry=entry,
                                 dim=small_int(dim) if dim else None, **common)]
    m = _need(SOURCES_LIST_RE.match(lines[0]), "dynamic-sources")
    return [ev.MarkedDynamic(source=m["src"], origin="dynamic-sources",
                             dim=int(m["dim"]) if m["dim"] else None, **common)]


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
    """``Recompiling function F in FILE:LINE`` + ``- 0/0: reason`` lines + user stack."""
    m = _need(RECOMPILING_RE.match(lines[0]), "Recompiling")
    failures: list[ev.GuardFailure] = []
    stack_lines: list[str] = []
    in_stack = False
    for text in lines[1:]:
        # "    - 0/0: reason" and "    - User stack trace:" are items; "    -   File …" and
        # "    -     code" (deeper indent) belong to the stack of the item before them.
        body = text.strip()
        top = True
        if body.startswith("- "):
            body, top = body[2:], not body[2:].startswith(" ")
            body = body.strip()
        if top and body.startswith("User stack trace:"):
            in_stack = True
            continue
        fm = FAILURE_RE.match(body) if top else None
        # (headers such as "triggered by the following guard failure(s):" or, with
        # recompiles_verbose, "guard 0 failures:" end with a colon and are not reasons)
        if fm is not None or (top and body and not in_stack and not body.endswith(":")):
            # torch < 2.5 printed the reason without the "0/0: " of the failed cache entry
            in_stack = False
            failures.append(guard_failure(fm["cid"] if fm else "",
                                          fm["reason"] if fm is not None else body))
        elif in_stack:
            stack_lines.append(body)
    return [ev.Recompile(function=m["fn"], file=m["file"], first_line=int(m["line"]),
                         failures=tuple(failures), user_stack=user_stack(stack_lines), **common)]


_FIRST_USE = " (user code shown is first use of this value"
_GB_LINK_RE = re.compile(r"/gb/gb(?P<code>\d{4})\.html")
_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred"


def guard_failure(failed: str, reason: str) -> ev.GuardFailure:
    """One recompile reason (``2 <= x.size()[0] <= 8  # code  # file:line in fn (…)``) split
    into the guard, the user location of its comment and torch's "first use" note.

    Shared by the text log and the trace (``recompile_reasons``), so both give one answer.
    torch >= 2.14 appends, to a guard it blames on 0/1 specialization, "(user code shown is
    first use of this value--…) and <code>  # <file:line> (<framework>)": the note is
    reported as ``first_use``, never folded into the guard or the code.
    """
    guard = reason.split("  #", 1)[0].split(" # ", 1)[0].rstrip()
    comment = reason.split("# ", 1)[1] if "# " in reason else ""
    cut = comment.find(_FIRST_USE)
    if cut >= 0:
        comment = comment[:cut]
    user = parse_sloc(comment)[0] if comment else None
    return ev.GuardFailure(failed=failed, reason=guard, user=user, first_use=cut >= 0)


@dataclass(frozen=True, slots=True)
class BreakBody:
    """The lines of a graph-break message after its first line (text log and trace alike)."""

    reason: str = ""  # "Graph Break Reason: …" (torch's generic wording)
    gb_type: str = ""  # the first unindented line after it: the registry's Gb_type
    gb_code: str = ""  # GB0025, from the documentation link
    explanation: str = ""
    hints: tuple[str, ...] = ()
    stack: tuple[ev.UserLoc, ...] = ()


def graph_break_body(lines: list[str]) -> BreakBody:
    """Reason, torch's graph-break type and code, explanation, hints and user stack.

    Only the first break of the message counts: what follows "another graph break
    occurred" (e.g. torch's "graph break in loop") is a consequence of it. The user stack
    runs from "User code traceback:" to the Python traceback, if any.
    """
    reason, gb_type, code, explanation = "", "", "", ""
    hints: list[str] = []
    stack_at, end = len(lines), len(lines)
    primary = True
    for i, text in enumerate(lines):
        body = text.strip()
        if body.startswith("Graph Break Reason:"):
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
                     hints=tuple(hints), stack=user_stack(lines[stack_at:end]))


def graph_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Graph break in user code at FILE:LINE`` + reason, explanation, hints, user stack."""
    m = _need(GRAPH_BREAK_RE.match(lines[0]), "graph break")
    b = graph_break_body(lines[1:])
    return [ev.GraphBreak(file=m["file"], user_line=int(m["line"]), reason=b.gb_type or b.reason,
                          explanation=b.explanation, hints=b.hints, user_stack=b.stack,
                          duplicate=bool(m["dup"]), gb_type=b.gb_type, gb_code=b.gb_code,
                          **common)]


def recompile_limit(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``torch._dynamo hit config.recompile_limit (8)`` + function + last reason."""
    m = _need(LIMIT_RE.match(lines[0]), "recompile limit")
    fn, file, line, last = "", "", None, ""
    for text in lines[1:]:
        fm = LIMIT_FN_RE.match(text)
        if fm is not None:
            fn, file, line = fm["fn"], fm["file"], int(fm["line"])
        elif text.strip().startswith("last reason:"):
            last = text.split("last reason:", 1)[1].strip()
    return [ev.RecompileLimit(limit_name=m["name"], limit=m["limit"], function=fn, file=file,
                              first_line=line, last_reason=last, **common)]


def constraint_violations(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """Every ``You marked … specialized it to be a constant (8)`` in an error record."""
    stack_from = next((i for i, t in enumerate(lines) if t.strip().startswith("User stack")), None)
    user = None
    if stack_from is not None:
        end = next((i for i in range(stack_from + 1, len(lines)) if not lines[i].strip()), len(lines))
        frames = user_stack(lines[stack_from + 1:end])
        user = frames[-1] if frames else None
    out: list[ev.Event] = []
    for text in lines:
        found = _constant(text, *_YOU_MARKED) or _constant(text, *_INFERRED, " are valid because ")
        if found is not None:
            out.append(ev.ConstraintViolation(message=text.strip().lstrip("- "), source=found[0],
                                              value=found[1], user=user, **common))
    return out


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


def step(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Step 1: torchdynamo start tracing f /path/a.py:7`` (TORCH_LOGS=+dynamo): names a frame."""
    m = START_TRACING_RE.match(lines[0])
    if m is None:
        return []  # the other steps (done tracing, calling compiler…) add nothing here
    return [ev.CompileStart(function=m["fn"], file=m["file"], first_line=int(m["line"]), **common)]


def data_dependent(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``could not evaluate Eq(u0, 0) due to data dependency, it was assumed to be False …``."""
    m = DDE_RE.match(lines[0])
    if m is None:
        return []  # "Could not simplify" and friends
    user, framework = parse_sloc(m["sloc"])
    return [ev.DataDependent(expr=m["expr"], assumed=m["val"], user=user, framework=framework,
                             **common)]


def _dims(text: str) -> tuple[int | None, ...]:
    """``2, None, 8`` -> ``(2, None, 8)``; a part that is no small number is a ``ValueError``."""
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part == "None":
            out.append(None)
        elif len(part) <= 18 and part.isdigit() and part.isascii():  # the usual case, at once
            out.append(int(part))
        else:
            out.append(need_int(part, "size"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TensorCheck:
    """The fields of ``TENSOR_MATCH: check_tensor(src, Tensor, DispatchKeySet(…), dtype,
    device=…, requires_grad=…, size=[…], stride=[…])  # comment``."""

    source: str
    dtype: str
    size: str
    stride: str
    rest: str


_TM_HEAD = "TENSOR_MATCH: check_tensor("
_DKS = ", DispatchKeySet("
_DTYPE_RE = re.compile(r"\), (?P<dtype>[\w.]{1,64}), device=")


def tensor_check(text: str) -> TensorCheck | None:
    r"""Cut a TENSOR_MATCH guard into its fields with str.find (linear on any line).

    The regex this replaces (``check_tensor[(](.+?), [\w.]+, DispatchKeySet[(].*?[)], …``)
    nested lazy groups and took 22 s on a 250 KB line.
    """
    start = text.find(_TM_HEAD)
    if start < 0:
        return None
    start += len(_TM_HEAD)
    dks = text.find(_DKS, start)
    if dks < 0:
        return None
    src_end = text.rfind(", ", start, dks)  # src, <tensor type>, DispatchKeySet(
    dtype = _DTYPE_RE.search(text, dks + len(_DKS))
    if src_end <= start or dtype is None:
        return None
    size = text.find(" size=[", dtype.end())
    size_end = text.find("], stride=[", size + 7)
    stride_end = text.find("])", size_end + 11)
    if size < 0 or size_end < 0 or stride_end < 0:
        return None
    return TensorCheck(source=text[start:src_end], dtype=dtype["dtype"],
                       size=text[size + 7:size_end], stride=text[size_end + 11:stride_end],
                       rest=text[stride_end + 2:])


_STATIC_INDICES_RE = re.compile(
    r"getattr\((?P<src>[LG]\[[^,]{1,500}?), '_dynamo_static_indices', set\(\)\)"
    r"\.issubset\(\{(?P<dims>[\d, ]{0,200})\}\)")


def tree_line(text: str, common: dict[str, Any]) -> ev.Event | None:
    """One line of the guards tree: TENSOR_MATCH → TensorMatch, shape LAMBDA_GUARD → ShapeGuard,
    the mark_static marking guard → MarkedStatic.

    Every compile of a frame logs its guards tree again, mostly the same lines: what a line
    says is kept per distinct text (lines up to ``_TREE_CACHED`` characters, the last 2,048),
    and only the event is made anew with the record's fields."""
    made = _tree_fields_cached(text) if len(text) <= _TREE_CACHED else _tree_fields(text)
    return None if made is None else made[0](**made[1], **common)


_TREE_CACHED = 2048


def _tree_fields(text: str) -> tuple[type[ev.Event], dict[str, Any]] | None:
    """The event type and fields (but the record's) of one line of the guards tree."""
    if "DIMENSION_DYNAMIC_MARKING_GUARD:" in text:
        sm = _STATIC_INDICES_RE.search(text)
        if sm is None:
            return None
        dims = tuple(int(d) for d in sm["dims"].split(",") if d.strip())
        return (ev.MarkedStatic, {"source": sm["src"], "dims": dims}) if dims else None
    if "TENSOR_MATCH:" in text:
        tm = tensor_check(text)
        if tm is None or not tm.dtype.startswith("torch."):
            raise ValueError("unparsable TENSOR_MATCH")
        rest = tm.rest
        user = parse_sloc(rest.split("# ", 1)[1])[0] if "# " in rest else None
        return ev.TensorMatch, {"source": tm.source, "sizes": _dims(tm.size),
                                "strides": _dims(tm.stride), "dtype": tm.dtype, "user": user}
    if "LAMBDA_GUARD:" in text:
        m = _need(LAMBDA_RE.search(text), "LAMBDA_GUARD")
        if "L[" not in m["expr"]:
            return None  # ambient guards (saved tensor hooks, ...)
        rest = m["rest"] or ""
        return ev.ShapeGuard, {"expr": m["expr"].strip(), "user": parse_sloc(rest)[0],
                               "zero_one": "0/1 specialization" in rest}
    return None


# (a failure, a ValueError, is not kept: the line is counted as malformed each time)
_tree_fields_cached = functools.lru_cache(maxsize=2048)(_tree_fields)

"""Message parsers of the TORCH_LOGS text format: one function per kind of record.

Each takes the message text of a record (``lines``: the first line and its continuations,
prefix removed) and the common event fields, and returns events. A ``ValueError`` means the
record is of a known kind but did not parse (counted as malformed by ``textlog``). Formats are
those of torch 2.14 (torch/fx/experimental/symbolic_shapes.py, torch/_dynamo/guards.py,
pgo.py, symbolic_convert.py, convert_frame.py, variables/builder.py); older releases print
the same facts with small differences, which the optional groups absorb.

This module owns torch's source locations (``parse_sloc``) and the one-line messages of
symbolic shapes and dynamic marking (symbols, guards, replacements, ranges, marking,
dynamic-sources, tracing steps, data-dependent assumptions). The multi-line records are in
``textrecompiles`` (recompiles, recompile limits), ``textbreaks`` (graph breaks),
``textviolations`` (constraint violations) and ``textframes`` (frames dynamo gave up on), their
user stacks read by ``textstack``; the guards tree's lines are in ``textguards``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.safe import small_int
from dyncli.logparse.textpaste import unlink

_RANGE = r"\[(?P<lo>[^,\]]{1,64}), (?P<hi>[^\]]{1,64})\]"
# torch's names of the symbols in an expression (ShapeEnv, 2.1-2.15): s a size; u an unbacked
# int, zuf (2.2 on) an unbacked float, as a float tensor's .item() makes under
# capture_scalar_outputs (executorch#12732's Ne(zuf0, 0.0)); i and f torch 2.1's unbacked int
# and float. (q: in dyncli's list of symbols since its start, though torch 2.15 names none so;
# kept with the sizes, as the analyzer read it)
_SYMBOL_RE = re.compile(r"\b(?:(?P<backed>[sq])|[uif]|zuf)\d{1,9}\b")


def symbols_in(expr: str) -> set[str]:
    """The symbols ``expr`` names (``s0``, ``u3``, ``zuf0``)."""
    return {m[0] for m in _SYMBOL_RE.finditer(expr)}


def unbacked_in(expr: str) -> set[str]:
    """The unbacked symbols ``expr`` names: values read from a tensor's data (``u0``, ``zuf0``,
    2.1's ``i0``), not sizes."""
    return {m[0] for m in _SYMBOL_RE.finditer(expr) if m["backed"] is None}


# create_symbol: the head is matched anchored, the value range is then searched for with
# bounded parts (at most ~130 steps per " [" of the line): linear whatever the line.
CREATE_SYMBOL_HEAD_RE = re.compile(r"^create_symbol (?P<sym>\S+) = (?P<val>\S+) for ")
_RANGE_AT_RE = re.compile(rf" {_RANGE}(?= |$)")
CREATE_UNBACKED_RE = re.compile(
    rf"^create_unbacked_sym(?P<kind>int|float|bool) (?P<sym>\S+) {_RANGE}(?: (?P<sloc>.*))?$")
GUARD_RE = re.compile(
    r"^(?P<prefix>eval|evaluate_expr|runtime_assert)(?P<tags>(?: \(forcing_spec\)| \[guard suppressed\])*) "
    r"(?P<expr>.+?) \[guard added\](?: (?P<sloc>.*))?$")
REPLACEMENT_RE = re.compile(
    r"^set_replacement (?P<sym>\S+) = (?P<tgt>.+?) \((?P<reason>[\w ]{1,64})\)"
    r"(?: VR\[(?P<lo>[^,\]]{1,64}), (?P<hi>[^\]]{1,64})\])?")
_BARE_REPLACEMENT_RE = re.compile(r"^set_replacement \S{1,64} = \S{1,64}$")
# print_specializations' warning (2.1-2.15) and its 2023 nightly's form, a colon after it and
# the stack on the lines below (pytorch#95848): the source or symbol, and the number
SPECIALIZING_RE = re.compile(
    r"^Specializing (?P<what>\S.{0,1023}?) to (?P<val>-?\d{1,40}(?:\.\d{1,40})?):?\s{0,8}$")
VAR_RANGE_RE = re.compile(
    r"^_update_var_to_range (?P<sym>\S+) = VR\[(?P<lo>[^,\]]+), (?P<hi>[^\]]+)\](?: \((?P<how>\w+)\))?")
_MARKING = " as dynamic (from "
MARKED_UP_FRONT = "marked up front (mark_dynamic or a dynamic-sources entry)"
SOURCES_ENTRY_RE = re.compile(
    r"^(?P<src>.+?) was marked dynamic due to (?:dynamic-sources entry|dynamic source allowlist "
    r"pattern): (?P<entry>.+)$")
SOURCES_LIST_RE = re.compile(
    r"^(?P<src>.+?)(?: dim (?P<dim>\d{1,9}))? marked dynamic via (?:dynamic-sources list|source "
    r"whitelist)")
# builder.py: a dim marked dynamic before the compile (mark_dynamic, maybe_mark_dynamic, or a
# dynamic-sources entry); the line does not say which dim
MARKED_UP_FRONT_RE = re.compile(r"^automatic dynamic (?P<src>\S.{0,1024}?) marked dynamic$")
# (a resume function of torch 2.0/2.1 is "<resume in f>"; its "done tracing" line has no file)
START_TRACING_RE = re.compile(
    r"^Step \d{1,9}: torchdynamo start tracing (?P<fn><[^<>]{1,400}>|\S+) (?P<file>.+):"
    r"(?P<line>\d{1,9})[ \t]*$")
DONE_TRACING_RE = re.compile(
    r"^Step \d{1,9}: torchdynamo done tracing (?P<fn><[^<>]{1,400}>|\S+) \(")
DDE_RE = re.compile(
    r"^could not evaluate (?P<expr>.+?) due to data dependency, it was assumed to be "
    r"(?P<val>\w+) with no runtime assertions ?(?P<sloc>.*)$")
# "<code>  # file:line in fn (framework_file:line in fn)" -- torch's SLoc.__str__ (torch/_guards.py).
# The framework location is the last "(...)" of the line; it is cut with rfind, then checked.
_FLOC_RE = re.compile(r"[^()]*:\d+ in [^()]*")
# Greedy: the LAST "# file:line in fn" is torch's (user code may hold its own "# comment").
_USER_RE = re.compile(r"^(?P<code>.*)\s# (?P<file>[^\s:]+):(?P<line>\d{1,9}) in (?P<fn>[^\s(]+)")
# torch 2.1-2.6 wrote a guard's or symbol's user location as "at FILE:LINE in FN (framework)".
_AT_RE = re.compile(r"^at (?P<file>[^\s:]+):(?P<line>\d{1,9}) in (?P<fn>[^\s(]+)")


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
    um = _USER_RE.match(text) or _AT_RE.match(text)
    if um is None and "](" in text:  # a path an editor made a markdown link
        text = unlink(text)
        um = _USER_RE.match(text) or _AT_RE.match(text)
    if um is None:
        return None, framework
    code = um["code"].strip() if "code" in um.groupdict() else ""
    return ev.UserLoc(um["file"], int(um["line"]), um["fn"], code), framework


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
    rng = _RANGE_AT_RE.search(lines[0], head.end() + 1)
    if rng is None and " " not in lines[0][head.end():].strip():  # torch 2.1: no range
        return [ev.CreateSymbol(symbol=head["sym"], value=head["val"],
                                source=lines[0][head.end():].strip(), lower="", upper="",
                                user=None, framework="", **common)]
    rng = _need(rng, "create_symbol range")
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
    # (2.1's nightlies said evaluate_expr until pytorch#99159 shortened it to eval)
    prefix = "eval" if m["prefix"] == "evaluate_expr" else m["prefix"]
    return [ev.GuardAdded(expr=m["expr"], prefix=prefix, user=user, framework=framework,
                          suppressed="guard suppressed" in tags, forcing_spec="forcing_spec" in tags,
                          **common)]


def set_replacement(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``set_replacement s77 = 10 (range_refined_to_singleton) VR[10, 10]``."""
    m = REPLACEMENT_RE.match(lines[0])
    if m is None and _BARE_REPLACEMENT_RE.match(lines[0]):
        # torch 2.2: "set_replacement s0 = 4", without its reason: a symbol pinned to a
        # number (a specialization) or equal to another symbol
        sym, _, target = lines[0][len("set_replacement "):].partition(" = ")
        return [ev.SetReplacement(symbol=sym, target=target.strip(), **common)]
    m = _need(m, "set_replacement")
    return [ev.SetReplacement(symbol=m["sym"], target=m["tgt"], reason=m["reason"],
                              lower=m["lo"] or "", upper=m["hi"] or "", **common)]


def specializing(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Specializing L['x'].size()[0] to 10`` (the stack a nightly printed under it is not
    where the code pinned it: dynamo traces the code, it does not run it)."""
    m = _need(SPECIALIZING_RE.match(lines[0]), "Specializing")
    return [ev.Specialized(what=m["what"], value=m["val"], **common)]


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
    m = MARKED_UP_FRONT_RE.match(lines[0])
    if m is not None:
        return [ev.MarkedDynamic(source=m["src"], origin=MARKED_UP_FRONT, **common)]
    if lines[0].startswith("automatic "):
        return []  # builder.py's other "automatic dynamic …" lines say nothing more here
    m = _need(SOURCES_LIST_RE.match(lines[0]), "dynamic-sources")
    return [ev.MarkedDynamic(source=m["src"], origin="dynamic-sources",
                             dim=int(m["dim"]) if m["dim"] else None, **common)]


def step(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``Step 1: torchdynamo start tracing f /path/a.py:7`` (TORCH_LOGS=+dynamo), or its ``done
    tracing f (…)``: names a frame (the other steps say nothing here)."""
    m = START_TRACING_RE.match(lines[0])
    if m is not None:
        return [ev.CompileStart(function=m["fn"], file=m["file"], first_line=int(m["line"]),
                                **common)]
    # "done tracing f (RETURN_VALUE)" names the frame where the paste cut its start (pytorch#164924)
    done = DONE_TRACING_RE.match(lines[0])
    return [ev.CompileStart(function=done["fn"], **common)] if done is not None else []


def data_dependent(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """``could not evaluate Eq(u0, 0) due to data dependency, it was assumed to be False …``."""
    m = DDE_RE.match(lines[0])
    if m is None:
        return []  # "Could not simplify" and friends
    user, framework = parse_sloc(m["sloc"])
    return [ev.DataDependent(expr=m["expr"], assumed=m["val"], user=user, framework=framework,
                             **common)]


# produce_guards' ``track_symint SOURCE VALUE CONSTRAINT`` (+dynamic): VALUE an int is a size
# that compiled static; CONSTRAINT what mark_dynamic demanded of it (torch 2.1-2.15 repr:
# ``StrictMinMaxConstraint(warn_only=False, vr=VR[1, 8196])``, before 2.3 ``vr=ValueRanges(
# lower=1, upper=8196, is_bool=False)``; ``RelaxedUnspecConstraint(warn_only=False)``)
_TRACK_RE = re.compile(
    r"^track_symint (?P<src>\S.{0,300}?) (?P<val>-?\d{1,19}) (?P<kind>StrictMinMax|RelaxedUnspec)"
    r"Constraint\(warn_only=False(?:, vr=(?:VR\[(?P<lo>[^,\]]{1,40}), (?P<hi>[^\]]{1,40})\]"
    r"|ValueRanges\(lower=(?P<lo2>[^,]{1,40}), upper=(?P<hi2>[^,)]{1,40})))?")


def track_symint(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A size mark_dynamic demanded dynamic that compiled as a constant: the compile raises
    ConstraintViolationError (``produce_guards.track_symint``'s rule, read in torch 2.15's
    symbolic_shapes.py): a range is violated unless it is that one value; a plain mark unless
    the value is 0 or 1, which torch always specializes. Other lines say nothing here."""
    m = _TRACK_RE.match(lines[0])
    if m is None:
        return []
    val = m["val"]
    if m["kind"] == "StrictMinMax":
        lo, hi = m["lo"] or m["lo2"], m["hi"] or m["hi2"]
        if lo is None or lo.strip() == hi.strip() == val:
            return []
    elif val in ("0", "1"):
        return []
    return [ev.ConstraintViolation(message=lines[0].strip(), source=m["src"], value=val,
                                   **common)]


# convert_frame.py (2.11, 2.15): "skipping: mm (reason: non-infra torch dispatch mode present,
# this is not supported today in torch.compile, file: /tmp/flop.py)"
_MODE_SKIP_RE = re.compile(r"^skipping: (?P<fn>\S{1,200}) \(reason: non-infra torch dispatch mode "
                           r"present[^)]*?, file: (?P<file>.{1,1000})\)\s*$")


def mode_skip(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A frame dynamo skipped because a TorchDispatchMode was active; other skips say nothing."""
    m = _MODE_SKIP_RE.match(lines[0])
    return [ev.ModeSkip(function=m["fn"], file=m["file"], **common)] if m else []

"""Rules of dyncli diagnose: recompile causes, dynamic sources, and suggestions with evidence.

Pure functions over the ``Diagnosis`` rows; the workflow they automate is the reference
guide's "Reducing Compilations: Step by Step" (docs/diagnose.md lists each rule).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from dyncli.diagnose.model import (
    Advice,
    Diagnosis,
    FrameReport,
    RecompileReport,
)
from dyncli.logparse.events import CompileId
from dyncli.sources import local_expr

# A guard on a tensor's geometry: torch's TENSOR_MATCH message or a shape guard on a size symbol.
_SIZE_RE = re.compile(r"size mismatch|stride mismatch|storage_offset|\.size\(\)|\.stride\(\)"
                      r"|\.shape\b|numel\(\)")
# A guard on a Python number: ``n == 31``, ``self.k != 4``, ``2 <= n`` (torch strips L[...]).
_NAME = r"[A-Za-z_][\w.]*(?:\[[^\]]+\][\w.]*)*"
_NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_SCALAR_RE = re.compile(rf"^(?:not \()?\(?\s*(?:{_NAME}\s*(?:==|!=|<=|>=|<|>)\s*{_NUM}"
                        rf"|{_NUM}\s*(?:==|!=|<=|>=|<|>)\s*{_NAME}"
                        rf"(?:\s*(?:and|<=|<)\s*{_NAME}?\s*(?:<=|<)?\s*{_NUM}?)?)\s*\)?$")
_CID_RE = re.compile(r"^!?\d+(?:/\d+)*(?:_\d+)?: ")  # the failed cache entry's "0/1: "
_PARAM_RE = re.compile(r"_parameters\[|_buffers\[")
_MODULE_ATTR_RE = re.compile(r"^(?:self|L\['self'\])[.\[]")
_OTHER_HINTS = (
    ("dtype mismatch", "a tensor's dtype changed"),
    ("device mismatch", "a tensor's device changed"),
    ("requires_grad mismatch", "requires_grad changed"),
    ("rank mismatch", "a tensor's number of dimensions changed"),
    ("___check_type_id", "an input's type changed"),
    ("___check_obj_id", "an object's identity changed"),
    ("global state", "global state (grad mode, autocast, ...) changed"),
    ("grad_mode", "grad mode changed"),
)


def _strip(reason: str) -> str:
    """The guard text without torch's ``# user code`` annotation."""
    return reason.split("  #", 1)[0].split(" # ", 1)[0].strip()


def classify(reason: str) -> str:
    """``size``, ``scalar`` or ``other`` for one guard-failure reason (text after ``0/0: ``)."""
    text = _strip(reason)
    if _SIZE_RE.search(text):
        return "size"
    if _SCALAR_RE.match(text) and not re.search(r"\b(True|False|None)\b", text):
        return "scalar"
    return "other"


def _source(name: str) -> str:
    """A guard's name as a dynamic-sources entry: ``n`` → ``L['n']`` (older torch: as is)."""
    return name if name.startswith(("L[", "G[")) else f"L['{name}']"


def _other_hint(reason: str) -> str:
    for needle, words in _OTHER_HINTS:
        if needle in reason:
            return words
    return "a non-shape guard failed"


def dynamic_sources(frames: tuple[FrameReport, ...],
                    recompiles: tuple[RecompileReport, ...]) -> tuple[str, ...]:
    """TORCH_COMPILE_DYNAMIC_SOURCES entries for inputs that automatic dynamic made dynamic.

    Tensors become ``SOURCE:DIM`` (per-dim form, torch >= 2.6) from the dims the guards show
    as dynamic; a tensor with no TENSOR_MATCH evidence stays a whole-source entry; ints are
    whole sources. Parameters and module attributes are left out (they are forced static on
    purpose; see the static-parameters suggestion).
    """
    out: dict[str, None] = {}
    for f in frames:
        dims = dict(f.dynamic_dims)
        for d in f.dynamic_inputs:
            if not d.origin.startswith("automatic") or _PARAM_RE.search(d.source):
                continue
            if ":" in d.source.rsplit("]", 1)[-1]:
                out[d.source] = None
            elif dims.get(d.source):
                for dim in dims[d.source]:
                    out[f"{d.source}:{dim}"] = None
            else:
                out[d.source] = None
    return tuple(out)


def _where(user: object) -> str:
    file, line = getattr(user, "file", ""), getattr(user, "line", 0)
    return f"{file}:{line}" if file else "an unknown location"


def _ev(line: int, cid: str, text: str) -> str:
    return f"line {line}: [{cid}] {text}" if cid else f"line {line}: {text}"


def advise(diag: Diagnosis, frames: Mapping[tuple[int | None, str], FrameReport]) -> tuple[Advice, ...]:
    """Every suggestion the evidence supports, most useful first."""
    out: list[Advice] = []
    out += _mark_dynamic_up_front(diag)
    out += _specializations(diag)
    out += _scalars(diag)
    out += _static_module_state(diag)
    out += _zero_one(diag)
    out += _others(diag)
    out += _limits(diag)
    out += _graph_breaks(diag)
    return tuple(out)


def _mark_dynamic_up_front(diag: Diagnosis) -> list[Advice]:
    out = []
    for f in diag.frames:
        auto = [d for d in f.dynamic_inputs if d.origin.startswith("automatic")
                and not _PARAM_RE.search(d.source)]
        if not auto:
            continue
        # Only the recompiles up to the one where automatic dynamic kicked in are what
        # marking up front saves; later ones (a specialization, 0/1) have other fixes.
        last = max(_num(c) for c in (*f.marking_compiles, *(d.compile_id for d in auto)))
        size_recompiles = [r for r in diag.recompiles if r.rank == f.rank
                           and _frame(r.compile_id) == f.frame_id and r.cause == "size"
                           and _num(r.compile_id) <= last]
        if not size_recompiles:
            continue
        dims = dict(f.dynamic_dims)
        entries = [f"{d.source}:{i}" for d in auto for i in dims.get(d.source, ())] or \
                  [d.source for d in auto]
        mark = "; ".join(f"torch._dynamo.mark_dynamic({_arg(e)}, {e.rsplit(':', 1)[1]})"
                         for e in entries if _arg(e))
        evidence = tuple(_ev(r.line, r.compile_id, "recompile: " + "; ".join(r.reasons))
                         for r in size_recompiles[:3]) + tuple(
            _ev(d.line, d.compile_id, f"marking {d.source} as dynamic ({d.origin})") for d in auto)
        out.append(Advice(
            kind="mark-dynamic",
            message=(f"{f.function or 'frame ' + f.frame_id} recompiled {len(size_recompiles)}x "
                     f"for size changes before automatic dynamic made {', '.join(d.source for d in auto)} "
                     "dynamic; mark them dynamic up front to skip those compiles."),
            fix=(f'TORCH_COMPILE_DYNAMIC_SOURCES="{",".join(entries)}"'
                 + (f"  (or, in code before the first call: {mark})" if mark else "")),
            evidence=evidence, rank=f.rank))
    return out


def _num(compile_id: str) -> int:
    """The compile number of a compile id's text (0 when it is not one)."""
    cid = CompileId.parse(compile_id)
    return cid.compile or 0 if cid else 0


def _frame(compile_id: str) -> str:
    """The frame of a compile id's text (:attr:`CompileId.frame_key`; "" when not one)."""
    cid = CompileId.parse(compile_id)
    return cid.frame_key if cid else ""


def _arg(entry: str) -> str | None:
    """``x`` for ``L['x']:0``; None for nested sources (no one-line mark_dynamic for those).

    ``L['kwargs']['ids']`` names a dict inside a wrapper's frame, not a variable of the caller,
    so a one-line ``mark_dynamic(kwargs['ids'], 0)`` "before the first call" would mislead.
    """
    source, sep, dim = entry.rpartition(":")
    expr = local_expr(source) if sep and dim.isdigit() else None
    return expr if expr is not None and expr.isidentifier() else None


def _specializations(diag: Diagnosis) -> list[Advice]:
    out = []
    for s in diag.specializations:
        src = ", ".join(s.sources) or s.symbol
        evidence = (_ev(s.line, s.compile_id, f"{s.symbol or src} = {s.value} ({s.reason})"
                        + (f" from guard {s.guard}" if s.guard else "")),)
        if s.reason == "constraint_violation":
            out.append(Advice(
                kind="constraint-violation",
                message=(f"{src} was marked dynamic but the code at {_where(s.user)} "
                         f"specialized it to {s.value}: `{s.user.code if s.user else ''}`."),
                fix=("use torch._dynamo.maybe_mark_dynamic instead of mark_dynamic (a hint, not "
                     "a demand), or rewrite the comparison so it does not depend on the size"),
                evidence=evidence, rank=s.rank))
        elif s.user is not None:
            out.append(Advice(
                kind="user-specialization",
                message=(f"{src} was specialized to {s.value} by user code at {_where(s.user)}: "
                         f"`{s.user.code}`; each new value of it compiles again."),
                fix=("rewrite the branch so it does not compare the size/int to a constant "
                     "(e.g. torch.where, torch.cond), or keep it static if only a few values occur"),
                evidence=evidence, rank=s.rank))
        else:
            out.append(Advice(
                kind="framework-specialization",
                message=f"{src} was specialized to {s.value} inside torch ({s.framework or 'framework code'}).",
                fix="look at the guard that caused it (run with TORCH_LOGS=+dynamic and "
                    f'TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED="{s.guard}")' if s.guard else
                    "run with TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL to see the stack",
                evidence=evidence, rank=s.rank))
    return out


def _scalars(diag: Diagnosis) -> list[Advice]:
    groups: dict[tuple[int | None, str], list[RecompileReport]] = {}
    for r in diag.recompiles:
        if r.cause == "scalar":
            groups.setdefault((r.rank, r.function), []).append(r)
    out = []
    for (rank, function), recs in groups.items():
        first = _strip(_CID_RE.sub("", recs[0].reasons[0])) if recs[0].reasons else ""
        name = re.split(r"\s*(?:==|!=|<=|>=|<|>)\s*", first)[0]
        on_module = bool(_MODULE_ATTR_RE.match(name))
        fix = ('set torch._dynamo.config.allow_unspec_int_on_nn_module = True (module ints are '
               'static by default)' if on_module else
               f'TORCH_COMPILE_DYNAMIC_SOURCES="{_source(name)}" to make the int dynamic from the '
               "first compile, or pass it as a 0-d tensor")
        out.append(Advice(
            kind="scalar-recompile",
            message=(f"{function} recompiled {len(recs)}x because a Python number changed value "
                     f"({first})."),
            fix=fix, rank=rank,
            evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3])))
    return out


def _static_module_state(diag: Diagnosis) -> list[Advice]:
    params = [r for r in diag.recompiles if any(_PARAM_RE.search(x) for x in r.reasons)]
    props = [r for r in diag.recompiles if r not in params and r.cause == "size"
             and any(re.search(r"tensor 'self\.", x) for x in r.reasons)]
    out = []
    if params:
        out.append(Advice(
            kind="static-parameters",
            message=f"{len(params)} recompile(s) were caused by parameter/buffer shapes, which are static by default.",
            fix="torch._dynamo.config.force_parameter_static_shapes = False",
            evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in params[:3])))
    if props:
        out.append(Advice(
            kind="static-module-properties",
            message=f"{len(props)} recompile(s) were caused by nn.Module tensor attributes, static by default.",
            fix="torch._dynamo.config.force_nn_module_property_static_shapes = False",
            evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in props[:3])))
    return out


def _zero_one(diag: Diagnosis) -> list[Advice]:
    from dyncli.diagnose.branches import crossing  # a user's size branch is not 0/1 (issue 21)

    recs = [r for r in diag.recompiles if r.cause == "size" and crossing(r) is None and any(
        re.match(r"^2 <= \S+\.size\(\)", _CID_RE.sub("", x)) or re.search(r"expected \d+, actual [01]$", x)
        for x in r.reasons)]
    if not recs:
        return []
    return [Advice(
        kind="zero-one-specialization",
        message=(f"{len(recs)} recompile(s) because a size became 0 or 1: torch always "
                 "specializes sizes 0 and 1, so a dynamic graph (guarded `2 <= size`) cannot serve them."),
        fix=("torch._dynamo.decorators.mark_unbacked(tensor, dim) for that dim, or "
             "torch.fx.experimental._config.backed_size_oblivious = True; or accept one extra compile"),
        evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3]))]


def _others(diag: Diagnosis) -> list[Advice]:
    recs = [r for r in diag.recompiles if r.cause == "other"]
    if not recs:
        return []
    what = sorted({_other_hint(x) for r in recs for x in r.reasons})
    return [Advice(
        kind="non-shape-recompile",
        message=(f"{len(recs)} recompile(s) were not about shapes ({'; '.join(what)}); "
                 "dynamic shapes will not fix these."),
        fix="keep the changing property constant across calls (same dtype/device/type/grad mode)",
        evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3]))]


def _limits(diag: Diagnosis) -> list[Advice]:
    return [Advice(
        kind="recompile-limit",
        message=(f"{x.function} hit torch._dynamo.config.{x.limit_name} ({x.limit}) and now "
                 "runs eagerly (uncompiled) for new inputs."),
        fix=f"fix the recompile cause above; raising torch._dynamo.config.{x.limit_name} only hides it",
        evidence=(_ev(x.line, x.compile_id, f"last reason: {x.last_reason}"),), rank=x.rank)
        for x in diag.recompile_limits]


def _graph_breaks(diag: Diagnosis) -> list[Advice]:
    return [Advice(
        kind="graph-break",
        message=(f"graph break at {b.file}:{b.user_line} ({b.count}x): "
                 f"{b.explanation or b.reason}"),
        fix=b.hints[0] if b.hints else "move the untraceable call out of the compiled function",
        evidence=(_ev(b.line, b.compile_ids[0] if b.compile_ids else "",
                      f"Graph break in user code at {b.file}:{b.user_line}"),), rank=b.rank)
        for b in diag.graph_breaks]

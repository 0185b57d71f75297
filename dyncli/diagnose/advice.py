"""Rules of dyncli diagnose: recompile causes, dynamic sources, and suggestions with evidence.

Pure functions over the ``Diagnosis`` rows; the workflow they automate is the reference
guide's "Reducing Compilations: Step by Step" (docs/diagnose.md lists each rule).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from dyncli.diagnose.model import (
    Advice,
    Diagnosis,
    FrameReport,
    RecompileReport,
    SpecializationReport,
)
from dyncli.logparse.events import CompileId
from dyncli.quoting import shell_quote
from dyncli.sources import from_reason, is_param, local_expr, size_source

# A guard on a tensor's geometry: torch's TENSOR_MATCH message or a shape guard on a size symbol.
_SIZE_RE = re.compile(r"size mismatch|stride mismatch|storage_offset|\.size\(\)|\.stride\(\)"
                      r"|\.shape\b|numel\(\)|_dynamo_dynamic_indices")
# ``tensor 'x' size mismatch at index 0. expected 2, actual 3`` (torch/_dynamo/guards.py): the
# name as strip_local_scope prints it (dyncli.sources.from_reason turns it back into a source).
_MISMATCH_RE = re.compile(r"^tensor '(?P<name>.+)' size mismatch at index (?P<dim>\d+)\. "
                          r"expected (?P<exp>\d+), actual (?P<act>\d+)")
# ``_dynamo_dynamic_indices not a subset: runtime {0, 1} is not a subset of compiled {0}``
_INDICES_RE = re.compile(r"_dynamo_dynamic_indices not a subset: runtime \{(?P<rt>[\d, ]*)\} "
                         r"is not a subset of compiled \{(?P<c>[\d, ]*)\}")
_PARAM_HINT = "force_parameter_static_shapes"
# A specialization's location inside torch (the frame, when no compiled frame has that file).
_TORCH_FILE_RE = re.compile(r"(?:^|/)torch/|^(?:nn|_dynamo|_refs|_decomp|_prims|fx|_inductor|"
                            r"_higher_order_ops|_subclasses|utils)/|^_meta_registrations\.py$"
                            r"|^functional\.py$|^_tensor\.py$")
# A guard on a Python number: ``n == 31``, ``self.k != 4``, ``2 <= n`` (torch strips L[...]).
_NAME = r"[A-Za-z_][\w.]*(?:\[[^\]]+\][\w.]*)*"
_NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_SCALAR_RE = re.compile(rf"^(?:not \()?\(?\s*(?:{_NAME}\s*(?:==|!=|<=|>=|<|>)\s*{_NUM}"
                        rf"|{_NUM}\s*(?:==|!=|<=|>=|<|>)\s*{_NAME}"
                        rf"(?:\s*(?:and|<=|<)\s*{_NAME}?\s*(?:<=|<)?\s*{_NUM}?)?)\s*\)?$")
_CID_RE = re.compile(r"^!?\d+(?:/\d+)*(?:_\d+)?: ")  # the failed cache entry's "0/1: "
_PARAM_RE = re.compile(r"_parameters\[|_buffers\[|force_parameter_static_shapes")
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
    """Every suggestion the evidence supports, most useful first.

    Each fix names sources as torch matches them and is tied to what can change that kind of
    input (tensor dims: the allow-list or mark_dynamic; ints: the allow-list; sizes 0/1: the
    unbacked list; floats and code that specializes a value: no list helps). A fix that
    cannot lower the compiles is not printed (tests/integration/test_advice.py applies each).
    """
    pins = _pins(diag)
    out: list[Advice] = []
    out += _mark_dynamic_up_front(diag, pins)
    out += _marking_changes(diag)
    out += _marked_static(diag)
    out += _specializations(diag)
    out += _scalars(diag)
    out += _static_module_state(diag)
    out += _zero_one(diag)
    out += _others(diag)
    out += _limits(diag, {a.rank for a in out if a.kind == "size-pinned"})
    out += _graph_breaks(diag)
    return tuple(out)


_Key = tuple[int | None, str, int | None]  # (rank, source, dim or None for the whole source)


@dataclass
class _Dim:
    """What the log shows about one dim (or a whole source) that changed between compiles."""

    values: set[int] = field(default_factory=set)
    recompiles: dict[str, RecompileReport] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)  # compile id -> size it expected
    functions: dict[str, None] = field(default_factory=dict)
    auto: bool = False  # automatic dynamic marked it (torch saw it change)
    evidence: list[str] = field(default_factory=list)
    # recompile id -> the compile numbers of the cache entries it failed on this dim (static)
    against: dict[str, set[int]] = field(default_factory=dict)
    # the recompile-limit warning's last reason failed on it in a compile after the first
    # (torch's default warnings: nothing says what that compile was made for)
    limit_later: list[str] = field(default_factory=list)


def _pins(diag: Diagnosis) -> dict[tuple[int | None, str, int], list[SpecializationReport]]:
    """Specializations of size symbols, by (rank, tensor source, dim)."""
    out: dict[tuple[int | None, str, int], list[SpecializationReport]] = {}
    for s in diag.specializations:
        for src in s.sources:
            ss = size_source(src)
            if ss is not None:
                out.setdefault((s.rank, ss[0], ss[1]), []).append(s)
    return out


def _pinned_always(specs: list[SpecializationReport]) -> bool:
    """Specialized in two compiles or more, or by the guard limit: every value compiles."""
    return len({s.compile_id for s in specs}) >= 2 or any(s.reason == "forcing_spec" for s in specs)


def _mismatch(reason: str) -> tuple[str, int, int, int] | None:
    """(source, dim, expected, actual) of a ``size mismatch`` reason, source spelled as torch's."""
    m = _MISMATCH_RE.match(_strip(_CID_RE.sub("", reason)))
    if m is None:
        return None
    return from_reason(m["name"]), int(m["dim"]), int(m["exp"]), int(m["act"])


def _size_dims(diag: Diagnosis) -> dict[_Key, _Dim]:
    """Every tensor dim the log shows changing: recompile reasons, the recompile-limit warning's
    last reason, and automatic dynamic's markings (parameters are left to static-parameters)."""
    dims: dict[_Key, _Dim] = {}
    for r in diag.recompiles:
        for reason in r.reasons:
            mm = _mismatch(reason)
            if mm is None or is_param(mm[0]):
                continue
            d = dims.setdefault((r.rank, mm[0], mm[1]), _Dim())
            d.values |= {mm[2], mm[3]}
            d.recompiles.setdefault(r.compile_id, r)
            d.expected.setdefault(r.compile_id, mm[2])
            d.functions[r.function] = None
            failed = _failed_entry(reason)
            if failed is not None:
                d.against.setdefault(r.compile_id, set()).add(failed)
    for x in diag.recompile_limits:
        mm = _mismatch(x.last_reason)
        if mm is not None and not is_param(mm[0]):
            d = dims.setdefault((x.rank, mm[0], mm[1]), _Dim())
            d.values |= {mm[2], mm[3]}
            d.functions[x.function] = None
            d.evidence.append(_ev(x.line, x.compile_id, f"last reason: {x.last_reason}"))
            failed = _failed_entry(x.last_reason)
            if failed:  # the newest cache entry, compiled after the first, kept it static
                cid = CompileId.parse(x.compile_id)
                d.limit_later.append(f"{cid.frame}/{failed}" if cid else str(failed))
    scalars = {from_reason(re.split(r"\s*(?:==|!=|<=|>=|<|>)\s*", _strip(_CID_RE.sub("", x)))[0])
               for r in diag.recompiles if r.cause == "scalar" for x in r.reasons}
    for f in diag.frames:
        known = dict(f.dynamic_dims)
        for di in f.dynamic_inputs:
            if not di.origin.startswith("automatic") or _PARAM_RE.search(di.source) \
                    or di.source in scalars:
                continue  # ints have their own advice (scalar-recompile)
            src, sep, tail = di.source.rpartition(":")
            whole = not (sep and tail.isdigit() and "]" not in tail)
            source = di.source if whole else src
            for dim in ((int(tail),) if not whole else known.get(source, ()) or (None,)):
                d = dims.setdefault((f.rank, source, dim), _Dim())
                d.auto = True
                d.functions[f.function] = None
                d.evidence.append(_ev(di.line, di.compile_id,
                                      f"marking {di.source} as dynamic ({di.origin})"))
    return dims


def _resume(function: str) -> bool:
    return function.startswith("torch_dynamo_resume_in_")


def _failed_entry(reason: str) -> int | None:
    """The compile number of the cache entry a reason failed on (``0/1: …`` → 1)."""
    m = _CID_RE.match(reason)
    cid = CompileId.parse(m.group(0)[:-2].lstrip("!")) if m else None
    return cid.compile if cid is not None else None


def _kept_static(d: _Dim) -> list[str]:
    """Compiles made for a change of this dim that still guarded it as a static size.

    torch's automatic dynamic makes a size that changed dynamic at the next compile. A later
    recompile failing on that compile's *static* guard of the same dim means something keeps
    the dim static: torch.compile(dynamic=False), a mark_static call, or code that specializes
    the size at every value (a loop over it, the guard limit). A ``recompiles`` log does not
    say which, and an allow-list entry helps only the first.
    """
    made: set[tuple[int, str, int | None, int | None]] = set()
    for cid, r in d.recompiles.items():
        c = CompileId.parse(cid)
        if c is not None and r.compiled:
            made.add((c.generation, c.process, c.frame, c.compile))
    out: dict[str, None] = {}
    for cid, nums in d.against.items():
        c = CompileId.parse(cid)
        for n in sorted(nums):
            if c is not None and (c.generation, c.process, c.frame, n) in made:
                out[f"{c.frame}/{n}"] = None
    return list(out)


def _mark_dynamic_up_front(diag: Diagnosis,
                           pins: dict[tuple[int | None, str, int], list[SpecializationReport]]
                           ) -> list[Advice]:
    """One allow-list per rank for every dim that changed (all frames: the list is global)."""
    by_rank: dict[int | None, list[tuple[str, int | None, _Dim]]] = {}
    notes: dict[int | None, list[str]] = {}
    static = {(r, src, dim) for r, src, ds in diag.marked_static for dim in ds}
    coarse = diag.log_level in ("recompiles", "warnings")
    held: list[tuple[int | None, str, int | None, _Dim, list[str]]] = []
    for (rank, source, dim), d in _size_dims(diag).items():
        if not d.auto and len(d.values - {0, 1}) < 2:
            continue  # one size >= 2 seen: nothing to save (0/1 has its own advice)
        if coarse and (rank, source, dim) not in static:
            kept = _kept_static(d) or (d.limit_later if not d.recompiles else [])
            if kept:
                held.append((rank, source, dim, d, kept))
                continue  # the log cannot tell what keeps it static: no fix (size-pinned)
        if (rank, source, dim) in static or (dim is None and any(
                (rank, source) == (r, src) for r, src, _ in diag.marked_static)):
            continue  # the code marks it static: see the mark-static suggestion
        specs = pins.get((rank, source, dim), []) if dim is not None else [
            s for (r, src, _), ss in pins.items() if r == rank and src == source for s in ss]
        if specs and _pinned_always(specs):
            continue  # every value is specialized: see the specialization advice
        if specs:
            s = specs[0]
            where = f"{_where(s.user)} `{s.user.code}`" if s.user else (s.framework or "torch")
            notes.setdefault(rank, []).append(
                f"dim {dim} of {source} is pinned to {s.value} by {where}: "
                "it is marked with maybe_mark_dynamic, which allows that")
        # A recompile away from a compile the code pinned (expected the pinned value) is the
        # specialization's, not one that marking up front saves.
        pinned = {s.value for s in specs}
        d.recompiles = {cid: r for cid, r in d.recompiles.items()
                        if str(d.expected.get(cid, "")) not in pinned}
        by_rank.setdefault(rank, []).append((source, dim, d))
    out = _held_static(held)
    dynamic_log = diag.log_level in ("dynamic", "trace")
    for rank, chosen in by_rank.items():
        named = [f"{src}:{dim}" if dim is not None else src for src, dim, _ in chosen]
        entries = named
        if coarse:
            # torch names only the first guard that failed per compile: the inputs that changed
            # with these are not in this log (a second input of the same batch, a list's other
            # tensors, a resume frame's locals). The list covers the dims seen, of every input
            # (torch reads an entry as a regex: `.*:0` is dim 0 of every source).
            entries = [f".*:{dim}" for dim in sorted({dim for _, dim, _ in chosen
                                                      if dim is not None})]
            entries += [src for src, dim, _ in chosen if dim is None]
        recs = {cid: r for _, _, d in chosen for cid, r in d.recompiles.items() if r.compiled}
        functions = list(dict.fromkeys(fn for _, _, d in chosen for fn in d.functions
                                       if not _resume(fn)))
        code = "" if coarse else _mark_lines(chosen, pins, rank, dynamic_log)
        evidence = tuple(_ev(r.line, r.compile_id, "recompile: " + "; ".join(r.reasons))
                         for r in list(recs.values())[:3]) + tuple(
            e for _, _, d in chosen for e in d.evidence[:2])
        what = ", ".join(named)
        message = (f"{', '.join(functions) or 'the compiled code'} recompiled "
                   + (f"{len(recs)}x " if recs else "")
                   + f"for size changes of {what}"
                   + (" (automatic dynamic then made them dynamic)"
                      if any(d.auto for _, _, d in chosen) else "")
                   + "; mark them dynamic up front to skip those compiles.")
        if notes.get(rank):
            message += " Note: " + "; ".join(notes[rank]) + "."
        if coarse:
            dims = ", ".join(str(dim) for dim in sorted({dim for _, dim, _ in chosen
                                                           if dim is not None}))
            message += (" This log names only the first guard that failed in each compile "
                        "(recompiles_verbose too), so inputs that changed together with these "
                        f"are not in it: the list makes dim {dims} of every input dynamic "
                        "(torch reads each entry as a regex; parameters and ints match too); "
                        'TORCH_LOGS="+dynamic,recompiles,guards" or TORCH_TRACE name each input, '
                        "for a list of only those.")
        out.append(Advice(
            kind="mark-dynamic", message=message,
            fix=(f'TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(",".join(entries))}'
                 + (f"  (or, in code, {code})" if code else "")),
            evidence=evidence, rank=rank))
    return out


def _held_static(held: list[tuple[int | None, str, int | None, _Dim, list[str]]]
                 ) -> list[Advice]:
    """Dims that recompiled at static sizes after a compile made for their change: no fix."""
    out = []
    for rank, source, dim, d, kept in held:
        name = f"{source}:{dim}" if dim is not None else source
        fns = ", ".join(fn for fn in d.functions if not _resume(fn)) or "the compiled code"
        warning_only = not d.recompiles
        # the message starts with the entry it is about (causes.py joins it to that input)
        seen = (f"{name}: torch's recompile-limit warning says compile {kept[0]} of {fns} kept "
                "it static, and does not say what that compile was made for"
                if warning_only else
                f"{name}: {fns} recompiled for it again after compile {', '.join(kept)}, made "
                "for a change of it, kept it static (automatic dynamic would have made it "
                "dynamic)")
        out.append(Advice(
            kind="size-pinned", rank=rank,
            message=(f"{seen}: something keeps that size static — torch.compile(dynamic=False), "
                     "a torch._dynamo.mark_static call, or code that specializes the size at "
                     "every value (a loop over it, the guard limit) — and this log does not say "
                     "which, so no fix is given (an allow-list entry helps only the first)."),
            fix=("none from this log: TORCH_LOGS=\"+dynamic,recompiles,guards\" (or TORCH_TRACE) "
                 "shows what keeps it static, and gives the fix that removes these compiles"),
            evidence=tuple(_ev(r.line, r.compile_id, "recompile: " + "; ".join(r.reasons))
                           for r in list(d.recompiles.values())[:3]) + tuple(d.evidence[:2])))
    return out


def _mark_lines(chosen: list[tuple[str, int | None, _Dim]],
                pins: dict[tuple[int | None, str, int], list[SpecializationReport]],
                rank: int | None, dynamic_log: bool) -> str:
    """``before each call of f: torch._dynamo.mark_dynamic(x, 0)`` for every chosen dim, or ''
    when one of them has no mark_dynamic form (an attribute, a global, a resume frame only).

    mark_dynamic raises when code specializes the dim, so it is used only where the log shows
    every guard on that size (a +dynamic log or a trace) and none pins it; else
    maybe_mark_dynamic, which allows specialization.
    """
    calls: dict[str, dict[str, dict[str, list[int]]]] = {}
    for source, dim, d in chosen:
        expr = local_expr(source)
        fns = [fn for fn in d.functions if not _resume(fn)]
        # ``kwargs['ids']`` names a dict of a wrapper's frame, not a variable of the caller
        if expr is None or "['" in expr or dim is None or not fns:
            return ""
        free = dynamic_log and not pins.get((rank, source, dim))
        for fn in fns:
            per = calls.setdefault(fn, {}).setdefault(expr, {})
            per.setdefault("mark_dynamic" if free else "maybe_mark_dynamic", []).append(dim)
    parts = []
    for fn, exprs in calls.items():
        lines = [f"torch._dynamo.{how}({expr}, {ds[0] if len(ds) == 1 else sorted(ds)})"
                 for expr, hows in exprs.items() for how, ds in hows.items()]
        parts.append(f"before each call of {fn}: " + "; ".join(lines))
    return " / ".join(parts)


def _num(compile_id: str) -> int:
    """The compile number of a compile id's text (0 when it is not one)."""
    cid = CompileId.parse(compile_id)
    return cid.compile or 0 if cid else 0


def _marked_static(diag: Diagnosis) -> list[Advice]:
    """Dims the code marks static that changed size: no allow-list entry overrides that."""
    changed = {(r, src, dim) for (r, src, dim) in _size_dims(diag)}
    out = []
    for rank, source, dims in diag.marked_static:
        hit = [d for d in dims if (rank, source, d) in changed]
        if not hit:
            continue
        expr = local_expr(source) or source
        out.append(Advice(
            kind="mark-static", rank=rank,
            message=(f"dim {', '.join(map(str, hit))} of {source} is marked static by the code "
                     f"(torch._dynamo.mark_static) and changed size: each new size compiles "
                     "again, and no allow-list entry overrides mark_static."),
            fix=(f"remove the torch._dynamo.mark_static({expr}, …) call for dim "
                 f"{', '.join(map(str, hit))} if that size varies"),
            evidence=()))
    return out


def _marking_changes(diag: Diagnosis) -> list[Advice]:
    """``_dynamo_dynamic_indices not a subset``: the code marks different dims on different calls."""
    out = []
    for r in diag.recompiles:
        found = next((m for x in r.reasons if (m := _INDICES_RE.search(x))), None)
        if found is None:
            continue
        dims = sorted({int(d) for g in (found["rt"], found["c"]) for d in g.split(",") if d.strip()})
        frame = next((f for f in diag.frames if f.rank == r.rank
                      and f.function == r.function), None)
        marked = [src for src, ds in (frame.dynamic_dims if frame else ()) if ds]
        expr = local_expr(marked[0]) if len(marked) == 1 else None
        fix = (f"(in code, before each call of {r.function}: torch._dynamo.mark_dynamic("
               f"{expr}, {dims}))" if expr and not _resume(r.function) else
               f"mark the same dims {dims} of that tensor on every call")
        out.append(Advice(
            kind="mark-dynamic-dims-changed", rank=r.rank,
            message=(f"{r.function} recompiled because the code marked different dims "
                     + (f"of {marked[0]} " if len(marked) == 1 else "")
                     + f"dynamic on different calls ({{{found['c']}}} when compiled, "
                     f"{{{found['rt']}}} now); mark the same dims every time (no allow-list "
                     "entry changes what mark_dynamic recorded on the tensor)."),
            fix=fix, evidence=(_ev(r.line, r.compile_id, "; ".join(r.reasons)),)))
    return out


def _user_file(file: str, frame_files: set[tuple[str, str]]) -> bool:
    """Whether a location is the user's: the file of a compiled frame, or not inside torch.
    ``frame_files``: ``_frame_files`` of the frames (a few files, for thousands of frames)."""
    norm = file.replace("\\", "/")
    if any(full.endswith(norm) or norm.endswith(raw) for full, raw in frame_files):
        return True
    return _TORCH_FILE_RE.search(norm) is None


def _frame_files(frames: tuple[FrameReport, ...]) -> set[tuple[str, str]]:
    """The frames' files, each as (with / separators, as given), once each."""
    return {(f.file.replace("\\", "/"), f.file) for f in frames if f.file}


def _specializations(diag: Diagnosis) -> list[Advice]:
    out = []
    limit: dict[tuple[int | None, str], list[SpecializationReport]] = {}
    users: dict[tuple[int | None, str, str, int], list[SpecializationReport]] = {}
    frame_files = _frame_files(diag.frames)
    for s in diag.specializations:
        src = ", ".join(s.sources) or s.symbol
        evidence = (_ev(s.line, s.compile_id, f"{s.symbol or src} = {s.value} ({s.reason})"
                        + (f" from guard {s.guard}" if s.guard else "")),)
        if s.reason == "forcing_spec":
            limit.setdefault((s.rank, src), []).append(s)
        elif s.reason == "constraint_violation":
            out.append(Advice(
                kind="constraint-violation",
                message=(f"{src} was marked dynamic but the code at {_where(s.user)} "
                         f"specialized it to {s.value}: `{s.user.code if s.user else ''}`."),
                fix=("use torch._dynamo.maybe_mark_dynamic instead of mark_dynamic (a hint, not "
                     "a demand), or rewrite the comparison so it does not depend on the size"),
                evidence=evidence, rank=s.rank))
        elif s.user is not None and _user_file(s.user.file, frame_files):
            users.setdefault((s.rank, src, s.user.file, s.user.line), []).append(s)
        else:
            inside = (f"torch code at {_where(s.user)} (`{s.user.code}`)" if s.user
                      else s.framework or "framework code")
            out.append(Advice(
                kind="framework-specialization",
                message=f"{src} was specialized to {s.value} inside {inside}.",
                fix=("keep that dim static (a layer's weight fixes it); if you mark the tensor, "
                     "use torch._dynamo.maybe_mark_dynamic for it" if s.user else
                     "look at the guard that caused it (run with TORCH_LOGS=+dynamic and "
                     f'TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED="{s.guard}")' if s.guard else
                     "run with TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL to see the stack"),
                evidence=evidence, rank=s.rank))
    for (rank, src, _, _), specs in users.items():
        s = specs[0]
        values = ", ".join(dict.fromkeys(x.value for x in specs if x.value)) or s.value
        out.append(Advice(
            kind="user-specialization",
            message=(f"{src} was specialized to {values} by user code at {_where(s.user)}: "
                     f"`{s.user.code if s.user else ''}`; each new value of it compiles again."),
            fix=("rewrite the branch so it does not compare the size/int to a constant "
                 "(e.g. torch.where, torch.cond), or keep it static if only a few values occur"),
            evidence=tuple(_ev(x.line, x.compile_id, f"{x.symbol} = {x.value} ({x.reason})"
                               + (f" from guard {x.guard}" if x.guard else ""))
                           for x in specs[:3]), rank=rank))
    for (rank, src), specs in limit.items():
        out.append(Advice(
            kind="guard-limit-specialization",
            message=(f"{src} was specialized in {len(specs)} compile(s) because it had more "
                     "guards than torch.fx.experimental._config.symbol_guard_limit_before_specialize "
                     "allows; each new value compiles again, and no allow-list entry changes that."),
            fix=("raise symbol_guard_limit_before_specialize (or leave it unset), or reduce the "
                 "comparisons on this size"),
            evidence=tuple(_ev(x.line, x.compile_id, f"{x.symbol} forced ({x.guard})")
                           for x in specs[:3]), rank=rank))
    return out


_FLOAT_RE = re.compile(r"-?\d+\.\d*(?:e-?\d+)?$|-?\d+e-?\d+$|inf$|nan$")


def _scalars(diag: Diagnosis) -> list[Advice]:
    groups: dict[tuple[int | None, str, str], list[tuple[RecompileReport, str, str]]] = {}
    for r in diag.recompiles:
        if r.cause != "scalar":
            continue
        for x in r.reasons:
            failed = x.split(": ", 1)[0] if _CID_RE.match(x) else ""
            text = _strip(_CID_RE.sub("", x))
            name = re.split(r"\s*(?:==|!=|<=|>=|<|>)\s*", text)[0]
            if classify(text) == "scalar" and name:
                groups.setdefault((r.rank, r.function, name), []).append((r, failed, text))
    specialized: dict[str, set[str]] = {}
    for sp in diag.specializations:
        for src in sp.sources:
            specialized.setdefault(src, set()).add(sp.compile_id)
    out = []
    for (rank, function, name), items in groups.items():
        recs = list({id(r): r for r, _, _ in items}.values())
        first = items[0][2]
        source = from_reason(name)
        value = re.split(r"\s*(?:==|!=|<=|>=|<|>)\s*", first)[-1]
        # Specialized at two values or more after automatic dynamic had its chance: the code
        # pins every value (``range(n)``), and no list helps. At one value (``if n == 33``)
        # the list still saves the first recompile. (Module ints are static by default: a
        # repeated guard on them says nothing.)
        later = {t for _, failed, t in items if _num(failed) >= 1}
        # A ``recompiles`` log shows no specializations: a guard on the value failing in a
        # compile after the first (made once torch had seen it change, so with the int dynamic)
        # means the code specialized it there, at one value (``if n == 33``: the list saves a
        # compile) or at every value (``range(n)``: it saves none). The log cannot tell which.
        coarse = diag.log_level in ("recompiles", "warnings") and bool(later)
        again = len(specialized.get(source, ())) >= 2 or (
            not source.startswith("L['self']") and (len(later) >= 2 or coarse))
        if _FLOAT_RE.match(value):
            fix = ("pass it as a 0-d tensor to compile once: torch makes a float dynamic after "
                   "one recompile (specialize_float=False), and no allow-list entry changes that")
            what = "a Python float"
        elif again and coarse and len(specialized.get(source, ())) < 2:
            user = next((r.user for r, _, _ in items if r.user is not None), None)
            at = (f" by `{user.code}` at {_where(user)}" if user is not None and user.code
                  else "")
            fix = ("none from this log: its guard failed again in a compile made after it "
                   f"changed, so code specializes it{at} (or dynamic=False keeps it static); at "
                   "every value (a loop over it) no allow-list entry saves a compile, at one "
                   "value (`if n == 33`) it saves one: "
                   'TORCH_LOGS="+dynamic,recompiles,guards" (or TORCH_TRACE) tells which')
            what = "a Python int that the code specializes"
        elif again:
            fix = ("the code specializes it (see the user-specialization suggestion): each value "
                   "compiles again whatever the allow-list says; pass it as a 0-d tensor or "
                   "keep it constant")
            what = "a Python int that the code specializes"
        else:
            fix = (f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(source)} to make the int dynamic "
                   "from the first compile")
            what = "a Python int"
        out.append(Advice(
            kind="scalar-recompile",
            message=f"{function} recompiled {len(recs)}x because {what} changed value ({first}).",
            fix=fix, rank=rank,
            evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3])))
    return out


def _static_module_state(diag: Diagnosis) -> list[Advice]:
    """Parameters whose shape changes: torch keeps them static (force_parameter_static_shapes)."""
    params = [r for r in diag.recompiles if any(_PARAM_RE.search(x) for x in r.reasons)]
    if not params:
        return []
    entries: dict[str, None] = {}
    for r in params:
        for x in r.reasons:
            mm = _mismatch(x)
            if mm is not None and is_param(mm[0]):
                entries[f"{mm[0]}:{mm[1]}"] = None
    config = ("torch._dynamo.config.force_parameter_static_shapes = False (every parameter may "
              "then become dynamic, after one more recompile)")
    return [Advice(
        kind="static-parameters",
        message=(f"{len(params)} recompile(s) were caused by parameter/buffer shapes, which torch "
                 "keeps static (force_parameter_static_shapes)."),
        fix=(f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(','.join(entries))}  (or {config})"
             if entries else config),
        evidence=tuple(_ev(r.line, r.compile_id, "; ".join(r.reasons)) for r in params[:3]))]


_ZERO_ONE_RE = re.compile(r"^2 <= (?P<name>\S+?)\.size\(\)\[(?P<dim>\d+)\]")


def _zero_one(diag: Diagnosis) -> list[Advice]:
    from dyncli.diagnose.branches import crossing  # a user's size branch is not 0/1 (issue 21)

    recs = []
    dims: dict[tuple[int | None, str, int], dict[str, None]] = {}
    for r in diag.recompiles:
        if r.cause != "size" or crossing(r) is not None:
            continue
        hit = False
        for x in r.reasons:
            text = _strip(_CID_RE.sub("", x))
            m = _ZERO_ONE_RE.match(text)
            mm = _mismatch(x)
            if m is not None:
                key = (r.rank, from_reason(m["name"]), int(m["dim"]))
            elif mm is not None and mm[3] in (0, 1):
                key = (r.rank, mm[0], mm[1])
            else:
                continue
            hit = True
            dims.setdefault(key, {})[r.function] = None
        if hit:
            recs.append(r)
    if not recs:
        return []
    entries = [f"{src}:{dim}" for (_, src, dim) in dims]
    parts: list[str] = []
    for (_, src, dim), fns in dims.items():
        expr = local_expr(src)
        user = [fn for fn in fns if not _resume(fn)]
        if expr is None or not user:
            parts = []
            break
        parts += [f"before each call of {fn}: torch._dynamo.decorators.mark_unbacked({expr}, {dim})"
                  for fn in user]
    code = " / ".join(parts)
    return [Advice(
        kind="zero-one-specialization",
        message=(f"{len(recs)} recompile(s) because a size became 0 or 1: torch always "
                 "specializes sizes 0 and 1, so a dynamic graph (guarded `2 <= size`) cannot "
                 "serve them. An unbacked size serves them all (code must not branch on it)."),
        fix=(f"TORCH_COMPILE_UNBACKED_SOURCES={shell_quote(','.join(entries))}"
             + (f"  (or, in code, {code})" if code else "")
             + "; or accept one extra compile"),
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


def _limits(diag: Diagnosis, held: set[int | None]) -> list[Advice]:
    out = []
    for x in diag.recompile_limits:
        size = _mismatch(x.last_reason) is not None
        pinned = size and x.rank in held
        out.append(Advice(
            kind="recompile-limit",
            message=(f"{x.function} hit torch._dynamo.config.{x.limit_name} ({x.limit}) and now "
                     "runs eagerly (uncompiled) for new inputs."
                     + (" Its last reason is a size this log cannot tell the cause of (see the "
                        "size-pinned finding)." if pinned else
                        " Its last reason is a size change: the mark-dynamic suggestion removes "
                        "those recompiles." if size else "")),
            fix=(f"find what keeps the size static (size-pinned); raising "
                 f"torch._dynamo.config.{x.limit_name} only hides the recompiles" if pinned else
                 f"apply the mark-dynamic fix; raising torch._dynamo.config.{x.limit_name} only "
                 "hides the recompiles" if size else
                 f"fix the recompile cause above; raising torch._dynamo.config.{x.limit_name} "
                 "only hides it"),
            evidence=(_ev(x.line, x.compile_id, f"last reason: {x.last_reason}"),), rank=x.rank))
    return out


def _graph_breaks(diag: Diagnosis) -> list[Advice]:
    return [Advice(
        kind="graph-break",
        message=(f"graph break at {b.file}:{b.user_line} ({b.count}x): "
                 f"{b.explanation or b.reason}"),
        fix=b.hints[0] if b.hints else "move the untraceable call out of the compiled function",
        evidence=(_ev(b.line, b.compile_ids[0] if b.compile_ids else "",
                      f"Graph break in user code at {b.file}:{b.user_line}"),), rank=b.rank)
        for b in diag.graph_breaks]


def no_list_helps(diag: Diagnosis) -> dict[str, str]:
    """Allow-list entries (``L['x']:0``, ``L['n']``) this diagnosis shows no list entry lowers
    the compiles of, and why: what ``dyncli suggest --from-trace`` leaves out (issue 26).

    A size or int specialized at every value (two compiles or more, or by the guard limit), a
    dim the code marks static, a tensor whose mark_dynamic dims change between calls, a float.
    """
    out: dict[str, str] = {}
    for (_, src, dim), specs in _pins(diag).items():
        if _pinned_always(specs):
            why = ("the guard limit (symbol_guard_limit_before_specialize) specializes it"
                   if any(s.reason == "forcing_spec" for s in specs) else
                   "code specializes it at every value")
            out.setdefault(f"{src}:{dim}", f"{why}, so each new size compiles again")
    for s in diag.specializations:
        if s.sources and size_source(s.sources[0]) is None:
            specs = [x for x in diag.specializations if x.sources == s.sources]
            if _pinned_always(specs):
                out.setdefault(s.sources[0], "code specializes it at every value, so each "
                                             "new value compiles again")
    for _, src, dims in diag.marked_static:
        for dim in dims:
            out.setdefault(f"{src}:{dim}", "the code marks it static (mark_static), which no "
                                           "list entry overrides")
    for r in diag.recompiles:
        if any(_INDICES_RE.search(x) for x in r.reasons):
            frame = next((f for f in diag.frames if f.rank == r.rank
                          and f.function == r.function), None)
            for src, ds in (frame.dynamic_dims if frame else ()):
                for dim in ds:
                    out.setdefault(f"{src}:{dim}", "the code marks different dims of it "
                                                   "dynamic on different calls (mark_dynamic); "
                                                   "mark the same dims every time")
    for r in diag.recompiles:
        if r.cause != "scalar":
            continue
        for x in r.reasons:
            text = _strip(_CID_RE.sub("", x))
            parts = re.split(r"\s*(?:==|!=|<=|>=|<|>)\s*", text)
            if classify(text) == "scalar" and len(parts) == 2 and _FLOAT_RE.match(parts[1]):
                out.setdefault(from_reason(parts[0]),
                               "a float: no list makes it dynamic (torch makes a float dynamic "
                               "after one recompile); pass it as a 0-d tensor")
    return out

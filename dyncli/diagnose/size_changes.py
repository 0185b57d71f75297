"""Advice for tensor dims that changed size between compiles.

Which dims the log shows changing (recompile reasons, the recompile-limit warning, automatic
dynamic's markings), and the findings about them: mark them dynamic up front (mark-dynamic),
or say what keeps them static (size-pinned, mark-static, mark-dynamic-dims-changed); and sizes
that became 0 or 1 (zero-one-specialization). ``dyncli.diagnose.advice.advise`` calls each
public function here, in its order of suggestions. Each finding carries its entries (the
dims it is about), and whether its fix lists them (``dyncli.diagnose.findings.Advice``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dyncli.diagnose.branches import crossing
from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import Diagnosis, RecompileReport, SpecializationReport
from dyncli.diagnose.reasons import (
    cite,
    failed_entry,
    is_resume,
    location,
    mismatch,
    pinned_always,
)
from dyncli.diagnose.releases import IN_CODE, listed_fix
from dyncli.logparse import guardtext as gt
from dyncli.logparse.events import CompileId
from dyncli.quoting import shell_quote
from dyncli.sources import from_reason, is_param, local_expr

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


def _size_dims(diag: Diagnosis) -> dict[_Key, _Dim]:
    """Every tensor dim the log shows changing: recompile reasons, the recompile-limit warning's
    last reason, and automatic dynamic's markings (parameters are left to static-parameters:
    a source that reads as one, or a reason carrying torch's "Guard failed on a parameter"
    hint, which torch adds for a parameter whatever its source is called, e.g. ``X[0]``)."""
    dims: dict[_Key, _Dim] = {}
    for r in diag.recompiles:
        for reason in r.reasons:
            mm = mismatch(reason)
            if mm is None or is_param(mm[0]) or gt.PARAM_HINT in reason:
                continue  # torch's hint says a parameter, whatever its source looks like
            d = dims.setdefault((r.rank, mm[0], mm[1]), _Dim())
            d.values |= {mm[2], mm[3]}
            d.recompiles.setdefault(r.compile_id, r)
            d.expected.setdefault(r.compile_id, mm[2])
            d.functions[r.function] = None
            failed = failed_entry(reason)
            if failed is not None:
                d.against.setdefault(r.compile_id, set()).add(failed)
    for x in diag.recompile_limits:
        mm = mismatch(x.last_reason)
        if mm is not None and not is_param(mm[0]) and gt.PARAM_HINT not in x.last_reason:
            d = dims.setdefault((x.rank, mm[0], mm[1]), _Dim())
            d.values |= {mm[2], mm[3]}
            d.functions[x.function] = None
            d.evidence.append(cite(x.line, x.compile_id, f"last reason: {x.last_reason}"))
            failed = failed_entry(x.last_reason)
            if failed:  # the newest cache entry, compiled after the first, kept it static
                cid = CompileId.parse(x.compile_id)
                d.limit_later.append(f"{cid.frame}/{failed}" if cid else str(failed))
    scalars = {from_reason(gt.compared(gt.guard_of(x))[0])
               for r in diag.recompiles if r.cause == "scalar" for x in r.reasons}
    for f in diag.frames:
        known = dict(f.dynamic_dims)
        for di in f.dynamic_inputs:
            if not di.origin.startswith("automatic") or gt.about_param(di.source) \
                    or di.source in scalars:
                continue  # ints have their own advice (scalar-recompile)
            src, sep, tail = di.source.rpartition(":")
            whole = not (sep and tail.isdigit() and "]" not in tail)
            source = di.source if whole else src
            for dim in ((int(tail),) if not whole else known.get(source, ()) or (None,)):
                d = dims.setdefault((f.rank, source, dim), _Dim())
                d.auto = True
                d.functions[f.function] = None
                d.evidence.append(cite(di.line, di.compile_id,
                                       f"marking {di.source} as dynamic ({di.origin})"))
    return dims


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


def mark_dynamic_up_front(diag: Diagnosis,
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
        if specs and pinned_always(specs):
            continue  # every value is specialized: see the specialization advice
        if specs:
            s = specs[0]
            where = f"{location(s.user)} `{s.user.code}`" if s.user else (s.framework or "torch")
            notes.setdefault(rank, []).append(
                f"dim {dim} of {source} is pinned to {s.value} by {where}: "
                "it is marked with maybe_mark_dynamic, which allows that")
        # A recompile away from a compile the code pinned (expected the pinned value) is the
        # specialization's, not one that marking up front saves.
        pinned = {s.value for s in specs}
        # Nor is one away from a compile made at size 0 or 1: torch specializes those even
        # when marked dynamic (the advice corpus's one_first: the list left 2 compiles at 2);
        # the zero-one advice has the unbacked list for it
        if d.recompiles and all(d.expected.get(cid) in (0, 1) for cid in d.recompiles):
            continue
        d.recompiles = {cid: r for cid, r in d.recompiles.items()
                        if str(d.expected.get(cid, "")) not in pinned
                        and d.expected.get(cid) not in (0, 1)}
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
                                       if not is_resume(fn)))
        code = "" if coarse else _mark_lines(chosen, pins, rank, dynamic_log)
        # a marking of a whole input is in the evidence of each dim it made dynamic: one
        # line of the log, cited once
        evidence = tuple(cite(r.line, r.compile_id, "recompile: " + "; ".join(r.reasons))
                         for r in list(recs.values())[:3]) + tuple(dict.fromkeys(
                             e for _, _, d in chosen for e in d.evidence[:2]))
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
            kind=AdviceKind.MARK_DYNAMIC, message=message, entries=tuple(entries), listed=True,
            inputs=tuple(named),
            function=functions[0] if len(functions) == 1 else "",
            # (in the order the log's releases need: advice._for_release, once every listed
            # entry of the rank is in it)
            fix=(f'TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(",".join(entries))}'
                 + (f"{IN_CODE}{code})" if code else "")),
            evidence=evidence, rank=rank))
    return out


def _held_static(held: list[tuple[int | None, str, int | None, _Dim, list[str]]]
                 ) -> list[Advice]:
    """Dims that recompiled at static sizes after a compile made for their change: no fix."""
    out = []
    for rank, source, dim, d, kept in held:
        name = f"{source}:{dim}" if dim is not None else source
        fns = ", ".join(fn for fn in d.functions if not is_resume(fn)) or "the compiled code"
        warning_only = not d.recompiles
        seen = (f"{name}: torch's recompile-limit warning says compile {kept[0]} of {fns} kept "
                "it static, and does not say what that compile was made for"
                if warning_only else
                f"{name}: {fns} recompiled for it again after compile {', '.join(kept)}, made "
                "for a change of it, kept it static (automatic dynamic would have made it "
                "dynamic)")
        out.append(Advice(
            kind=AdviceKind.SIZE_PINNED, rank=rank, entries=(name,), needs_richer_log=True,
            message=(f"{seen}: something keeps that size static — torch.compile(dynamic=False), "
                     "a torch._dynamo.mark_static call, or code that specializes the size at "
                     "every value (a loop over it, the guard limit) — and this log does not say "
                     "which, so no fix is given (an allow-list entry helps only the first)."),
            fix=("none from this log: TORCH_LOGS=\"+dynamic,recompiles,guards\" (or TORCH_TRACE) "
                 "shows what keeps it static, and gives the fix that removes these compiles"),
            evidence=tuple(cite(r.line, r.compile_id, "recompile: " + "; ".join(r.reasons))
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
        fns = [fn for fn in d.functions if not is_resume(fn)]
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


def marked_static(diag: Diagnosis) -> list[Advice]:
    """Dims the code marks static that changed size: no allow-list entry overrides that."""
    changed = {(r, src, dim) for (r, src, dim) in _size_dims(diag)}
    out = []
    for rank, source, dims in diag.marked_static:
        hit = [d for d in dims if (rank, source, d) in changed]
        if not hit:
            continue
        expr = local_expr(source) or source
        out.append(Advice(
            kind=AdviceKind.MARK_STATIC, rank=rank, key=f"{expr}:{hit}", inputs=(source,),
            message=(f"dim {', '.join(map(str, hit))} of {source} is marked static by the code "
                     f"(torch._dynamo.mark_static) and changed size: each new size compiles "
                     "again, and no allow-list entry overrides mark_static."),
            fix=(f"remove the torch._dynamo.mark_static({expr}, …) call for dim "
                 f"{', '.join(map(str, hit))} if that size varies"),
            evidence=()))
    return out


def marking_changes(diag: Diagnosis) -> list[Advice]:
    """``_dynamo_dynamic_indices not a subset``: the code marks different dims on different calls."""
    out = []
    for r in diag.recompiles:
        found = next((m for x in r.reasons if (m := gt.dynamic_indices(x))), None)
        if found is None:
            continue
        runtime, compiled = found
        dims = sorted({int(d) for g in found for d in g.split(",") if d.strip()})
        frame = next((f for f in diag.frames if f.rank == r.rank
                      and f.function == r.function), None)
        marked = [src for src, ds in (frame.dynamic_dims if frame else ()) if ds]
        expr = local_expr(marked[0]) if len(marked) == 1 else None
        fix = (f"(in code, before each call of {r.function}: torch._dynamo.mark_dynamic("
               f"{expr}, {dims}))" if expr and not is_resume(r.function) else
               f"mark the same dims {dims} of that tensor on every call")
        out.append(Advice(
            kind=AdviceKind.MARK_DYNAMIC_DIMS_CHANGED, rank=r.rank, function=r.function,
            inputs=(marked[0],) if len(marked) == 1 else (),
            key=f"{r.function}:{expr}:{dims}" if expr and not is_resume(r.function) else str(dims),
            message=(f"{r.function} recompiled because the code marked different dims "
                     + (f"of {marked[0]} " if len(marked) == 1 else "")
                     + f"dynamic on different calls ({{{compiled}}} when compiled, "
                     f"{{{runtime}}} now); mark the same dims every time (no allow-list "
                     "entry changes what mark_dynamic recorded on the tensor)."),
            fix=fix, evidence=(cite(r.line, r.compile_id, "; ".join(r.reasons)),)))
    return out


def zero_one(diag: Diagnosis) -> list[Advice]:
    """Recompiles because a size became 0 or 1 (torch specializes both), or because the first
    compile saw one (a warm-up at batch 1: sglang#23428, whose fix was mark_unbacked): the
    unbacked list."""
    recs = []
    first = False  # a compile made at 0 or 1 failed for a larger size
    dims: dict[tuple[int | None, str, int], dict[str, None]] = {}
    for r in diag.recompiles:
        if r.cause != "size" or crossing(r) is not None:
            continue  # a user's size branch is not 0/1 (issue 21)
        hit = False
        for x in r.reasons:
            m = gt.zero_one(gt.guard_of(x))
            mm = mismatch(x)
            if m is not None:
                key = (r.rank, from_reason(m[0]), m[1])
            elif mm is not None and (mm[3] in (0, 1) or mm[2] in (0, 1)):
                key = (r.rank, mm[0], mm[1])
                first = first or mm[2] in (0, 1)
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
        user = [fn for fn in fns if not is_resume(fn)]
        if expr is None or not user:
            parts = []
            break
        parts += [f"before each call of {fn}: torch._dynamo.decorators.mark_unbacked({expr}, {dim})"
                  for fn in user]
    code = " / ".join(parts)
    return [Advice(
        kind=AdviceKind.ZERO_ONE,
        message=(f"{len(recs)} recompile(s) because a size "
                 + ("was 0 or 1 at a compile (a first call with a batch of 1 compiles for "
                    "that size only) or became 0 or 1" if first else "became 0 or 1")
                 + ": torch always specializes sizes 0 and 1, so a dynamic graph (guarded "
                 "`2 <= size`) cannot serve them, even under dynamic=True. An unbacked size "
                 "serves them all (code must not branch on it)."),
        # (in the order the log's releases need: the setting is 2.8's, mark_unbacked 2.5's,
        # ':N' 2.13's; dynamic=True is no way there: it specializes 0 and 1 too)
        fix=(listed_fix("TORCH_COMPILE_UNBACKED_SOURCES",
                        f"TORCH_COMPILE_UNBACKED_SOURCES={shell_quote(','.join(entries))}", code,
                        entries, diag.releases, "mark_unbacked")
             + ("; or make the first call (a warm-up) with a size of 2 or more" if first else "")
             + "; or accept one extra compile"),
        evidence=tuple(cite(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3]))]

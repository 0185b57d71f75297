"""Size branches in user code: ``if x.shape[0] > K`` splits a dynamic graph in two.

When automatic dynamic made ``x`` dynamic while the branch took its ``<= K`` side, torch
guards the graph with ``2 <= x.size()[0] <= K``; a size above K fails the *upper* bound and
compiles the other side (``K+1 <= x.size()[0]``). torch's guard comment blames "0/1
specialization in the framework" (its "user code shown is first use of this value" note),
but no size was 0 or 1: the user's comparison is the cause. This module tells the two apart
from the failed bound and the actual size (the other failure of the same recompile, ``tensor
'x' size mismatch at index 0. expected 4, actual 12``), and says what the branch costs and
how to avoid it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyncli.diagnose.findings import Advice, AdviceKind, sites_of
from dyncli.diagnose.model import Diagnosis, RecompileReport
from dyncli.logparse import guardtext as gt
from dyncli.logparse.events import UserLoc


@dataclass(frozen=True)
class Crossing:
    """A recompile whose failed guard is a size range a user branch set, with its bound."""

    recompile: RecompileReport
    guard: str
    tensor: str
    dim: int
    bound: str  # "upper" | "lower" | "range" (actual size unknown)
    limit: int | None  # the bound that failed
    actual: int | None
    user: UserLoc | None


def crossing(r: RecompileReport) -> Crossing | None:
    """The size-branch crossing of recompile ``r``, or None (e.g. a real 0/1 size)."""
    reasons = [gt.split_failed(x)[1] for x in r.reasons]
    if not reasons:
        return None
    b = gt.size_bound(reasons[0])  # torch lists the newest cache entry's failure first
    if b is None or (b.hi is None and (b.lo or 0) <= 2):
        return None  # "2 <= x.size()[0]": the 0/1 case (or a plain >= 2): not a branch bound
    tensor, dim = gt.plain_name(b.expr), b.dim
    lo, hi = b.low, b.high
    actual = None
    for other in reasons[1:]:
        mm = gt.mismatch(other)
        if mm and mm.what == "size" and gt.plain_name(mm.name) == tensor and mm.dim == dim:
            actual = mm.actual
            break
    if actual is None:  # e.g. the tensor was already dynamic (PGO): the new compile's symbol
        wanted = {f"{b.expr}.size()[{dim}]", f"L['{tensor}'].size()[{dim}]"}
        actual = next((int(v) for src, v in r.sizes if src in wanted), None)
    if actual is not None and actual <= 1:
        return None  # a size 0 or 1: torch's 0/1 specialization after all
    limit: int | None
    if actual is not None and hi is not None and actual > hi:
        bound, limit = "upper", hi
    elif actual is not None and lo is not None and actual < lo:
        bound, limit = "lower", lo
    else:
        bound, limit = "range", hi if hi is not None else lo
    return Crossing(recompile=r, guard=reasons[0], tensor=tensor, dim=dim, bound=bound,
                    limit=limit, actual=actual, user=r.user)


def _where(user: UserLoc | None) -> str:
    return f"{user.file}:{user.line}" if user else "an unknown line"


def advise(diag: Diagnosis) -> tuple[Advice, ...]:
    """One ``size-branch`` suggestion per user line whose size comparison caused recompiles."""
    groups: dict[tuple[int | None, str, int, str], list[Crossing]] = {}
    for r in diag.recompiles:
        c = crossing(r)
        if c is not None:
            key = (r.rank, c.user.file if c.user else "", c.user.line if c.user else 0, c.tensor)
            groups.setdefault(key, []).append(c)
    out = []
    for (rank, _file, _line, _tensor), cs in groups.items():
        first = cs[0]
        code = f" `{first.user.code}`" if first.user and first.user.code else ""
        if first.bound == "range":
            what = f"left the range of guard `{first.guard}`"
        else:
            what = (f"= {first.actual} failed the {first.bound} bound {first.limit} of guard "
                    f"`{first.guard}`")
        compiled = [c for c in cs if c.recompile.compiled]
        out.append(Advice(
            kind=AdviceKind.SIZE_BRANCH, rank=rank, function=first.recompile.function,
            key=f"{first.tensor}:{first.dim}", sites=sites_of(first.user),
            message=(f"{first.recompile.function}: {first.tensor}.size()[{first.dim}] {what}: "
                     f"the size branch at {_where(first.user)}{code} gives each side its own "
                     f"graph ({len(compiled)} extra compile(s)). No size was 0 or 1 (torch's "
                     "note about 0/1 specialization does not apply here)."),
            fix=(f"keep it if both sides of the branch at {_where(first.user)} are common (one "
                 "graph per side is often right); to serve every size with one graph, replace "
                 "the size comparison by torch.cond or by arithmetic (torch.where)"),
            evidence=tuple(f"line {c.recompile.line}: [{c.recompile.compile_id}] "
                           + "; ".join(c.recompile.reasons) for c in cs[:3])))
    return tuple(out)

"""Ranges the program gave a size that its code narrows: ``mark_dynamic(x, 0, min=, max=)`` or a
``torch.export`` Dim, and a guard the traced code needs that does not hold over the whole range
(symbolic_shapes' StrictMinMaxConstraint: ``Not all values of X in the specified range R satisfy
the generated guard G``). Torch raises (``Constraints violated``): the compile or the export
failed, so this is never "Nothing to fix" (paste hunt 13: tensorrt#2794, pytorch#124502,
#124507, ultralytics#20370, onnxscript#2539).

The fix, in the order a user can apply it: torch's own ``Suggested fixes:`` where the log has
them (export derives a Dim: ``_b = Dim('_b', min=1, max=32)`` / ``b = 2*_b``); else the range the
guards allow (a bound the guard sets: ``min=4``; ``!= 1``: a minimum of 2 and an example of at
least 2; divisibility: a derived Dim, ``k*_d``); and the setting that accepts what the code
needs without raising (export's ``Dim.AUTO``, torch 2.5 on; ``maybe_mark_dynamic``, which
takes no range). Applied in tests/integration/test_range_fixes.py.
"""

from __future__ import annotations

import re

from dyncli.diagnose.findings import Advice, AdviceKind, sites_of
from dyncli.diagnose.model import Diagnosis, RangeViolationReport
from dyncli.diagnose.reasons import cite
from dyncli.sources import local_expr, size_source

# bounds a guard sets on the source (``4 <= L['x'].size()[0]``, ``L['x'].size()[0] <= 8``,
# sympy's ``Ne(L['x'].size()[0], 1)``); the source is matched as text, escaped
_NUM = r"(?P<n>-?\d{1,12})"


def _bounds(source: str, guard: str) -> tuple[int | None, int | None, bool, int | None]:
    """(lowest, highest, excludes 1, divisor) a guard asks of ``source``, as far as its text
    says (None where it does not)."""
    s = re.escape(source)
    lows = [int(m["n"]) for m in re.finditer(rf"{_NUM} <= {s}(?!\w)", guard)]
    lows += [int(m["n"]) for m in re.finditer(rf"(?<![\w.\]]){s} >= {_NUM}", guard)]
    lows += [int(m["n"]) + 1 for m in re.finditer(rf"{_NUM} < {s}(?!\w)", guard)]
    lows += [int(m["n"]) + 1 for m in re.finditer(rf"(?<![\w.\]]){s} > {_NUM}", guard)]
    highs = [int(m["n"]) for m in re.finditer(rf"(?<![\w.\]]){s} <= {_NUM}", guard)]
    highs += [int(m["n"]) - 1 for m in re.finditer(rf"(?<![\w.\]]){s} < {_NUM}", guard)]
    not_one = bool(re.search(rf"(?:(?<![\w.\]]){s} != 1(?!\d)|Ne\({s}, 1\)|Ne\(1, {s}\))", guard))
    mod = re.search(rf"(?:Mod\({s}, |\(?{s} % ){_NUM}", guard)
    return (max(lows) if lows else None, min(highs) if highs else None, not_one,
            int(mod["n"]) if mod else None)


_RANGE_BOUNDS_RE = re.compile(r"^(?:(?P<lo>\d{1,12}) <= )?\S{1,300}?(?: <= (?P<hi>\d{1,12}))?$")


def _given(x: RangeViolationReport) -> tuple[int | None, int | None]:
    """The bounds the program gave, as torch rendered the range (a default bound left out)."""
    m = _RANGE_BOUNDS_RE.match(x.range)
    if not m:
        return None, None
    return (int(m["lo"]) if m["lo"] else None, int(m["hi"]) if m["hi"] else None)


def _suggested(x: RangeViolationReport, fixes: tuple[tuple[str, str], ...]) -> list[str]:
    """torch's suggested lines that define or derive this Dim (``_b = …``, ``b = 2*_b``)."""
    if not x.dim:
        return []
    word = re.compile(rf"(?<!\w)_?{re.escape(x.dim)}(?!\w)")
    return [f"{n} = {v}" for n, v in fixes if n in (x.dim, f"_{x.dim}") or word.search(v)]


def _cut(line: str) -> bool:
    """A suggested line the paste cut (``_seq_len = Dim('_seq_le``)."""
    return line.count("(") != line.count(")") or line.count("'") % 2 == 1


def _fix(x: RangeViolationReport, fixes: tuple[tuple[str, str], ...]) -> str:
    export = bool(x.dim)
    lo = hi = divisor = None
    not_one = False
    for g in x.guards:
        glo, ghi, gone, gdiv = _bounds(x.source, g)
        lo = glo if lo is None or (glo is not None and glo > lo) else lo
        hi = ghi if hi is None or (ghi is not None and ghi < hi) else hi
        not_one = not_one or gone
        divisor = divisor or gdiv
    if not_one and (lo is None or lo < 2):
        lo = 2
    given_lo, given_hi = _given(x)
    new_lo = lo if lo is not None and (given_lo is None or lo > given_lo) else None
    new_hi = hi if hi is not None and (given_hi is None or hi < given_hi) else None
    suggested = _suggested(x, fixes)
    whole = [s for s in suggested if not _cut(s)]
    if whole == [f"{x.dim} = Dim('{x.dim}', min={given_lo}, max={given_hi})"]:
        whole = []  # (the range as given: pytorch#124507's suggestion, which did not help)
        suggested = []
    accept = ("or declare it Dim.AUTO (torch 2.5 on), which takes the range the code allows "
              "instead of raising" if export else
              "or mark it with torch._dynamo.maybe_mark_dynamic (no range: torch compiles "
              "again for a size outside what the code allows instead of raising)")
    if whole:
        cut = " (the paste cut the rest of it)" if len(whole) < len(suggested) else ""
        return (f"torch's suggested fix: `{'; '.join(whole)}`{cut}, export's own answer: "
                f"define {x.dim} as it says; {accept}")
    parts = []
    if new_lo is not None or new_hi is not None:
        bounds = ", ".join(b for b in (f"min={new_lo}" if new_lo is not None else "",
                                       f"max={new_hi if new_hi is not None else given_hi}"
                                       if new_hi is not None or given_hi is not None else "") if b)
        if export:
            parts.append(f"narrow the range to what the code allows: Dim('{x.dim}', {bounds})")
        else:
            at = size_source(x.source)
            tensor = (local_expr(at[0]) or at[0]) if at else "x"
            dim = at[1] if at else 0
            parts.append(f"narrow the range to what the code allows: torch._dynamo.mark_dynamic("
                         f"{tensor}, {dim}, {bounds})")
        if new_lo is not None and new_lo >= 2 and not_one:
            parts.append("and pass an example of at least 2 along it (a size of 1 is "
                         "specialized)")
    if divisor is not None:
        parts.append(f"the code needs a multiple of {divisor}: "
                     + (f"a derived Dim, _{x.dim} = Dim('_{x.dim}'); {x.dim} = {divisor}*_{x.dim}"
                        if export else f"pad the size to a multiple of {divisor}"))
    if suggested and not whole:
        parts.append("the paste cut torch's suggested fix (`Suggested fixes:`): it is in the "
                     "full error")
    if not parts:
        parts.append("narrow the range to where the guards hold, or change the code that "
                     "needs them (TORCH_LOGS=\"+dynamic\" prints the line that added each guard)")
    return "; ".join(parts) + f"; {accept}"


def range_findings(diag: Diagnosis) -> list[Advice]:
    """One finding per range the code narrows (the compile or the export raised)."""
    out = []
    for x in diag.range_violations:
        what = f"torch.export's Dim {x.dim} ({x.source})" if x.dim else x.source
        given = f"the range given ({x.range})" if x.range else "the range given (torch's default)"
        needs = x.guards[0] if x.guards else "a guard the log cuts"
        more = f" and {len(x.guards) - 1} more" if len(x.guards) > 1 else ""
        out.append(Advice(
            kind=AdviceKind.CONSTRAINT_VIOLATION, rank=x.rank, key=f"range:{x.source}:{x.dim}",
            sites=sites_of(x.user),
            message=(f"{what}: {given} is wider than the code allows, so the "
                     + ("export" if x.dim else "compile") + f" raised (Constraints violated): "
                     f"the code needs {needs}{more}."),
            fix=_fix(x, diag.suggested_fixes),
            evidence=(cite(x.line, x.compile_id, f"Not all values of {x.source} … satisfy the "
                           f"generated guard {needs}"[:300]),)))
    return out

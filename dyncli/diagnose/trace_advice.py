"""What the trace-only findings ask the user to do (similar graphs, PGO, ranks), as ``Advice``.

The rules over a ``TraceReport`` (``dyncli.diagnose.trace``): ``read_trace`` adds their findings
to the rules' own before the pipeline concludes. Each finding carries its structure as fields
(entries, sites, function, key; ``dyncli.diagnose.findings``).
"""

from __future__ import annotations

from dyncli.diagnose.entries import source_of
from dyncli.diagnose.findings import Advice, AdviceKind, Site
from dyncli.diagnose.trace_report import TraceReport

# Suggestions that already decide a source: its similar graphs add no second, narrower fix
# (a per-frame list is worse than the one list over every frame; a pinned or re-marked dim is
# not fixed by any list).
_DECIDED = frozenset({
    AdviceKind.MARK_DYNAMIC, AdviceKind.MARK_DYNAMIC_DIMS_CHANGED,
    AdviceKind.GUARD_LIMIT_SPECIALIZATION, AdviceKind.USER_SPECIALIZATION,
    AdviceKind.MARK_STATIC, AdviceKind.STATIC_PARAMETERS, AdviceKind.SCALAR_RECOMPILE})


def _site(where: str) -> tuple[Site, ...]:
    """The ``file:line`` an explanation names (``_Explainer`` wrote it) as ``sites``."""
    file, _, line = where.rpartition(":")
    return (Site(file, int(line)),) if file and line.isdigit() else ()


def trace_advice(report: TraceReport, existing: tuple[Advice, ...] = ()) -> tuple[Advice, ...]:
    """What the trace-only findings ask the user to do, each with its evidence."""
    out: list[Advice] = []
    decided = {source_of(i) for a in existing if a.kind in _DECIDED for i in a.inputs}
    for s in report.similar_graphs:
        inputs = ", ".join(f"{src} ({' vs '.join(sizes)})" for src, sizes in s.inputs)
        entries = [f"{src}:{d}" for src, sizes in s.inputs for d in _differing_dims(sizes)
                   if src not in decided]
        # a dim one graph has at size 0 or 1: torch specializes those even when marked dynamic
        # (the advice corpus's one_first: the list left 2 compiles at 2); the zero-one advice
        # has the unbacked list
        small = _zero_one_dims(s.inputs)
        entries = [e for e in entries if e not in small]
        if not entries and small:
            continue
        out.append(Advice(
            fix=f'TORCH_COMPILE_DYNAMIC_SOURCES="{",".join(entries)}"' if entries else "",
            kind=AdviceKind.SIMILAR_GRAPHS, rank=s.rank, entries=tuple(entries),
            listed=bool(entries), inputs=tuple(src for src, _ in s.inputs),
            function=s.function,
            key=(f"{s.function}:{','.join(s.compile_ids)}:{s.ops} ops:"
                 + ";".join(f"{src}={'|'.join(sizes)}" for src, sizes in s.inputs)),
            message=(f"{s.function}: compiles {', '.join(s.compile_ids)} traced the same "
                     f"{s.ops} ops and differ only in sizes of {inputs}; one dynamic graph "
                     "would serve them all: mark those inputs dynamic up front."),
            evidence=tuple(f"dynamo_output_graph {cid}" for cid in s.compile_ids)))
    for p in report.pgo:
        if not p.allow_list:  # the loaded state already has them dynamic: say what recompiled
            why = "; ".join(f"{cid}: {what} at {where}" for cid, what, where in p.explained)
            out.append(Advice(
                kind=AdviceKind.PGO_RECOMPILE, rank=p.rank, function=p.function,
                sites=tuple(site for _, _, where in p.explained for site in _site(where)),
                key=(f"{p.function}:{','.join(p.loaded_dynamic)}:{','.join(p.recompiles)}:"
                     + ";".join(" ".join(x) for x in p.explained)),
                message=(f"{p.function}: PGO state was loaded"
                         + (f" (dynamic: {', '.join(p.loaded_dynamic)})" if p.loaded_dynamic else "")
                         + f" and it still recompiled ({', '.join(p.recompiles)}); no allow-list "
                         "entry can remove that: "
                         + (why or "the sources that changed are already dynamic")
                         + "; see the suggestion for that line."),
                evidence=tuple(f"recompile {c}" for c in p.recompiles)))
            continue
        out.append(Advice(
            kind=AdviceKind.PGO_ALLOW_LIST, rank=p.rank, function=p.function,
            entries=p.allow_list, listed=bool(p.allow_list),
            key=f"{p.function}:{','.join(p.loaded_dynamic)}:{','.join(p.recompiles)}",
            message=(f"{p.function}: PGO state was loaded"
                     + (f" (dynamic: {', '.join(p.loaded_dynamic)})" if p.loaded_dynamic else "")
                     + f" yet it recompiled for size ({', '.join(p.recompiles)}); PGO did not"
                     " help there. Allow-list the sources instead."),
            fix=(f'TORCH_COMPILE_DYNAMIC_SOURCES="{",".join(p.allow_list)}"'
                 if p.allow_list else ""),
            evidence=tuple(f"recompile {c}" for c in p.recompiles)))
    for d in report.divergences:
        out.append(Advice(
            kind=AdviceKind.RANK_DIVERGENCE,
            key=f"{d.kind}:{d.subject}:" + ",".join(f"{r}={v}" for r, v in d.values),
            message=d.message + ": ranks that compile different "
            "graphs can hang in collectives; give every rank the same dynamic decisions "
            "(mark the sources dynamic on all ranks, or enable "
            "torch._dynamo.config.enable_compiler_collectives).",
            evidence=tuple(f"rank {r}: {v}" for r, v in d.values)))
    return tuple(out)


def _differing_dims(sizes: tuple[str, ...]) -> list[int]:
    """Dims whose value is not the same in every ``[a, b]`` size string."""
    rows = [[p.strip() for p in s.strip("[]").split(",")] for s in sizes]
    if len({len(r) for r in rows}) != 1:
        return []
    return [i for i in range(len(rows[0])) if len({r[i] for r in rows}) > 1]


def _zero_one_dims(inputs: tuple[tuple[str, tuple[str, ...]], ...]) -> set[str]:
    """``src:dim`` of the differing dims some graph has at size 0 or 1."""
    out: set[str] = set()
    for src, sizes in inputs:
        rows = [[p.strip() for p in x.strip("[]").split(",")] for x in sizes]
        out |= {f"{src}:{d}" for d in _differing_dims(sizes) if any(r[d] in ("0", "1") for r in rows)}
    return out

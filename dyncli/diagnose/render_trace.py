"""Terminal sections for what only a TORCH_TRACE trace tells: compile time, failed compiles,
similar graphs, ranks and PGO. Called by ``render.diagnose.render_terminal`` when the
Diagnosis carries a ``trace`` report; same table style, same row cap."""

from __future__ import annotations

from rich.console import Console

from dyncli.diagnose.model import Diagnosis
from dyncli.output import add_text_row, section_table


def _r(rank: int | None) -> list[str]:
    return ["-" if rank is None else str(rank)]


def render_trace_sections(diag: Diagnosis, out: Console, limit: int = 20) -> None:
    """Compile time, failures, similar graphs, ranks, PGO (nothing for text-log diagnoses)."""
    t = diag.trace
    if t is None:
        return
    ranks = any(r is not None for r in diag.ranks)
    pre = (lambda rank: _r(rank)) if ranks else (lambda rank: [])
    out.print(f"Compile time: {t.total_compile_s:.2f} s over {len(t.compile_times)} compile(s)",
              markup=False, soft_wrap=True)
    if t.frame_times:
        table = section_table("Compile time per frame", ["frame", "function", "compiles", "seconds"], ranks)
        for f in sorted(t.frame_times, key=lambda f: -f.seconds)[:limit]:
            add_text_row(table, *pre(f.rank), f.frame_id, f.function or "?", str(f.compiles),
                          f"{f.seconds:.3f}")
        out.print(table)
    if t.failures:
        table = section_table("Failed compiles", ["compile", "function", "error", "reason"], ranks)
        for c in t.failures[:limit]:
            reason = (c.fail_reason or "").strip().splitlines()
            add_text_row(table, *pre(c.rank), c.compile_id, c.function, c.fail_type or "",
                          reason[0] if reason else "")
        out.print(table)
    if t.similar_graphs:
        table = section_table("Similar graphs (same ops, only sizes differ)",
                       ["function", "compiles", "ops", "inputs whose sizes differ"], ranks)
        for s in t.similar_graphs[:limit]:
            add_text_row(table, *pre(s.rank), s.function, ", ".join(s.compile_ids), str(s.ops),
                          "\n".join(f"{src}: {' vs '.join(sz)}" for src, sz in s.inputs))
        out.print(table)
    if len(t.ranks) > 1:
        table = section_table("Ranks", ["rank", "frames", "compiles", "recompiles", "failed",
                                 "compile s", "dynamic"], False)
        for r in t.ranks:
            add_text_row(table, *_r(r.rank), str(r.frames), str(r.compiles), str(r.recompiles),
                          str(r.failed), f"{r.compile_time_s:.3f}", ", ".join(r.dynamic) or "-")
        out.print(table)
        if t.divergences:
            for d in t.divergences[:limit]:
                out.print(f"Rank divergence: {d.message}", markup=False, soft_wrap=True)
        else:
            out.print("Ranks agree: same compiles and dynamic decisions.", markup=False,
                      soft_wrap=True)
    if t.pgo:
        table = section_table("PGO loaded, yet recompiled for size",
                       ["function", "dynamic in loaded state", "recompiles", "allow-list instead"],
                       ranks)
        for p in t.pgo[:limit]:
            add_text_row(table, *pre(p.rank), p.function, ", ".join(p.loaded_dynamic) or "-",
                          ", ".join(p.recompiles), ",".join(p.allow_list) or "-")
        out.print(table)

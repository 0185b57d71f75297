"""Render a ``Diagnosis``: a summary first, then one rich table per section; or JSON.

Tables go to stdout (plain text when stdout is not a terminal); warnings go to stderr.
Rows per section are capped at ``limit`` on the terminal (the JSON always has all of them).
"""

from __future__ import annotations

import os

from rich.console import Console

from dyncli.diagnose.compile_metrics import summary_line as compile_time_said
from dyncli.diagnose.cudagraph_render import render_cudagraphs
from dyncli.diagnose.findings import RAISED_MARK, AdviceKind
from dyncli.diagnose.model import Diagnosis, shown_causes
from dyncli.diagnose.phases import PHASES
from dyncli.diagnose.releases import named
from dyncli.diagnose.trace_report import TraceReport
from dyncli.logparse.events import UserLoc
from dyncli.output import (
    Capped,
    add_ranked_row,
    add_text_row,
    info,
    line_text,
    rank_cell,
    section_table,
    stdout_console,
    warn,
)
from dyncli.textsafe import visible
from dyncli.words import counted


def _short(path: str) -> str:
    """A path relative to the working directory when it lies under it (tables stay narrow)."""
    if path.startswith("/"):
        cwd = os.getcwd().rstrip("/") + "/"
        if path.startswith(cwd):
            return path[len(cwd):]
    return path


def _loc(user: UserLoc | None) -> str:
    return f"{_short(user.file)}:{user.line}" if user else "-"


def inputs_said(inputs: tuple[str, ...] | list[str]) -> str:
    """The inputs for the view's first line: a directory's files, past two, as ``N files in
    DIR/`` (a 64-rank trace's names filled a screen before the summary; ``--json`` lists
    each); names as text (a newline in one is ``\\n``)."""
    groups: dict[str, list[str]] = {}
    for name in inputs:
        groups.setdefault(name.rpartition("/")[0] if "/" in name else "", []).append(name)
    parts: list[str] = []
    for folder, names in groups.items():
        if len(names) > 2:
            parts.append(f"{len(names)} files in {folder}/")
        else:
            parts.extend(names)
    return ", ".join(visible(part) for part in parts)


def render_parse_notes(diag: Diagnosis) -> None:
    """For --verbose: the first unrecognized/malformed lines, on stderr."""
    st = diag.stats
    if st.unrecognized or st.malformed:
        info(f"{st.unrecognized} unrecognized and {st.malformed} malformed line(s); first ones:")
        for line, text in st.samples or []:
            info(f"  line {line}: {text}")


def summary_line(diag: Diagnosis) -> str:
    """One line: frames, compiles, recompiles by cause, specializations, graph breaks."""
    by = diag.recompiles_by_cause()
    ranks = [r for r in diag.ranks if r is not None]
    least = "at least " if diag.partial or any(f.at_least for f in diag.frames) else ""
    causes = ", ".join(f"{c} {by[c]}" for c in shown_causes(by))
    proven = diag.recompiles_proven
    compiled = sum(1 for r in diag.recompiles if r.compiled)
    recompiles = (f"{len(diag.recompiles)} recompile(s) ({causes})" if proven <= compiled else
                  f"{least}{proven} recompile(s) ({len(diag.recompiles)} with their reasons in "
                  f"the log: {causes})")
    breaks = sum(b.count for b in diag.graph_breaks)
    counted = diag.explain_breaks  # an explain() report's own count, where its paste was cut
    read = (f"at least {breaks} graph break(s) (the explain report counts {counted})"
            if counted is not None and counted > breaks else f"{breaks} graph break(s)")
    # (a partial paste that shows no compile proves none: "at least 0" said nothing)
    compiles = "no compile shown (a partial log)" if least and not diag.compiles \
        else f"{least}{diag.compiles} compile(s)"
    parts = [
        f"{len(diag.frames)} frame(s)", compiles, recompiles,
        f"{len(diag.specializations)} specialization(s)",
        f"{read} at {len(diag.graph_breaks)} site(s)",
    ]
    if diag.recompile_limits:
        parts.append(f"{len(diag.recompile_limits)} recompile-limit hit(s)")
    if diag.unbacked:
        parts.append(f"{len(diag.unbacked)} unbacked symbol(s)")
    if diag.autograd_misses:  # compiled autograd's captures of the backward (dynamo's: above)
        again = sum(1 for x in diag.autograd_misses if not x.first)
        parts.append(f"{len(diag.autograd_misses)} compiled autograd capture(s) of the backward "
                     f"({again} after a cache miss)")
    if ranks:
        parts.append(f"ranks {', '.join(map(str, ranks))}")
    return "Summary: " + ", ".join(parts)


def render_terminal(diag: Diagnosis, limit: int = 20, console: Console | None = None) -> None:
    """Summary, then Frames, Recompiles, Specializations, Graph breaks, … and Suggestions."""
    out = console or stdout_console()
    ranks = diag.ranked
    st = diag.stats
    names = inputs_said(diag.inputs)
    out.print(f"dyncli diagnose: {names} ({counted(st.lines, 'line')}, {st.recognized} "
              f"recognized, {st.unrecognized} unrecognized, {st.malformed} malformed)",
              markup=False, soft_wrap=True)
    if diag.read_as:
        out.print(diag.read_as, markup=False, soft_wrap=True)
    out.print(summary_line(diag), markup=False, soft_wrap=True)
    if diag.releases is not None:
        out.print(line_text(diag.releases.line()), markup=False, soft_wrap=True)
    if timed := compile_time_said(diag):
        out.print(line_text(timed), markup=False, soft_wrap=True)
    for w in diag.warnings:
        warn(w)
    render_causes(diag, out)

    capped = Capped(out, limit)
    cap = capped.rows

    if diag.frames:
        t = section_table("Frames", ["frame", "function", "defined at", "compiles", "dynamic inputs"], ranks)
        for f in cap(diag.frames, "frames"):
            dims = dict(f.dynamic_dims)
            dyn = ", ".join(f"{d.source}{' dims ' + ','.join(map(str, dims[d.source])) if dims.get(d.source) else ''}"
                            f" ({d.origin}, {d.compile_id})" for d in f.dynamic_inputs) or "-"
            where = f"{_short(f.file)}:{f.first_line}" if f.first_line else (_short(f.file) or "-")
            n = f"at least {f.compiles}" if f.at_least or diag.partial else str(f.compiles)
            add_ranked_row(t, ranks, f.rank, f.frame_id, f.function or "?", where, n, dyn)
        capped.show(t)
    if diag.recompiles:
        t = section_table("Recompiles", ["compile", "function", "cause", "guard failures", "user code"], ranks)
        for r in cap(diag.recompiles, "recompiles"):
            code = f"{_loc(r.user)} {r.user.code}" if r.user else "-"
            cause = r.cause if r.compiled else (
                f"{r.cause}\n(refused: {r.refused_by or 'recompile limit'})")
            add_ranked_row(t, ranks, r.rank, r.compile_id, r.function, cause, "\n".join(r.reasons), code)
        capped.show(t)
    if diag.specializations:
        t = section_table("Specializations", ["compile", "symbol", "sources", "value", "why",
                                       "user code"], ranks)
        for s in cap(diag.specializations, "specializations"):
            code = f"{_loc(s.user)}  {s.user.code}" if s.user else (s.framework or "-")
            add_ranked_row(t, ranks, s.rank, s.compile_id, s.symbol or "-", ", ".join(s.sources) or "-",
                 s.value, s.reason, code)
        capped.show(t)
    if diag.graph_breaks:
        t = section_table("Graph breaks (distinct, by torch's code)",
                          ["torch code", "location", "count", "type and explanation",
                           "reached from", "frames split"], False)
        for d in cap(diag.distinct_graph_breaks, "graph breaks"):
            code = (d.code or "-") + ("" if d.known or not d.code else "\n(unknown to torch "
                                      "installed here)")
            place = f"{_short(d.file)}:{d.line}" if d.file else d.place
            add_text_row(t, code, place + (f"\n{d.user_code}" if d.user_code else ""),
                         str(d.count), d.said + (f"\n({RAISED_MARK})" if d.raised else ""),
                         "\n".join(_short(s) for s in d.call_sites) or "-",
                         ", ".join(d.frames) or "-")
        capped.show(t)
    if diag.recompile_limits:
        t = section_table("Recompile limit hits", ["function", "limit", "last reason"], ranks)
        for x in cap(diag.recompile_limits, "limit hits"):
            where = f" ({_short(x.file)}:{x.first_line})" if x.file else ""
            add_ranked_row(t, ranks, x.rank, f"{x.function or '? (not in the log)'}{where}",
                 (f"{x.limit_name}={x.limit}" if x.limit else x.limit_name) if x.limit_name
                 else "? (not in the log)",
                 x.last_reason or "-")
        capped.show(t)
    # (fail_on_recompile_limit_hit is 2.7's, 2.6's fail_on_cache_limit_hit: releases.NAMES)
    fail = named("fail_on_recompile_limit_hit", diag.releases)
    for text in diag.limit_raised:  # it did not fall back to eager: the program stopped
        out.print(line_text(f"The recompile limit raised an error (fullgraph=True"
                            f"{f' or {fail}' if fail else ''}): {text}"),
                  markup=False, soft_wrap=True)
    if diag.unbacked:
        t = section_table("Unbacked (data-dependent) symbols", ["compile", "symbol", "range", "from"], ranks)
        for u in cap(diag.unbacked, "unbacked symbols"):
            where = f"{_loc(u.user)}  {u.user.code}" if u.user else u.framework
            add_ranked_row(t, ranks, u.rank, u.compile_id, f"{u.symbol} ({u.kind})",
                 f"[{u.lower}, {u.upper}]", where)
        capped.show(t)
    if diag.data_dependent_errors:
        t = section_table("Data-dependent errors", ["compile", "expression", "torch", "where"],
                          ranks)
        for x in cap(diag.data_dependent_errors, "data-dependent errors"):
            # (the user's line where only it is known: export's blamed call, dynamo's stack)
            where = ", ".join(w for w in (x.op, x.culprit) if w) or (
                f"{_loc(x.user)} in {x.user.function}" if x.user else "-")
            add_ranked_row(t, ranks, x.rank, x.compile_id or "-", x.expr or "(cut from the paste)",
                 _DDE_SAID.get(x.what, x.what) + ("" if x.raised else " (only logged)"),
                 where)
        capped.show(t)
    if diag.relations:
        t = section_table("Size relations", ["compile", "relation", "sources"], ranks)
        for x in cap(diag.relations, "relations"):
            add_ranked_row(t, ranks, x.rank, x.compile_id, f"{x.symbol} = {x.target} ({x.reason})",
                 f"{x.lhs or '?'} == {x.rhs or '?'}")
        capped.show(t)
    if diag.trace is not None:  # TORCH_TRACE input: time, failures, similar graphs, ranks, PGO
        render_trace_sections(diag, out, limit)
    render_cudagraphs(diag, out, limit)  # CUDA-graph recordings, skips (when the input has any)
    if diag.dynamic_sources:
        out.print("Dynamic sources (for TORCH_COMPILE_DYNAMIC_SOURCES): "
                  + ",".join(diag.dynamic_sources), markup=False, soft_wrap=True)
    for title, found, said in (("Suggestions", diag.suggestions, "fix"),
                               ("Notes", diag.notes, "what to do")):
        if not found:
            continue
        out.print(f"{title}:", markup=False, soft_wrap=True)
        for i, s in enumerate(cap(found, title.lower()), 1):
            who = f" [rank {s.rank}]" if s.rank is not None else ""
            out.print(line_text(f"{i}. ({s.kind}){who} {s.message}"), markup=False, soft_wrap=True)
            if s.fix:
                out.print(line_text(f"   {said}: {s.fix}"), markup=False, soft_wrap=True)
            for e in s.evidence:
                out.print(line_text(f"   evidence: {e}"), markup=False, soft_wrap=True)
        capped.done()
    if not diag.suggestions and diag.trace is not None and diag.trace.failures:
        out.print(f"{len(diag.trace.failures)} compile(s) failed (see Failed compiles above): "
                  "fix the error first.", markup=False, soft_wrap=True)
    elif not (diag.suggestions or diag.recompiles or diag.specializations
              or diag.graph_breaks or diag.recompile_limits):
        out.print(nothing_found(diag), markup=False, soft_wrap=True)
    if diag.richer_log and (diag.recompiles or diag.recompile_limits or diag.specializations):
        out.print(line_text(f"A richer log: {diag.richer_log}."), markup=False, soft_wrap=True)


_DDE_SAID = {"guard": "could not guard on it", "int": "needed an integer of it",
             "evaluate": "failed evaluating it", "unnamed": "raised (its exportdb link)"}


def nothing_found(diag: Diagnosis) -> str:
    """What to say when no finding was read: "Nothing to fix" only when every torch record was
    understood; otherwise that some were not, so the log cannot tell (issue 33)."""
    unread = diag.stats.unread + diag.stats.malformed
    if diag.recompiles_proven and any(a.kind is AdviceKind.UNEXPLAINED for a in diag.notes):
        # (its finding is a note: only the backend's compile ids prove them)
        least = "at least " if diag.partial or any(f.at_least for f in diag.frames) else ""
        return (f"No recompile record, specialization or graph break was read; the compile ids "
                f"prove {least}{diag.recompiles_proven} recompile(s) whose reasons the log does "
                "not hold (see the notes).")
    if unread:
        return (f"No recompile, specialization or graph break was read, but {unread} torch "
                "record(s) were not understood (--verbose shows them): the log cannot tell "
                "whether there is something to fix.")
    if any(a.kind is AdviceKind.BACKWARD_DEFERRED for a in diag.notes):
        # (a backward compile that raised: something to fix where the program trains)
        return ("No recompile, specialization or graph break was read; the note above says "
                "what torch's suppressed backward compile means for a run that trains.")
    if any(a.kind is AdviceKind.DATA_DEPENDENT for a in diag.notes):
        # (torch's log of a failed evaluate_expr alone: logged, re-raised, perhaps caught)
        return ("No recompile, specialization or graph break was read; the note above says "
                "what torch's logged data-dependent failure means (the log does not show it "
                "stop the run).")
    if any(a.kind is AdviceKind.FLEX_ATTENTION_EAGER for a in diag.notes):
        # (flex_attention's unfused implementation ran: slow, and memory that grows with the
        # lengths; a compile the log does not show is what it needs)
        return ("No recompile, specialization or graph break was read; the note above says "
                "what flex_attention's unfused run means, and what compiles it.")
    if any(a.kind is AdviceKind.SHAPE_ENV_FAILED for a in diag.notes):
        # (an error torch logged and re-raised: the log cannot say whether it was caught)
        return ("No recompile, specialization or graph break was read; the note above says "
                "what torch's logged ShapeEnv error means (the log does not say whether the "
                "compile went on).")
    return "Nothing to fix: no recompiles, specializations or graph breaks found." + (
        " The notes above say what torch's other output means." if diag.notes else "")


TOP_CAUSES = 5


def render_causes(diag: Diagnosis, out: Console, top: int = TOP_CAUSES) -> None:
    """The first screen: the top root causes, one line each with its cost, and its fix."""
    causes = diag.causes
    if not causes:
        return
    recorded = "; CUDA-graph recordings by their seconds" if any(
        c.record_s for c in causes) else ""
    how = (f"compile seconds each fix removes (of {diag.trace.total_compile_s:.2f} s in all"
           f"{recorded})" if diag.trace is not None and diag.trace.timed
           else f"compiles each fix removes (of {diag.compiles} in all)")
    more = f"; {len(causes) - top} more in --json and --html" if len(causes) > top else ""
    # (a log without a compile, of CUDA-graph errors or skips alone: nothing to rank by)
    ranked = f", ranked by the {how}" if diag.compiles or diag.trace is not None else ""
    out.print(f"What to fix first ({len(causes)} cause(s){ranked}{more}):",
              markup=False, soft_wrap=True)
    for i, c in enumerate(causes[:top], 1):  # one line each: cost, cause, fix
        out.print(line_text(f"{i}. {c.line(diag.ranks)}"), markup=False, soft_wrap=True)


# ---------------------------------------------------------------- trace-only sections


FAIL_REASON_LINES, FAIL_REASON_CHARS = 12, 1200


def failure_reason(text: str | None) -> str:
    """A failed compile's reason, bounded: its first lines (torch's reasons run to pages, with
    the user stack after the message), never only the first line of a multi-line message."""
    lines = [line.rstrip() for line in (text or "").strip().splitlines()]
    shown = "\n".join(lines[:FAIL_REASON_LINES])
    more = len(lines) > FAIL_REASON_LINES
    if len(shown) > FAIL_REASON_CHARS or more:
        shown = shown[:FAIL_REASON_CHARS].rstrip() + "\n… (--json has all of it)"
    return shown


def compile_time_line(t: TraceReport) -> str:
    """``Compile time: 8.31 s over 6 compile(s)``, saying which compiles have no time."""
    n = len(t.compile_times)
    if n and t.unknown_time == n:
        return (f"Compile time: unknown for all {n} compile(s) (this trace's compilation_metrics "
                "carry no time field)")
    line = f"Compile time: {t.total_compile_s:.2f} s over {n} compile(s)"
    if t.unknown_time:
        line += f" ({t.unknown_time} without a time in the trace: unknown, not counted)"
    return line


def _frame_seconds(seconds: float, unknown: int, compiles: int) -> str:
    if unknown and unknown >= compiles:
        return "unknown"
    return f"{seconds:.3f}" + (f" (+{unknown} unknown)" if unknown else "")


def _phase_text(phases: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{name} {secs:.2f} s" for name, secs in phases)


def render_trace_sections(diag: Diagnosis, out: Console, limit: int = 20) -> None:
    """Compile time, failures, similar graphs, ranks, PGO (nothing for text-log diagnoses)."""
    t = diag.trace
    if t is None:
        return
    ranks = diag.ranked
    capped = Capped(out, limit)
    workers = sum(c.compile_workers_s or 0.0 for c in t.compile_times)
    out.print(compile_time_line(t)
              + (f": {_phase_text(t.phases)}" if t.phases else "")
              + (f" (compile workers {workers:.2f} s of codegen)" if workers else ""),
              markup=False, soft_wrap=True)
    if t.frame_times:
        table = section_table("Compile time per frame", ["frame", "function", "compiles", "seconds",
                                                         "by phase"], ranks)
        for f in capped.rows(sorted(t.frame_times, key=lambda f: -f.seconds), "frames timed"):
            add_ranked_row(table, ranks, f.rank, f.frame_id, f.function or "?", str(f.compiles),
                          _frame_seconds(f.seconds, f.unknown, f.compiles),
                          _phase_text(f.phases) or "-")
        capped.show(table)
    if any(c.phases or c.guard_count is not None for c in t.compile_times):
        table = section_table("Compile time by phase", ["compile", "function", "seconds",
                                                        *PHASES, "guards", "guard µs"], ranks)
        for c in capped.rows(sorted(t.compile_times, key=lambda c: -(c.seconds or 0.0)),
                              "compiles timed"):
            phases = dict(c.phases)
            add_ranked_row(table, ranks, c.rank, c.compile_id, c.function or "?",
                         "unknown" if c.seconds is None else f"{c.seconds:.3f}",
                         *(f"{phases[p]:.3f}" if p in phases else "-" for p in PHASES),
                         "-" if c.guard_count is None else str(c.guard_count),
                         "-" if c.guard_latency_us is None else f"{c.guard_latency_us:g}")
        capped.show(table)
    if t.failures:
        table = section_table("Failed compiles", ["compile", "function", "error", "reason"], ranks)
        for c in capped.rows(t.failures, "failed compiles"):
            add_ranked_row(table, ranks, c.rank, c.compile_id, c.function, c.fail_type or "",
                          failure_reason(c.fail_reason))
        capped.show(table)
    if t.similar_graphs:
        table = section_table("Similar graphs (same ops, only sizes differ)",
                       ["function", "compiles", "ops", "inputs whose sizes differ"], ranks)
        for s in capped.rows(t.similar_graphs, "similar graphs"):
            add_ranked_row(table, ranks, s.rank, s.function, ", ".join(s.compile_ids), str(s.ops),
                          "\n".join(f"{src}: {' vs '.join(sz)}" for src, sz in s.inputs))
        capped.show(table)
    if len(t.ranks) > 1:
        table = section_table("Ranks", ["rank", "frames", "compiles", "recompiles", "failed",
                                 "compile s", "dynamic"], False)
        for r in t.ranks:
            who = rank_cell(r.rank) + (f" ({r.process})" if r.process else "")
            add_text_row(table, who, str(r.frames), str(r.compiles), str(r.recompiles),
                          str(r.failed), _frame_seconds(r.compile_time_s, r.unknown_time, r.compiles),
                          ", ".join(r.dynamic) or "-")
        capped.show(table)
        if t.divergences:
            for d in capped.rows(t.divergences, "rank divergences"):
                out.print(f"Rank divergence: {d.message}", markup=False, soft_wrap=True)
            capped.done()
        else:
            out.print("Ranks agree: same compiles and dynamic decisions.", markup=False,
                      soft_wrap=True)
    if t.pgo:
        table = section_table("PGO loaded, yet recompiled for size",
                       ["function", "dynamic in loaded state", "recompiles", "allow-list instead"],
                       ranks)
        for p in capped.rows(t.pgo, "PGO frames"):
            # no entry to add: say what recompiled instead of an empty allow-list (issue 21)
            why = "\n".join(f"none helps: {cid} {what} at {_short(where)}"
                            for cid, what, where in p.explained)
            add_ranked_row(table, ranks, p.rank, p.function, ", ".join(p.loaded_dynamic) or "-",
                          ", ".join(p.recompiles), ",".join(p.allow_list) or why or "-")
        capped.show(table)

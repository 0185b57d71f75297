"""The CUDA-graph sections of ``dyncli diagnose``'s terminal view (the HTML's is in ``html``).

One summary line (recordings, frames, sizes, seconds and where they came from), then the
recordings per frame and size, the skips and the re-record limits hit.
"""

from __future__ import annotations

from rich.console import Console

from dyncli.diagnose.cudagraph_report import CudagraphReport, FrameRecordings
from dyncli.diagnose.findings import place
from dyncli.diagnose.model import Diagnosis
from dyncli.output import Capped, add_ranked_row, section_table


def ms(seconds: float | None) -> str:
    """Milliseconds with two decimals, or "-" when unknown."""
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def summary(report: CudagraphReport) -> str:
    """``CUDA graphs: 5 recording(s) in 1 frame(s) for 5 size(s), 5.67 ms of recording …``."""
    n = len(report.recordings) + report.dropped
    sizes = sum(f.distinct_sizes for f in report.frames)
    line = (f"CUDA graphs: {n} recording(s) in {len(report.frames)} frame(s)"
            + (f" for {sizes} size(s)" if sizes else ""))
    if report.record_seconds is not None:
        line += f", {ms(report.record_seconds)} ms of recording (the trace's CUDAGraphNode.record)"
    elif n:
        line += " (no time: TORCH_TRACE of the same run, given beside this log, times them)"
    if not n and report.tree_keys:
        line += (f"; {report.tree_lines} graph/size pair(s) new to CUDA graphs, recorded on "
                 f"their next call (the tree lines: symint keys "
                 + ", ".join(k or "none" for k in report.tree_keys[:20]) + ")")
    if report.skips:
        line += f"; {sum(x.count for x in report.skips)} skip(s)"
    if report.limit_hits:
        line += f"; re-record limit hit {len(report.limit_hits)}x"
    if report.errors:
        line += f"; {sum(e.count for e in report.errors)} error(s) of the graphs as they ran"
    outside = [(c, n, other) for c, n, other in report.partitions if other]
    if outside:
        kept = ", ".join(f"{r} ({ir} x{n})" if ir else f"{r} x{n}"
                         for r, ir, n in report.kept_out[:4])
        line += ("; graph partitions outside CUDA graphs (their ops run eagerly between the "
                 "graphs' replays): " + ", ".join(f"[{c}] {other} of {n}" for c, n, other
                                                 in outside[:6])
                 + (f": {kept}" if kept else ""))
    if report.distinct_sizes_warned:
        line += f"; torch warned of {report.distinct_sizes_warned} distinct sizes"
    return line


def size_cells(f: FrameRecordings) -> str:
    """``2x16x64: 1 (1.72 ms)`` per size, one per line."""
    return "\n".join(f"{size}: {n}" + (f" ({ms(secs)} ms)" if secs is not None else "")
                     for size, n, secs in f.sizes)


def render_cudagraphs(diag: Diagnosis, out: Console, limit: int = 20) -> None:
    """The CUDA-graph sections (nothing when the input holds no CUDA-graph record)."""
    report = diag.cudagraphs
    if report is None:
        return
    ranks = diag.ranked
    capped = Capped(out, limit)
    out.print(summary(report), markup=False, soft_wrap=True)
    if report.frames:
        t = section_table("CUDA-graph recordings per frame and size",
                          ["frame", "function", "compiles", "recordings", "re-records",
                           "ms", "per size: recordings (ms)"], ranks)
        for f in capped.rows(report.frames, "frames recorded"):
            add_ranked_row(t, ranks, f.rank, f.frame_id, f.function or "?", ", ".join(f.compile_ids),
                         str(f.recordings), str(f.rerecords), ms(f.seconds), size_cells(f))
        capped.show(t)
    if report.skips:
        t = section_table("Ran without CUDA graphs", ["compile", "kind", "reason", "user code",
                                                     "count"], ranks)
        for x in capped.rows(report.skips, "skips"):
            add_ranked_row(t, ranks, x.rank, x.compile_id or "-", x.kind,
                         x.reason.split("\n", 1)[0],
                         place(x.user) if x.user else "-", str(x.count))
        capped.show(t)
    if report.errors:
        # "raised": yes where the log shows one raised (the program stopped there), "-" where
        # it does not (warned, quoted, logged by a server that went on, or torch's words alone)
        t = section_table("CUDA-graph errors", ["kind", "message", "user code", "count",
                                                "raised"], ranks)
        for e in capped.rows(report.errors, "CUDA-graph errors"):
            add_ranked_row(t, ranks, e.rank, e.kind, e.message,
                           f"{place(e.user)} in {e.user.function}" if e.user else "-",
                           str(e.count), "yes" if e.raised else "-")
        capped.show(t)
    for hit in capped.rows(report.limit_hits, "re-record limit hits"):
        out.print(f"[{hit.compile_id}] {hit.mode} graph hit cudagraph_dynamic_shape_rerecord_limit"
                  f"={hit.limit}: later sizes ran eager", markup=False, soft_wrap=True)
    capped.done()
    for note in report.notes:
        out.print(f"Note: {note}", markup=False, soft_wrap=True)

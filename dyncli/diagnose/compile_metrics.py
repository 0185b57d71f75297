"""torch's compile-time table at exit (``TorchDynamo compilation metrics:``), read into the
run's compile seconds: the report, the sentence the summary says, and the finding when the
compile time is long (pytorch#118492: a log whose only content is ~400 s of compile time
read "Nothing to fix").

The table's rows nest (textmetrics): the whole frame compiles are ``compile_inner`` (its
name: ``_compile.<locals>.compile_inner`` in 2.1-2.3, ``_compile.compile_inner`` from 2.6),
the backend's share ``OutputGraph.call_user_compiler`` (every release); the other rows are
parts of these, so they are shown, never added.
"""

from __future__ import annotations

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import CompileMetricsReport, Diagnosis
from dyncli.diagnose.reasons import cite
from dyncli.logparse.events import CompileMetrics

# the rows of the whole frame compiles (2.1-2.3 name the function by its qualname) and of the
# backend, in torch/_dynamo/convert_frame.py and output_graph.py
TOTAL_ROWS = ("_compile.compile_inner", "_compile.<locals>.compile_inner")
BACKEND_ROW = "OutputGraph.call_user_compiler"
# the compile time the finding is about: a minute of warm-up is a cost worth a finding; a few
# seconds (a small model) is what compiling takes
LONG_COMPILE_S = 60.0
_SHOWN = 3  # the largest rows named besides the two above


def report(e: CompileMetrics) -> CompileMetricsReport:
    """One process's table, with its total and backend rows picked out."""
    total = next(((name, s) for name, s in e.rows if name in TOTAL_ROWS), None)
    backend = next((s for name, s in e.rows if name == BACKEND_ROW), None)
    return CompileMetricsReport(rank=e.rank, rows=e.rows, total_row=total[0] if total else "",
                                total_s=total[1] if total else None, backend_s=backend,
                                cut=e.cut, line=e.line)


def said(x: CompileMetricsReport) -> str:
    """``compile took 401.73 s (_compile.<locals>.compile_inner), 376.26 s in the backend
    (OutputGraph.call_user_compiler)``: what the table says, where it says it."""
    who = f"rank {x.rank}: " if x.rank is not None else ""
    cut = " (the paste cuts the table)" if x.cut else ""
    if x.total_s is None:
        top = max(x.rows, key=lambda r: r[1], default=None)
        if top is None:
            return f"{who}torch's compilation metrics list no compile{cut}"
        return f"{who}compile time: {top[1]:.2f} s in {top[0]}, the largest row of torch's table{cut}"
    backend = (f", {x.backend_s:.2f} s in the backend ({BACKEND_ROW})"
               if x.backend_s is not None else "")
    return f"{who}compile took {x.total_s:.2f} s ({x.total_row}){backend}{cut}"


def summary_line(diag: Diagnosis) -> str:
    """The summary's line about compile time ("" without torch's table)."""
    if not diag.compile_metrics:
        return ""
    return ("Compile time (torch's compilation metrics at exit): "
            + "; ".join(said(x) for x in diag.compile_metrics))


def long_compiles(diag: Diagnosis) -> list[Advice]:
    """A process whose compiles took a minute or more: where the seconds went, and what cuts
    them (fewer compiles; torch's compile caches kept between runs, docs/bench.md)."""
    out = []
    for x in diag.compile_metrics:
        if x.total_s is None or x.total_s < LONG_COMPILE_S:
            continue
        parts = sorted((r for r in x.rows if r[0] not in TOTAL_ROWS and r[0] != BACKEND_ROW),
                       key=lambda r: -r[1])[:_SHOWN]
        largest = (" Its largest parts (rows nest, each holds the ones it calls): "
                   + ", ".join(f"{name} {s:.2f} s" for name, s in parts) + ".") if parts else ""
        backend = ""
        if x.backend_s is not None and x.total_s > 0:
            share = x.backend_s / x.total_s
            backend = (f" {share:.0%} of it in the backend (AOTAutograd and the compiler: "
                       "lowering, code generation)" if share >= 0.5 else
                       f" {share:.0%} of it in the backend, the rest in dynamo's tracing")
            backend += "."
        compiles = (f"the log shows {diag.compiles} compile(s); " if diag.compiles else
                    'this log does not show how many compiles that was (TORCH_LOGS="recompiles" '
                    "prints each recompile and its reason); ")
        out.append(Advice(
            kind=AdviceKind.COMPILE_TIME, rank=x.rank, key=f"{x.rank}:{x.line}",
            message=(f"compile took {x.total_s:.2f} s in all ({x.total_row}, torch's "
                     f"compilation metrics at exit{', cut by the paste' if x.cut else ''})."
                     f"{backend}{largest}"),
            fix=(f"fewer compiles: {compiles}each compile of a new size pays it again until the "
                 "size is dynamic. Keep torch's compile caches between runs: inductor's FX graph "
                 "cache (on by default from torch 2.5) and the AOTAutograd cache (2.7) live in "
                 "TORCHINDUCTOR_CACHE_DIR (else torchinductor_<user> in the temp dir); keep that "
                 "directory, or carry it with torch.compiler.save_cache_artifacts() / "
                 "load_cache_artifacts() (2.7): a hit skips the backend's lowering and code "
                 "generation, dynamo still traces (dyncli bench --start warm measures it)"),
            evidence=(cite(x.line, "", said(x)),)))
    return out

"""The ``--nproc`` views of a bench result: ranks side by side, and the strategies' summary."""

from __future__ import annotations

import math

from rich import box
from rich.table import Table

from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.termfit import FitTable


def _num(x: float, digits: int) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def rank_table(run: RunResult) -> Table:
    """One column per rank, one row per measure."""
    title = f"{run.label} · {run.mode} · {len(run.ranks)} ranks" + (
        " · DIVERGENT compiles" if run.divergent else "")
    t = FitTable(title=title, title_justify="left", box=box.SIMPLE_HEAD, split_columns=True)
    t.add_column("", justify="left", no_wrap=True)
    for r in run.ranks:
        t.add_column(f"rank {r.rank}", justify="right", no_wrap=True)
    rows = [
        ("status", [str(r.status) for r in run.ranks]),
        ("compiles", [str(r.compiles) for r in run.ranks]),
        ("compile s", [_num(r.compile_time_s, 2) for r in run.ranks]),
        ("first step s", [_num(r.first_step_s, 2) for r in run.ranks]),
        ("step ms (median)", [_num(r.step_ms, 3) for r in run.ranks]),
        ("wait ms (total)", [_num(r.wait_ms, 1) for r in run.ranks]),
        ("batches", [" ".join(str(s.batch_size) for s in r.steps) or "-" for r in run.ranks]),
    ]
    for label, cells in rows:
        t.add_row(label, *cells)
    return t


def summary_table(result: BenchResult) -> Table:
    """The strategies side by side, measured across ranks."""
    t = FitTable(title="strategies side by side (across ranks)", title_justify="left",
                 box=box.SIMPLE_HEAD, split_columns=True)
    t.add_column("", justify="left", no_wrap=True)
    for r in result.runs:
        t.add_column(r.label, justify="right", no_wrap=True)
    rows = [
        ("status", [str(r.status) for r in result.runs]),
        ("divergent", ["-" if r.divergent is None else "yes" if r.divergent else "no"
                       for r in result.runs]),
        ("compiles per rank", [" ".join(str(k.compiles) for k in r.ranks) or "-"
                               for r in result.runs]),
        ("total wait ms", [_num(r.total_wait_ms, 1) for r in result.runs]),
        ("slowest rank", ["-" if r.slowest_rank is None else str(r.slowest_rank)
                          for r in result.runs]),
        ("wall s", [_num(r.wall_s, 1) for r in result.runs]),
    ]
    for label, cells in rows:
        t.add_row(label, *cells)
    return t

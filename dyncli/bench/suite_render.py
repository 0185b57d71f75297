"""Rendering a suite run: the summary table, the suite listing, CSV rows and the files.

The CSV has the columns of a single ``dyncli bench --csv`` (the PyTorch harness's names first:
dev, name, batch_size, speedup, abs_latency, compilation_latency), one row per model,
strategy and variation, built from the same JSON runs the document holds.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from dyncli.bench.core.status import Status
from dyncli.bench.core.suite_result import SuiteResult
from dyncli.bench.core.suites import Suite
from dyncli.bench.render_files import csv_text, run_rows
from dyncli.output import Output, add_text_row, atomic_write_text, write_json
from dyncli.termfit import FitTable


def _num(x: Any, digits: int) -> str:
    return "-" if not isinstance(x, (int, float)) or x != x else f"{x:.{digits}f}"


def csv_rows(result: SuiteResult) -> list[dict[str, Any]]:
    """One row per (model, strategy, variation); a run without variations still gets one."""
    rows = []
    for o in result.outcomes:
        env = o.environment or result.environment
        rows += [row for run in o.runs for row in run_rows(run, env.device if env else None)]
    return rows


def to_csv(result: SuiteResult) -> str:
    """CSV text of :func:`csv_rows` (the single-model bench's columns and cell format)."""
    return csv_text(csv_rows(result))


def write_files(result: SuiteResult, json_path: str | None, csv_path: str | None) -> None:
    """Rewrite the requested files atomically (JSON to stdout only at the end)."""
    if json_path and json_path != "-":
        write_json(json_path, result.to_dict())
    if csv_path and csv_path != "-":
        atomic_write_text(csv_path, to_csv(result))


def summary_table(result: SuiteResult) -> Table:
    """One row per model and strategy: status, median speedup, compiles, compile s, wall."""
    t = FitTable(title=f"suite {result.suite.name} · {len(result.outcomes)}/"
                 f"{result.suite.models} models", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("model", "strategy", "status", "speedup", "compiles", "compile s", "wall s"):
        t.add_column(col, justify="left" if col in ("model", "strategy", "status") else "right",
                     no_wrap=True)
    for o in result.outcomes:
        for r in o.runs:
            status = str(r.status)
            if r.status != Status.PASS and r.error:
                status = f"{status}: {r.error}"[:70]
            add_text_row(t, o.name, r.label, status, _num(r.speedup.median, 2),
                         str(r.compiles), _num(r.compile_time_s, 1), _num(r.wall_s, 0))
    return t


def print_result(result: SuiteResult, out: Output | None = None) -> None:
    """The summary table, and each failed model's stderr tail, through ``out``."""
    out = out or Output()
    out.table(summary_table(result))
    env = result.environment
    if env:
        out.text(f"on {env.device} ({env.device_name}), {env.dtype}, "
                  f"torch {env.torch}; speedup = median over variations of "
                  "median eager / median compiled")
    for o in result.outcomes:
        if o.status != Status.PASS and o.stderr_tail:
            last = "\n    ".join(o.stderr_tail.splitlines()[-5:])
            out.text(f"{o.name}: {o.status}; last lines of its stderr:\n    {last}")


def print_listing(suites: list[Suite]) -> None:
    """``dyncli bench --list-suites``."""
    out = Output()
    for s in suites:
        out.text(f"{s.name}: {s.description}")
        if s.defaults:
            out.text("  settings: " + ", ".join(f"{k}={v}" for k, v in s.defaults.items()))
        out.text("  models: " + ", ".join(e.name for e in s.entries))

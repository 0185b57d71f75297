"""What ``dyncli bench`` writes to files: the CSV rows, the PNG plot, the plan (``--emit``).

The JSON document (``BenchResult.to_dict``) and the CSV rows are built from the same result, so
the two never disagree. Every file is written atomically and can be rewritten after every
strategy (``write_files``); ``-`` writes to stdout. The terminal view is :mod:`dyncli.bench.render`.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path
from typing import Any

from dyncli.bench.core.result import BenchResult, RunResult, VariationResult
from dyncli.bench.core.stats import median
from dyncli.output import Output, atomic_target, atomic_write_text, write_json
from dyncli.words import counted

CSV_COLUMNS = ("dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency",
               "eager_latency", "p_value", "accuracy", "strategy", "mode", "compile_mode",
               "variation",
               "seq_len", "shapes", "recompiled", "compiles", "unique_graphs",
               "recompile_limit_hit", "dynamo_peak_mem", "status",
               # the strategy's request-stream cost (the same on each of its rows)
               "stream_requests", "stream_total_s", "stream_first_result_s",
               "stream_latency_ms", "break_even_eager", "pad_waste", "recommended")


# ---------------------------------------------------------------- JSON / CSV


def csv_rows(result: BenchResult) -> list[dict[str, Any]]:
    """One row per (model, strategy, variation); dashboard names where they apply."""
    best = result.recommendation.strategy if result.recommendation else None
    return [row for run in result.runs
            for row in run_rows(run, result.environment.device, best)]


def run_rows(run: RunResult, device: str | None, best: str | None = None
             ) -> list[dict[str, Any]]:
    """The CSV rows of one run (a suite's too): one per variation, one when it has none."""
    rows = []
    peak = run.peak_memory_bytes / 1e9 if run.peak_memory_bytes else None
    cost = run.stream
    stream: dict[str, Any] = dict.fromkeys(CSV_COLUMNS[CSV_COLUMNS.index("stream_requests"):])
    if cost:
        stream.update(stream_requests=cost.requests, stream_total_s=cost.total_s,
                      stream_first_result_s=cost.first_result_s,
                      stream_latency_ms=cost.weighted_latency_ms,
                      break_even_eager=cost.break_even, pad_waste=cost.pad_waste)
    if best:
        stream["recommended"] = run.label == best
    variations: list[VariationResult | None] = list(run.variations) or [None]
    for v in variations:  # a model that failed to load still gets a row
        rows.append({
            "dev": device, "name": run.model,
            "batch_size": v.batch_size if v else None,
            "speedup": v.speedup if v else None,
            "abs_latency": v.compiled_ms if v else None,
            "compilation_latency": v.compile_time_s if v else None,
            "eager_latency": v.eager_ms if v else None,
            "p_value": v.p_value if v else None,
            "accuracy": v.status if v else run.status,
            "strategy": run.strategy, "mode": run.mode, "compile_mode": run.compile_mode,
            "variation": v.index if v else None, "seq_len": v.seq_len if v else None,
            "shapes": ";".join(f"{k}={'x'.join(map(str, s))}" for k, s in v.shapes.items())
            if v else None,
            "recompiled": v.recompiled if v else None, "compiles": v.compiles if v else None,
            "unique_graphs": run.compiles, "recompile_limit_hit": run.recompile_limit_hit,
            "dynamo_peak_mem": peak, "status": run.status, **stream,
        })
    return rows


def csv_text(rows: list[dict[str, Any]]) -> str:
    """CSV text in the harness's columns (:data:`CSV_COLUMNS`); NaN, inf and None as empty cells."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None or (isinstance(v, float) and not math.isfinite(v))
                             else (f"{v:.6g}" if isinstance(v, float) else v))
                         for k, v in row.items()})
    return buf.getvalue()


def to_csv(result: BenchResult) -> str:
    """CSV text of :func:`csv_rows`."""
    return csv_text(csv_rows(result))


# ---------------------------------------------------------------- plot


def log_scale(values: list[float], span: float = 20.0) -> bool:
    """Whether values (all positive) span more than ``span`` times: then a log axis."""
    positive = [v for v in values if v > 0]
    return len(positive) > 1 and max(positive) / min(positive) > span


def write_plot(result: BenchResult, path: Path | str) -> None:
    """PNG of median latency against batch size: eager and each strategy, compiles marked.

    ``-`` writes the PNG to stdout."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    curves = result.eager_stream is not None and any(r.stream for r in result.runs)
    if curves:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, 5), dpi=100)
        _cumulative(ax2, result)
    else:
        fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    eager: dict[int, list[float]] = {}
    plotted: list[float] = []
    for run in result.runs:
        # a batch size drawn twice is one point: the median of all its samples
        samples: dict[int, list[float]] = {}
        compiled_at: set[int] = set()
        for v in run.variations:
            if v.timed and v.batch_size is not None:
                eager.setdefault(v.batch_size, []).extend(v.eager_samples)
                samples.setdefault(v.batch_size, []).extend(v.compiled_samples)
                if v.recompiled:
                    compiled_at.add(v.batch_size)
        if not samples:
            continue
        xs = sorted(samples)
        ys = [median(samples[x]) for x in xs]
        plotted.extend(ys)
        (line,) = ax.plot(xs, ys, marker="o", ms=4,
                          label=f"compiled: {run.label} ({counted(run.compiles, 'compile')})")
        hits = [(x, y) for x, y in zip(xs, ys, strict=True) if x in compiled_at]
        ax.scatter([h[0] for h in hits], [h[1] for h in hits], s=120, marker="o",
                   facecolors="none", edgecolors=line.get_color(), linewidths=1.5)
    if eager:
        xs = sorted(eager)
        plotted.extend(median(eager[x]) for x in xs)
        ax.plot(xs, [median(eager[x]) for x in xs], color="black",
                linestyle="--", marker="s", ms=4, label="eager")
    ax.scatter([], [], s=120, marker="o", facecolors="none", edgecolors="gray",
               label="compiled on first sight of this shape")
    env = result.environment
    ax.set_title(f"{result.model} — {env.device} ({env.device_name}), {env.dtype}, "
                 f"{result.settings.get('mode')}", fontsize=10)
    ax.set_xlabel("batch size")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("median latency (ms)")
    if log_scale(plotted):  # one slow point would flatten every other to 0 on a linear axis
        ax.set_yscale("log")
        ax.set_ylabel("median latency (ms, log scale)")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        if str(path) == "-":
            sys.stdout.flush()
            fig.savefig(sys.stdout.buffer, format="png")
            sys.stdout.buffer.flush()
        else:
            with atomic_target(path) as tmp:
                fig.savefig(tmp, format="png")
    finally:
        plt.close(fig)


def _cumulative(ax: Any, result: BenchResult) -> None:
    """Cumulative seconds against requests served: eager and one line per strategy."""
    eager = result.eager_stream
    if eager is None:
        return
    xs = list(range(1, len(eager.curve) + 1))
    for run in result.runs:
        if run.stream is not None:
            ax.plot(xs, run.stream.curve, label=f"{run.label} ({run.stream.total_s:.1f} s)")
    ax.plot(xs, eager.curve, color="black", linestyle="--", label=f"eager ({eager.total_s:.1f} s)")
    ax.set_title(f"{counted(result.requests or 0, 'request')} from {result.shapes_source}: cumulative time",
                 fontsize=10)
    ax.set_xlabel("requests served")
    ax.set_ylabel("cumulative time (s), compiles included")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def write_files(result: BenchResult, json_path: str | None, csv_path: str | None,
                plot_path: str | None) -> None:
    """Write (or rewrite) every requested file atomically; JSON to stdout only at the end."""
    if json_path and json_path != "-":
        write_json(json_path, result.to_dict())
    if csv_path and csv_path != "-":
        atomic_write_text(Path(csv_path), to_csv(result))
    if plot_path and plot_path != "-" and any(v.timed for r in result.runs for v in r.variations):  # not --nproc
        write_plot(result, Path(plot_path))


PLAN_FILES = {"python": "dyncli_plan.py", "env": "dyncli_plan.env", "toml": "dyncli_plan.toml"}


def plan_path(form: str | None, path: str | None) -> str | None:
    """Where ``--emit FORM`` writes: ``--emit-file`` or ``dyncli_plan.{py,env,toml}``."""
    if form is None:
        return None
    return path or PLAN_FILES[form]


def write_plan(result: BenchResult, form: str, path: str, out: Output) -> None:
    """Write the recommendation's plan in ``form`` (atomically; ``-`` = stdout).

    Where there is none (:func:`~dyncli.bench.core.recommend.no_plan` says why): a warning
    after Ctrl-C (the run exits 130 for that), else an error (exit 1)."""
    from dyncli.bench.core.apply import Plan
    from dyncli.bench.core.emit import emit
    from dyncli.bench.core.recommend import no_plan
    from dyncli.errors import GateError
    from dyncli.output import write_text

    why = no_plan(result)
    rec = result.recommendation
    if why is not None or rec is None or rec.apply is None:
        if result.interrupted:
            out.warn(f"--emit: {why}")
            return
        raise GateError(f"--emit: {why}")
    write_text(path, emit(Plan.from_dict(rec.apply), form, result.settings))
    if path != "-":
        stopped = " (every strategy was measured before Ctrl-C)" if result.interrupted else ""
        out.info(f"plan ({form}) for {rec.strategy} written to {path}{stopped}")

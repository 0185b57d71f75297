"""The terminal view of a :class:`BenchResult`: rich tables, the recommendation and payback
lines, the live progress bar. What bench writes to files (CSV, plot, plan) is
:mod:`dyncli.bench.render_files`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dyncli.bench import render_ranks
from dyncli.bench.core import caches
from dyncli.bench.core.cpu_time import DIVERGE
from dyncli.bench.core.recommend import restarts_of, stream_given
from dyncli.bench.core.result import BenchResult, Hooks, RunResult
from dyncli.bench.core.run_parts import Replay
from dyncli.bench.core.status import Status
from dyncli.output import (
    Output,
    info,
    stderr_console,
)
from dyncli.termfit import FitTable
from dyncli.words import counted


def _f(x: float, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ms(x: float) -> str:
    if x != x:
        return "-"
    return f"{x:.1f}" if x >= 100 else f"{x:.2f}" if x >= 10 else f"{x:.3f}"


def _p(x: float) -> str:
    return "-" if x != x else (f"{x:.2g}" if x >= 0.001 else "<0.001")


def _compiled_here(v: Any) -> str:
    """``yes 1.20 s``, with the caches that served the compile: ``yes 0.20 s FX graph hit``."""
    if not v.recompiled:
        return "no"
    hit = caches.label(v.cache_hits)
    return f"yes {v.compile_time_s:.2f} s" + (f" {hit}" if hit else "")


def _compile_s(run: RunResult) -> str:
    """A strategy's compile seconds, with its compiles' cache hits: ``0.2 (3 FX graph hits)``."""
    hit = caches.label(caches.total([v.cache_hits for v in run.variations]), count=True)
    return _f(run.compile_time_s, 1) + (f" ({hit})" if hit else "")


def _status(run: RunResult) -> str:
    """The run's status; a strategy that ran eagerly with the share of requests that did."""
    if run.status == Status.RAN_EAGER and run.eager_share is not None:
        return f"{run.status} {run.eager_share:.0%}"
    return str(run.status)


# ---------------------------------------------------------------- terminal


def variation_table(run: RunResult) -> Table:
    """One row per variation of a strategy."""
    t = FitTable(title=f"{run.label} · {run.mode} · {counted(run.compiles, 'compile')}"
                 + (" · RECOMPILE LIMIT HIT" if run.recompile_limit_hit else ""),
                 title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("#", "shape", "eager ms", "comp ms", "speedup", "p", "compiled here",
                "accuracy"):
        # no_wrap: a cell is never cut; a table too wide is printed another way (FitTable)
        t.add_column(col, justify="left" if col in ("shape", "accuracy") else "right",
                     no_wrap=True)
    for v in run.variations:
        t.add_row(str(v.index), _shape(v), _ms(v.eager_ms), _ms(v.compiled_ms), _f(v.speedup, 2),
                  _p(v.p_value), _compiled_here(v), str(v.status) + (" ¹" if v.detail else ""))
    return t


def _shape(v: Any) -> str:
    return " ".join("x".join(map(str, s)) for s in v.shapes.values())


def detail_lines(run: RunResult) -> list[str]:
    """Each variation's detail in full, one line under its table (``¹`` in the accuracy
    column): the error that failed it, why it ran eager, a size run unpadded. A table cell
    cut it at 60 characters, mid-word, and hid it when the status was ``pass``."""
    return [f"¹ #{v.index} {_shape(v)}: {v.detail}" for v in run.variations if v.detail]


def comparison_table(result: BenchResult) -> Table:
    """The strategies side by side: one column per strategy, one row per measure."""
    t = FitTable(title="strategies side by side", title_justify="left", box=box.SIMPLE_HEAD,
                 split_columns=True)
    t.add_column("", justify="left", no_wrap=True)
    for r in result.runs:
        t.add_column(r.label, justify="right", no_wrap=True)
    rows: list[tuple[str, list[str]]] = [
        ("status", [_status(r) for r in result.runs]),
        ("speedup median", [_f(r.speedup.median, 2) for r in result.runs]),
        ("speedup min", [_f(r.speedup.min, 2) for r in result.runs]),
        ("speedup max", [_f(r.speedup.max, 2) for r in result.runs]),
        ("speedup std", [_f(r.speedup.std, 2) for r in result.runs]),
        ("speedup geomean", [_f(r.speedup.geomean, 2) for r in result.runs]),
        ("compiles", [str(r.compiles) for r in result.runs]),
        ("compile wall s", [_compile_s(r) for r in result.runs]),
        ("recompile limit hit", ["YES" if r.recompile_limit_hit else "no" for r in result.runs]),
        ("peak memory MB", [f"{r.peak_memory_bytes / 2**20:.0f}" if r.peak_memory_bytes else "-"
                            for r in result.runs]),
    ]
    for label, cells in rows:
        t.add_row(label, *cells)
    return t


def untimed_line(result: BenchResult) -> str:
    """What stands for the strategies' table when no run timed a shape (stopped, failed or
    not applicable before its first timing): a table of "-" read as a measurement. The
    compiles made before that are said, as they were counted."""
    made = [f"{r.label} {r.compiles}" for r in result.runs if r.compiles]
    return ("no strategy timed a shape, so there is nothing to set side by side"
            + (f" (compiles made before that: {', '.join(made)})" if made else ""))


def stream_table(result: BenchResult) -> Table:
    """What the request stream costs: one row for eager and one per strategy.

    ``pad waste`` is shown only when a strategy padded, ``replay`` only with ``--replay``; a
    strategy with no cost (it failed, or did not apply) shows its status under ``total s``.
    """
    t = FitTable(title=f"request stream · {counted(result.requests or 0, 'request')} from {result.shapes_source}",
                 title_justify="left", box=box.SIMPLE_HEAD)
    show_pad = any(r.stream is not None and r.stream.pad_waste is not None for r in result.runs)
    eager = result.eager_stream
    show_replay = any(r.replay for r in result.runs) or bool(eager and eager.replay)
    cols = ["strategy", "total s", "first s", "compiles (s)", "ms/req", "beats eager"]
    cols += ["pad waste"] * show_pad + ["replay meas/pred s"] * show_replay
    for col in cols:
        t.add_column(col, justify="left" if col == "strategy" else "right", no_wrap=True)

    def extras(pad: str, replay: str) -> list[str]:
        return [pad] * show_pad + [replay] * show_replay

    if eager is not None:
        t.add_row("eager", f"{eager.total_s:.2f}", f"{eager.first_result_s:.2f}", "0",
                  _ms(eager.weighted_latency_ms), "-", *extras("-", _replay(eager.replay)))
    for r in result.runs:
        c = r.stream
        if c is None:
            t.add_row(r.label, _status(r), *(["-"] * (len(cols) - 2)))
            continue
        be = "never" if c.break_even is None else \
            f"{c.break_even} req" + ("*" if c.break_even_projected else "")
        t.add_row(r.label, f"{c.total_s:.2f}", f"{c.first_result_s:.2f}",
                  f"{c.compiles} ({c.compile_s:.1f})", _ms(c.weighted_latency_ms), be,
                  *extras("-" if c.pad_waste is None else f"{c.pad_waste:.0%}",
                          _replay(r.replay)))
    return t


def _replay(replay: Replay | None) -> str:
    """A replay cell: measured / predicted seconds."""
    return f"{replay.measured_s:.2f} / {replay.predicted_s:.2f}" if replay else "-"


def replay_hits_line(result: BenchResult) -> str | None:
    """Which replays compiled from cache entries already there; None when none did."""
    hit = [f"{r.label} {caches.label(r.replay.cache_hits, count=True)}" for r in result.runs
           if r.replay is not None and r.replay.cache_hits]
    if not hit:
        return None
    warm = result.measured is not None and not result.measured.caches.fresh
    return (f"replay from cache entries: {', '.join(hit)} — compiles served by entries already "
            "in the caches" + (" (--warm-cache: those the measurement wrote)" if warm else "")
            + ", so the replay's compile seconds are not the ones the prediction charges")


def replay_compiles_line(result: BenchResult) -> str | None:
    """Which replays compiled another number of times than their stream's cost charged; None
    when every one compiled as predicted. Round 34: torch 2.15's one-layer T5 encoder under
    ``unbacked`` over 6 sequence lengths compiled 6 graphs in bench's walk, 12 more at lengths
    it had compiled, and 13 in the replay, beside a prediction of 6, and nothing said so.
    Left out: a stream costed as restarted processes (its compiles are every process's)."""
    off = [f"{r.label} {r.replay.compiles} (charged {r.stream.compiles})" for r in result.runs
           if r.replay is not None and r.stream is not None and r.replay.compiles is not None
           and not math.isnan(r.replay.measured_s)  # a replay that raised: its own line
           and r.replay.compiles != r.stream.compiles
           and not restarts_of(r, result.settings)]
    if not off:
        return None
    return (f"replays that compiled other than predicted: {', '.join(off)} — their predicted "
            "totals charge other compiles than the stream cost when served, so their replayed "
            "seconds are the figure to trust")


def replay_gc_line(result: BenchResult) -> str | None:
    """Which replays held Python's full garbage collections, and their seconds; None when
    none did (or none was counted)."""
    replays = [("eager", result.eager_stream.replay if result.eager_stream else None)]
    replays += [(r.label, r.replay) for r in result.runs]
    held = [f"{name} {p.gc_full} ({p.gc_full_s or 0.0:.2f} s)" for name, p in replays
            if p is not None and p.gc_full]
    if not held:
        return None
    return (f"full garbage collections inside the replays' requests: {', '.join(held)} — "
            "Python's collector freeing what compiles left behind; a server pays them too, "
            "in some request after a compile, and no prediction holds them")


def payback_line(result: BenchResult) -> str:
    """Without the user's traffic: when each strategy's compiling pays back, no verdict."""
    parts = []
    for r in result.runs:
        c = r.stream
        if c is None:
            continue
        when = "never" if c.break_even is None else \
            f"after {counted(c.break_even, 'request', grouped=True)}" + ("*" if c.break_even_projected else "")
        parts.append(f"{r.label} {when}")
    return (f"compiling pays back (against eager): {'; '.join(parts)}. No recommendation: the "
            f"{result.requests} measured shapes are not your traffic; give it with --shapes FILE, "
            "--sizes or --requests N")


def start_line(run: RunResult) -> str | None:
    """--start warm: a cold and a warm process of the strategy, side by side."""
    s = run.start
    if s is None:
        return None
    if s.status != Status.PASS:
        return f"{run.label} restart: {s.status}: {s.error or ''}"

    def secs(x: float | None) -> str:
        return f"{x:.1f} s" if x is not None else "-"
    def compiles(n: int | None) -> str:
        return "? compiles" if n is None else counted(n, "compile")
    return (f"{run.label} restart: cold process {compiles(s.cold_compiles)} "
            f"{secs(s.cold_compile_time_s)}; warm process {compiles(s.compiles)} "
            f"{secs(s.compile_time_s)} ({counted(s.fx_cache_hits or 0, 'FX cache hit')})")


def buckets_line(run: RunResult) -> str | None:
    """pad with --buckets auto: the chosen buckets beside pow2 and no padding (predicted by the
    probe), what the chosen ones cost when measured, and what the probe's compiles were
    charged where waiting for the machine stretched their wall time."""
    info = run.buckets
    if info is None or not info.plans:
        return None
    shown = []
    for name in ("auto", "pow2", "none"):
        p = info.plans.get(name)
        if p is None:
            continue
        label = {"auto": "auto", "pow2": "pow2", "none": "no padding"}[name]
        sizes = "" if name == "none" else " " + ",".join(str(b) for b in p.buckets)
        said = f"{label}{sizes}: {p.total_s:.2f} s predicted ({counted(p.compiles, 'compile')})"
        if name == "auto" and run.stream is not None and p.total_s > 0:
            # how far the probe's price held: the measured pass over the same stream
            said += (f", {run.stream.total_s:.2f} s measured "
                     f"({(run.stream.total_s / p.total_s - 1) * 100:+.0f} %)")
        shown.append(said)
    line = f"{run.label} buckets — " + "; ".join(shown)
    wall = info.compile_wall_s_each
    if wall is not None and wall > DIVERGE * info.compile_s_each + 0.1:
        line += (f"; the probe's compiles waited for the machine: {wall:.2f} s each at wall, "
                 f"charged {info.compile_s_each:.2f} s (min of wall and CPU, as the stream's)")
    return line


def graphs_line(run: RunResult) -> str | None:
    """A CUDA-graph mode on CUDA: recordings, the pool, how the stream's calls were served,
    and the plan chosen within the memory budget."""
    g = run.graphs
    if g is None:
        return None
    parts = [("? recordings" if g.recordings is None else counted(g.recordings, "recording"))
             + (f" ({g.record_s:.2f} s)" if g.record_s is not None else "")]
    if g.pool_bytes is not None:
        parts.append(f"pool {g.pool_bytes / 2**20:.0f} MiB")
    if g.calls:
        parts.append(", ".join(f"{share:.0%} {kind.replace('_', ' ')}"
                               for kind, share in g.calls.items()))
    chosen = g.chosen
    if chosen is not None and chosen.name != "record-all":
        what = (f"capture {','.join(map(str, chosen.capture_sizes))}" if chosen.capture_sizes
                else f"re-record limit {chosen.limit}")
        parts.append(f"plan: {what} ({chosen.total_s:.2f} s predicted)")
    elif chosen is None and g.plans:
        parts.append("no plan fits --memory-budget")
    return f"{run.label} CUDA graphs: " + "; ".join(parts)


def _limit_name(run: RunResult) -> str:
    """The config torch named in its limit warning: ``recompile_limit`` (torch 2.7 on) or
    ``cache_size_limit`` (2.4-2.6)."""
    for text in run.limit_messages:
        m = re.search(r"hit config\.(\w+)", text)
        if m:
            return m.group(1)
    return "recompile_limit"


def print_result(result: BenchResult, out: Output | None = None) -> None:
    """The human view through ``out`` (stdout, or stderr when stdout carries a document);
    limit hits warned on stderr."""
    out = out or Output()
    env = result.environment
    out.text(f"{result.model} on {env.device} ({env.device_name}), {env.dtype}, "
             f"torch {env.torch}")
    for run in result.runs:
        if run.error:
            out.text(f"{run.label}: {run.status}: {run.error}")
        if run.variations:
            out.table(variation_table(run))
            for said in detail_lines(run):
                out.text(said)
        if run.ranks:
            out.table(render_ranks.rank_table(run))
        if run.recompile_limit_hit:
            Output.warn(f"{run.label}: torch hit its recompile limit; later shapes ran in EAGER mode "
                 f"(raise torch._dynamo.config.{_limit_name(run)} or use a dynamic strategy)")
    if any(r.ranks for r in result.runs):
        out.table(render_ranks.summary_table(result))
        out.text("step ms = median compiled step without the all_reduce; wait = time in the "
                 "all_reduce that ends each step")
    elif result.ran:
        out.table(comparison_table(result))
        out.text("speedup = median eager / median compiled; p = two-sided Mann-Whitney U")
    else:
        out.text(untimed_line(result))
    if result.measured is not None:
        for said in result.measured.words(len(result.runs)):
            out.text(said)
    for run in result.runs:
        for p in run.passes:
            compiles = "- compiles" if p.compiles is None else counted(p.compiles, "compile")
            seconds = float("nan") if p.compile_time_s is None else p.compile_time_s
            out.text(f"{run.label} {p.name} pass: {compiles}, "
                     f"{seconds:.1f} s compiling"
                     + (f", state loaded: {p.state_loaded}" if p.state_loaded is not None
                         else ""))
    if result.requests and (result.eager_stream or any(r.stream for r in result.runs)):
        out.table(stream_table(result))
        out.text("total = compiles where they occur in the stream + each request's steady-state "
                 "latency; compiles (s) = the seconds charged for them, each compile's min(wall, "
                 "CPU) less one steady call, so time spent waiting for a busy machine's cores "
                 "is not charged (compile wall s above counts it); * = projected, taking the "
                 "stream to repeat")
        for line in (replay_compiles_line(result), replay_hits_line(result),
                     replay_gc_line(result)):
            if line:
                out.text(line)
    for run in result.runs:
        for line in (buckets_line(run), start_line(run), graphs_line(run)):
            if line:
                out.text(line)
    rec = result.recommendation
    if rec is not None:
        sure = (f" (confidence {rec.confidence:.2f} that it costs the stream least)"
                if rec.confidence is not None else "")
        out.text(f"recommendation: {rec.strategy}{sure} — {rec.reason}")
        if rec.apply is not None and not result.settings.get("emit"):
            out.text("to apply it: add --emit python (a module defining "
                     "compile_for_traffic(model)), --emit env or --emit toml")
    elif result.requests and not stream_given(result) and any(r.stream for r in result.runs):
        out.text(payback_line(result))
    if result.interrupted:
        Output.warn("interrupted (Ctrl-C or SIGTERM): the results above are what was measured "
                    "before it")


def print_listing(tv: list[str], timm_count: int, hf_examples: tuple[str, ...]) -> None:
    """``dyncli bench --list``."""
    out = Output()
    out.text("torchvision (bare names, resolved first):")
    out.view.print("  " + " ".join(tv), markup=False, soft_wrap=False)
    out.text(f"timm: any of {timm_count} timm models as timm:NAME "
             "(bare names that are not torchvision fall back to timm)")
    out.text("hf: any transformers model class as hf:CLASS, e.g. " + ", ".join(
        "hf:" + e for e in hf_examples))
    out.text("file: PATH.py:FUNCTION returning (model, example_inputs)")


@contextmanager
def progress_hooks(tap: Any = None, model: str | None = None) -> Iterator[Hooks]:
    """Hooks that show a progress bar on a terminal (plain lines otherwise) and warnings.

    The bar says what the seconds without progress are: building the model and the first
    compile before the first variation, the next strategy's compile after one finishes."""
    err = stderr_console()
    if err.is_terminal:
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=err, transient=True)
        what = f"{model}: " if model else ""
        task = bar.add_task(f"{what}building the model, first compile", total=None)

        def progress(strategy: str, done: int, total: int) -> None:
            label = strategy if done < total else f"{strategy} done; next: compiling"
            bar.update(task, description=label, completed=done, total=total)
        def warning(message: str) -> None:  # through the bar's console: above the bar
            Output.warn(message, console=bar.console)
        with bar:
            yield Hooks(progress=progress, warning=warning, tap=tap)
    else:
        # no bar in a pipe or a file: a line once the settings are checked, then one per
        # variation (the first compile can take minutes: a pipe silent until then looks hung)
        last: dict[str, int] = {}

        def started() -> None:
            info(f"{model + ': ' if model else ''}building the model, first compile "
                 "(a line follows each variation)")

        def plain(strategy: str, done: int, total: int) -> None:
            last[strategy] = last.get(strategy, 0) + 1
            info(f"[{done}/{total}] {strategy}: variation {last[strategy]} done")
        yield Hooks(progress=plain, warning=Output.warn, tap=tap, started=started)

"""Rendering a :class:`Comparison`: a rich table, GitHub markdown (a PR comment), JSON, a PNG.

All four come from the same pairs; markdown and the table show the same cells.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dyncli.compare.result import Change, Comparison, Pair, row_name
from dyncli.errors import UsageError
from dyncli.output import atomic_target, stdout_console, write_json
from dyncli.textsafe import visible
from dyncli.words import counted

COLUMNS = ("model", "strategy", "speedup", "compiled ms", "p", "compiles", "compile s",
           "first result s", "verdict")


def _v(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None, sep: str) -> str:
    return "" if x is None else f"{sep}{x * 100:+.1f}%"


def _measure(c: Change, digits: int, sep: str = " ") -> str:
    return f"{_v(c.base, digits)}→{_v(c.new, digits)}{_pct(c.change, sep)}"


def _one_ms(x: float | None) -> str:
    """Milliseconds with 4 significant digits: 0.02970, 1.057, 16.01, 641.4."""
    if x is None or x != x:
        return "-"
    return f"{x:.0f}" if x >= 1000 else f"{x:.1f}" if x >= 100 else f"{x:.2f}" if x >= 10 \
        else f"{x:.3f}" if x >= 1 else f"{x:.4g}"


def _ms(c: Change, sep: str = " ") -> str:
    return f"{_one_ms(c.base)}→{_one_ms(c.new)}{_pct(c.change, sep)}"


def _p(p: float | None) -> str:
    return "-" if p is None else "<0.001" if p < 0.001 else f"{p:.2g}"


def _verdict(pair: Pair) -> str:
    if pair.regressions:
        return "REGRESSION: " + "; ".join(pair.regressions)
    if pair.improvements:
        return "better: " + "; ".join(pair.improvements)
    return "ok" if pair.latency_gated else "ok (machine changed)"


def _short_verdict(pair: Pair) -> str:
    """One word for the table: REGRESSION, better or ok, marked when latency is not gated."""
    word = _verdict(pair).partition(":")[0].removesuffix(" (machine changed)")
    return word if pair.latency_gated else f"{word} (machine)"


def cells(pair: Pair, short: bool = False) -> list[str]:
    """The row of one pair, as text. ``short`` (the terminal table): one word in the verdict
    cell and each change on its own line under the values."""
    sep = "\n" if short else " "
    comp = pair.compiles
    compiles = f"{_v(comp.base, 0)}→{_v(comp.new, 0)}"
    # (the model cell names a training run's mode: one file may hold both modes of a model)
    return [row_name(pair.model, None, pair.mode), pair.strategy or "-", _measure(pair.speedup, 2, sep),
            _ms(pair.latency_ms, sep), _p(pair.latency_ms.p_value), compiles,
            _measure(pair.compile_s, 1, sep), _measure(pair.first_result_s, 2, sep),
            _short_verdict(pair) if short else _verdict(pair)]


def headline(c: Comparison) -> str:
    """One line: how many pairs, regressions and recompiles, under which thresholds."""
    return (f"{counted(len(c.pairs), 'pair')} compared, "
            f"{counted(len(c.regressions), 'regression')}, {len(c.recompiled)} with more compiles "
            f"(threshold {c.threshold * 100:g}%, alpha {c.alpha:g})")


def _footer(c: Comparison) -> list[str]:
    lines = []
    if c.only_base:
        lines.append("only in base (not compared"
                     + (", trips --fail-on" if c.missing else "") + "): " + ", ".join(c.only_base))
    if c.only_new:
        lines.append("only in new: " + ", ".join(c.only_new))
    lines += c.notes
    for p in c.pairs:  # a change driven by one variation, also when it is not significant
        if p.driven and not any(p.driven in x for x in p.regressions + p.improvements):
            lines.append(f"{p.label}: compiled latency {_pct(p.latency_ms.change, '')}"
                         f"{p.driven}")
    by_note: dict[str, list[str]] = {}
    for p in c.pairs:
        for note in p.notes:
            by_note.setdefault(note, []).append(p.label)
    for note, labels in by_note.items():  # one line per note, not one per pair
        who = "every pair" if len(labels) == len(c.pairs) > 1 else ", ".join(labels)
        lines.append(f"{who}: {note}")
    return lines


def _table(c: Comparison) -> Table:
    """One row per pair, each cell on one line, the change on a second line under the values."""
    t = Table(title=f"{c.base.path} → {c.new.path}", title_justify="left", box=box.SIMPLE_HEAD)
    for col in COLUMNS:
        # no_wrap everywhere: a number or a header is never cut; too wide -> the vertical view
        t.add_column(col, justify="left" if col in ("model", "strategy", "verdict") else "right",
                     no_wrap=True)
    for pair in c.pairs:
        t.add_row(*[Text(x) for x in cells(pair, short=True)],
                  style="red" if pair.regressions else None)
    return t


def _vertical(c: Comparison, out: Console) -> None:
    """One block per pair, one measure per line (what a terminal narrower than the table gets,
    as ``git log --stat`` and pytest's summary do): nothing is ever cut or folded."""
    out.print(Text(f"{c.base.path} → {c.new.path}"), soft_wrap=True)
    names = ("speedup", "compiled ms", "compiles", "compile s", "first result s")
    width = max(len(n) for n in names)
    for pair in c.pairs:
        out.print()
        out.print(Text(f"{pair.label}  {_short_verdict(pair)}",
                       style="red" if pair.regressions else ""))
        rows = [(pair.speedup, 2, pair.speedup.p_value), (pair.latency_ms, None,
                                                          pair.latency_ms.p_value),
                (pair.compiles, 0, None), (pair.compile_s, 1, None),
                (pair.first_result_s, 2, None)]
        for name, (change, digits, p) in zip(names, rows, strict=True):
            if digits is None:
                values = f"{_one_ms(change.base)} → {_one_ms(change.new)}"
            else:
                values = f"{_v(change.base, digits)} → {_v(change.new, digits)}"
            pct = "" if digits == 0 else _pct(change.change, "")
            tail = "" if p is None else f"  p{'' if _p(p).startswith('<') else '='}{_p(p)}"
            out.print(Text(f"  {name:<{width}}  {values:>16}  {pct:>8}{tail}".rstrip()))


def print_table(c: Comparison, to_stderr: bool = False) -> None:
    """The comparison on stdout (stderr when stdout carries JSON): a table when it fits the
    terminal, else one block per pair; then the headline, the verdicts and the notes."""
    from dyncli.output import stderr_console

    out = stderr_console() if to_stderr else stdout_console()
    if c.machine.said:  # first: every latency below is read in its light
        out.print(Text(c.machine.said, style="yellow"), soft_wrap=True)
        out.print()
    table = _table(c)
    natural = out.measure(table, options=out.options.update_width(10_000)).maximum
    if natural <= out.width:
        out.print(table)
    else:
        _vertical(c, out)
        out.print()
    # text lines wrap between words on a terminal and are whole in a pipe or a file
    out.print(headline(c), markup=False, soft_wrap=True)
    for pair in c.pairs:
        if pair.regressions or pair.improvements:
            out.print(f"{pair.label}: {_verdict(pair)}", markup=False, soft_wrap=True)
    for line in _footer(c):
        out.print(line, markup=False, soft_wrap=True)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(c: Comparison) -> str:
    """GitHub-flavoured markdown for a PR comment: headline, regressions first, then the rest."""
    status = "❌" if c.regressions or c.missing else "✅"
    lines = [f"### dyncli compare {status}", "",
             f"**{headline(c)}**", "",
             f"base: `{c.base.path}` ({c.base.kind}, {c.base.device or '?'}, "
             f"torch {c.base.torch or '?'}) · new: `{c.new.path}` ({c.new.kind}, "
             f"{c.new.device or '?'}, torch {c.new.torch or '?'})", "",
             *([f"⚠️ **{c.machine.said}**", ""] if c.machine.said else []),
             "| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" if i in (0, 1, 8) else "---:" for i in range(len(COLUMNS))) + "|"]
    ordered = sorted(c.pairs, key=lambda p: not p.regressions)
    for pair in ordered:
        row = [_md_escape(x) for x in cells(pair)]
        if pair.regressions:
            row[-1] = f"**{row[-1]}**"
        lines.append("| " + " | ".join(row) + " |")
    footer = _footer(c)
    if footer:
        lines.append("")
        lines += [f"- {_md_escape(x)}" for x in footer]
    lines += ["", "<sub>latency: geomean over matched shapes of median new/base; p: two-sided "
              "Mann-Whitney U on the raw samples (see dyncli docs/compare.md)</sub>", ""]
    return "\n".join(lines)


def write_output(c: Comparison, fmt: str, json_path: str | None) -> None:
    """Write ``--format`` to stdout and ``--json`` to its file."""
    if fmt == "markdown":
        import sys

        sys.stdout.write(visible(to_markdown(c), keep_layout=True))
        sys.stdout.flush()
    elif fmt == "json":
        write_json("-", c.to_dict())
    else:
        print_table(c, to_stderr=json_path == "-")
    if json_path and not (json_path == "-" and fmt == "json"):
        write_json(json_path, c.to_dict())


def write_plot(c: Comparison, path: str | Path) -> None:
    """PNG: per pair, the change of compiled latency and of speedup, regressions in red."""
    from dyncli.install import pip_extra

    try:
        import matplotlib
    except ImportError:
        raise UsageError("--plot needs matplotlib", hint=pip_extra("compare")) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = c.pairs
    labels = [p.label for p in pairs]
    lat = [(p.latency_ms.change or 0.0) * 100 for p in pairs]
    spd = [(p.speedup.change or 0.0) * 100 for p in pairs]
    height = max(3.0, 0.45 * len(pairs) + 1.5)
    fig, ax = plt.subplots(figsize=(9, height), dpi=100)
    ys = list(range(len(pairs)))
    red = "#d62728"
    ax.barh([y - 0.2 for y in ys], lat, height=0.4,
            color=[red if p.regressions else "#1f77b4" for p in pairs])
    ax.barh([y + 0.2 for y in ys], spd, height=0.4, alpha=0.6,
            color=[red if p.regressions else "#2ca02c" for p in pairs])
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color="#1f77b4", label="compiled latency change % (lower is better)"),
                       Patch(color="#2ca02c", alpha=0.6,
                             label="speedup change % (higher is better)"),
                       Patch(color=red, label="a regression (both bars)")],
              fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3,
              frameon=False)
    for y, p in zip(ys, pairs, strict=True):
        if p.recompiles:
            ax.annotate(f"compiles {p.compiles.base:.0f}→{p.compiles.new:.0f}",
                        (0, y), xytext=(4, -3), textcoords="offset points", fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    for x in (c.threshold * 100, -c.threshold * 100):
        ax.axvline(x, color="gray", linestyle=":", linewidth=0.8)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("change new vs base (%); red: regression")
    ax.set_title(f"{Path(c.base.path).name} → {Path(c.new.path).name}: {headline(c)}",
                 fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    try:
        with atomic_target(path) as tmp:
            fig.savefig(tmp, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)

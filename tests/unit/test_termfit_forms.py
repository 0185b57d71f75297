"""The forms a table too wide takes (issue #34): its headers' words stacked, parts that repeat
the first column (strategies side by side), a block per row; each with every cell whole."""

from __future__ import annotations

import io
import re

from rich import box

from dyncli import termfit

STRATEGIES = ["static", "automatic", "mark-dynamic", "dynamic", "sources", "pad", "unbacked",
              "eager-then-compile", "pgo"]


def _render(table: object, width: int) -> list[str]:
    buf = io.StringIO()
    termfit.FitConsole(file=buf, width=width, color_system=None).print(table)
    return buf.getvalue().splitlines()


def _words(lines: list[str]) -> set[str]:
    return set(re.findall(r"[\w.%*-]+", "\n".join(lines)))


def _stream() -> termfit.FitTable:
    t = termfit.FitTable(title="request stream", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("strategy", "total s", "first s", "compiles (s)", "ms/req", "beats eager",
                "pad waste"):
        t.add_column(col, no_wrap=True)
    for s in STRATEGIES:
        t.add_row(s, "7.16", "0.90", "7 (7.1)", "0.276", "1053 req*", "4%")
    return t


def _side_by_side() -> termfit.FitTable:
    t = termfit.FitTable(title="strategies side by side", title_justify="left",
                         box=box.SIMPLE_HEAD, split_columns=True)
    t.add_column("", no_wrap=True)
    for s in STRATEGIES:
        t.add_column(s, justify="right", no_wrap=True)
    for row in ("status", "speedup median", "compile wall s"):
        t.add_row(row, *[f"{row[:4]}-{s[:3]}" for s in STRATEGIES])
    return t


def test_a_table_that_fits_is_left_alone() -> None:
    lines = _render(_stream(), 200)
    assert any("compiles (s)" in ln for ln in lines)


def test_stacked_headers_when_that_fits() -> None:
    wide = _render(_stream(), 200)
    lines = _render(_stream(), 80)
    assert max(map(len, lines)) <= 80
    assert not any("compiles (s)" in ln for ln in lines)  # stacked: "compiles" over "(s)"
    assert any("compiles" in ln for ln in lines) and any("waste" in ln for ln in lines)
    assert _words(wide) <= _words(lines)  # every word still there
    assert sum("1053 req*" in ln for ln in lines) == len(STRATEGIES)  # one row each


def test_side_by_side_splits_into_parts_repeating_the_labels() -> None:
    wide = _render(_side_by_side(), 300)
    lines = _render(_side_by_side(), 80)
    assert max(map(len, lines)) <= 80
    assert lines[0].startswith("strategies side by side")
    assert sum(ln.lstrip().startswith("speedup median") for ln in lines) >= 2  # in every part
    assert _words(wide) <= _words(lines)
    for s in STRATEGIES:  # each strategy's column once, whole
        assert sum(f"stat-{s[:3]}" in ln for ln in lines) == 1, s


def test_blocks_when_no_other_form_fits() -> None:
    lines = _render(_stream(), 30)
    assert max(len(ln.rstrip()) for ln in lines) <= 30
    assert any(ln.strip().startswith("beats eager") for ln in lines)  # a name  value line
    assert any(ln.split() == ["pad", "waste", "4%"] for ln in lines)

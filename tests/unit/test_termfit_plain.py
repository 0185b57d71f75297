"""A table too wide for the terminal prints one block per row; without colour (a file, a
pipe) the blocks' lines are made by ``termfit._plain_block`` instead of a rich grid per row,
and a table that fits is measured once per column instead of three times. Both must print
what rich alone prints: checked here on awkward cells (wide characters, long words,
newlines, blanks, empty cells, trailing spaces) at many widths.
"""

from __future__ import annotations

import io
import random

import pytest
from rich.table import Table
from rich.text import Text

from dyncli import termfit
from dyncli.output import add_text_row, section_table

_PIECES = ["a", "word ", "L['x'].size()[0] ", "/very/long/path/to/some/file.py:123 ", "\n",
           "漢字", "🙂", "  ", "x" * 70, "—", "é", "", "[s77, 8] ", "\n\n", "end   "]


def _render(table: object, width: int) -> str:
    buf = io.StringIO()
    console = termfit.FitConsole(file=buf, width=width, highlight=False, markup=False,
                                 color_system=None)
    console.print(table)
    return buf.getvalue()


def _table(rng: random.Random) -> object:
    columns = rng.sample(["frame", "function", "defined at", "compiles", "dynamic inputs",
                          "x", "a much longer column name", "列"], rng.randint(1, 6))
    table = section_table("Title", columns, ranks=rng.random() < 0.3)
    for _ in range(rng.randint(0, 4)):
        cells = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 12)))
                 for _ in table.columns]
        add_text_row(table, *cells)
    return table


@pytest.mark.parametrize("seed", range(150))
def test_plain_blocks_equal_the_rich_grid(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    table = _table(rng)
    width = rng.choice([20, 31, 50, 80, 120, 200, 400])
    fast = _render(table, width)
    monkeypatch.setattr(termfit, "_plain_block", lambda *a: None)
    monkeypatch.setattr(termfit.FitTable, "surely_wider", lambda self, w: False)
    monkeypatch.setattr(termfit.FitTable, "_measure_column", Table._measure_column)
    assert fast == _render(table, width)


@pytest.mark.parametrize("seed", range(100))
def test_surely_wider_is_a_lower_bound(seed: int) -> None:
    rng = random.Random(seed)
    table = _table(rng)
    console = termfit.FitConsole(file=io.StringIO(), width=80, color_system=None)
    natural = table.natural_width(console, console.options)  # type: ignore[attr-defined]
    for width in (10, 40, 80, 120, 300):
        if table.surely_wider(width):  # type: ignore[attr-defined]
            assert natural > width


def test_plain_block_used_without_colour_only() -> None:
    table = section_table("T", ["name", "value"])
    add_text_row(table, "x" * 200, "y")
    calls = []
    real = termfit._plain_block

    def spy(*a: object) -> object:
        calls.append(1)
        return real(*a)  # type: ignore[arg-type]

    termfit._plain_block, saved = spy, termfit._plain_block
    try:
        _render(table, 80)
        assert calls
        calls.clear()
        buf = io.StringIO()
        termfit.FitConsole(file=buf, width=80, color_system="truecolor",
                           force_terminal=True).print(table)
        assert not calls and "\x1b[" in buf.getvalue()
    finally:
        termfit._plain_block = saved


def test_text_cells_kept() -> None:
    """A cell given as rich Text (not a str) is laid out the same."""
    table = section_table("T", ["name", "value"])
    table.add_row(Text("x" * 150), Text("a\nb"))
    fast = _render(table, 60)
    assert "  name   " + "x" * 51 in fast

"""Fitting the terminal: tables that turn vertical when too wide, text wrapped between words.

A rich table narrower than its content folds each cell character by character: headers
become "spe/edu/p", numbers "0.7/3→0/.75", paths "user_size_spe/cialization". Where a table
does not fit, :class:`FitTable` prints one block per row instead (a ``name  value`` line per
column, values wrapped between words), as ``git log --stat`` or pytest's summary read in a
narrow window. :class:`FitConsole` wraps free text between words on a terminal (a terminal
itself breaks a long line at any character); in a file or a pipe lines are left whole.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

# Past this width a table's natural width is not measured further.
_WIDE = 10_000


class FitTable(Table):
    """A :class:`rich.table.Table` that renders one block per row when it does not fit."""

    def natural_width(self, console: Console, options: ConsoleOptions) -> int:
        """The width the table takes with no cell wrapped."""
        return self.__rich_measure__(console, options.update_width(_WIDE)).maximum

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.columns or self.natural_width(console, options) <= options.max_width:
            yield from super().__rich_console__(console, options)
            return
        yield from self._vertical(options.max_width)

    def _vertical(self, width: int) -> RenderResult:
        if self.title:
            yield Text(str(self.title), style="bold" if isinstance(self.title, str) else "")
        names = [str(c.header) for c in self.columns]
        cells = [list(c.cells) for c in self.columns]
        rows = len(cells[0]) if cells else 0
        for i in range(rows):
            grid = Table.grid(padding=(0, 2), pad_edge=False)
            grid.add_column(no_wrap=True, style="dim")
            grid.add_column(overflow="fold", max_width=max(width - 4 - max(map(len, names)), 20))
            for name, column in zip(names, cells, strict=True):
                value = column[i]
                grid.add_row(name, value if isinstance(value, Text) else Text(str(value)))
            yield Text("")
            yield _Indented(grid, 2)


class _Indented:
    def __init__(self, renderable: Any, indent: int) -> None:
        self.renderable, self.indent = renderable, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.padding import Padding

        yield Padding(self.renderable, (0, 0, 0, self.indent))


class FitConsole(Console):
    """A console that, on a terminal, wraps printed text between words even when the caller
    asked for ``soft_wrap`` (which leaves wrapping to the terminal: mid-word)."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
        wanted = self.soft_wrap if soft_wrap is None else soft_wrap  # stderr's default is soft
        if wanted and self.is_terminal:
            soft_wrap = False
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)

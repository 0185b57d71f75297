"""Fitting the terminal: tables that turn vertical when too wide, text wrapped between words.

A rich table narrower than its content folds each cell character by character: headers
become "spe/edu/p", numbers "0.7/3→0/.75", paths "user_size_spe/cialization", or cuts them
to "a…", or leaves a column out. :class:`FitTable` never does: a table that does not fit is
printed, in this order of preference, with its headers' words stacked (``eager ms`` over two
lines), split into parts that repeat its first column (a table with one column per strategy,
as pandas prints a wide frame), or as one block per row (a ``name  value`` line per column,
values wrapped between words, a word too long for a line broken after a path separator), as
``git log --stat`` or pytest's summary read in a narrow window. Every cell is printed whole in
each form. :class:`FitConsole` wraps free text between
words on a terminal (a terminal itself breaks a long line at any character); in a file or a
pipe lines are left whole.
"""

from __future__ import annotations

import copy
import errno
import re
from dataclasses import replace
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

# Past this width a table's natural width is not measured further.
_WIDE = 10_000


class FitTable(Table):
    """A :class:`rich.table.Table` that never cuts, folds or drops a cell to fit the width.

    ``split_columns``: a table whose first column labels its rows and whose other columns are
    alike (strategies side by side) may be printed as several tables, each with the first
    column and as many of the others as fit, before it turns to one block per row.
    """

    def __init__(self, *args: Any, split_columns: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.split_columns = split_columns

    def _measure_column(self, console: Console, options: ConsoleOptions,
                        column: Column) -> Measurement:
        """rich's column measurement, made once per column (rich measures every cell of a
        column three times to print a table that fits: twice for :meth:`natural_width`,
        once for the layout, each time at another width). A measurement made at ``_WIDE``
        whose maximum is under both ``_WIDE`` and the width asked for is what rich makes at
        that width too: its clamps to the width do not bind. Else rich measures again."""
        key = (id(console), column._index, len(column._cells))
        cache: dict[tuple[int, int, int], Measurement] = self.__dict__.setdefault("_measured", {})
        wide = cache.get(key)
        if wide is None:
            wide = cache[key] = super()._measure_column(console, options.update_width(_WIDE),
                                                        column)
        if options.max_width >= 1 and wide.maximum <= options.max_width and wide.maximum < _WIDE:
            return wide
        return super()._measure_column(console, options, column)

    def natural_width(self, console: Console, options: ConsoleOptions) -> int:
        """The width the table takes with no cell wrapped."""
        return self.__rich_measure__(console, options.update_width(_WIDE)).maximum

    def surely_wider(self, width: int) -> bool:
        """Whether the cells alone, each column as wide as its widest line, are wider than
        ``width``: a lower bound of :meth:`natural_width` (which adds padding and borders),
        found without rich's measuring (twice per column, every cell)."""
        total = 0
        for column in self.columns:
            widest = 0
            for cell in column._cells:
                if isinstance(cell, Text):  # others count 0: still a lower bound
                    lines = cell.plain.splitlines()  # as Text.__rich_measure__ cuts them
                    widest = max(widest, max(map(cell_len, lines)) if lines else 0)
            total += widest
            if total > width:
                return True
        return False

    def fits(self, console: Console, options: ConsoleOptions, width: int) -> bool:
        """Whether the table's natural width is at most ``width``."""
        return not self.surely_wider(width) and self.natural_width(console, options) <= width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if not self.columns or self.fits(console, options, width):
            yield from super().__rich_console__(console, options)
            return
        stacked = self._stacked()
        if stacked is not None and stacked.fits(console, options, width):
            yield from Table.__rich_console__(stacked, console, options)
            return
        parts = self._parts(console, options, width) if self.split_columns else None
        if parts:
            for i, part in enumerate(parts):
                if i:
                    yield Text("")
                yield from Table.__rich_console__(part, console, options)
            return
        yield from self._vertical(width, console)

    def _variant(self, columns: list[Column], title: Any, stack: bool = False) -> FitTable:
        """A copy with these columns (their cells shared), headers' words stacked if asked."""
        t = copy.copy(self)
        t.__dict__.pop("_measured", None)  # measured per column index: not the copy's
        t.columns = [replace(c, _index=i, header=_stack(c.header) if stack else c.header)
                     for i, c in enumerate(columns)]
        t.title = title
        return t

    def _stacked(self) -> FitTable | None:
        """The table with each header's words on lines of their own; None when no header has
        two words."""
        if not any(isinstance(c.header, str) and " " in c.header.strip() for c in self.columns):
            return None
        return self._variant(list(self.columns), self.title, stack=True)

    def _parts(self, console: Console, options: ConsoleOptions,
               width: int) -> list[FitTable] | None:
        """The table as parts that fit, each with the first column and the next columns that
        fit beside it (headers stacked); None when one column alone is too wide."""
        first, rest = self.columns[0], self.columns[1:]
        parts: list[FitTable] = []
        group: list[Column] = []
        for column in rest:
            trial = self._variant([first, *group, column], None, stack=True)
            if trial.fits(console, options, width):
                group.append(column)
                continue
            if not group:
                return None
            parts.append(self._variant([first, *group], None, stack=True))
            group = [column]
            if not self._variant([first, column], None, stack=True).fits(console, options,
                                                                          width):
                return None
        if group:
            parts.append(self._variant([first, *group], None, stack=True))
        if len(parts) < 2:
            return None
        parts[0].title = self.title
        return parts

    def _vertical(self, width: int, console: Console | None = None) -> RenderResult:
        if self.title:
            yield Text(str(self.title), style="bold" if isinstance(self.title, str) else "")
        names = [str(c.header) for c in self.columns]
        cells = [list(c.cells) for c in self.columns]
        rows = len(cells[0]) if cells else 0
        value_width = max(width - 4 - max(map(len, names)), 20)
        # Without colour (a file, a pipe) a block's lines are made here, as the grid below
        # lays them out: a tenth of rich's cost for the grid (the most of diagnose's view)
        plain = console is not None and console.color_system is None and not console.record
        for i in range(rows):
            values = [fold_paths(v if isinstance(v, Text) else Text(str(v)), value_width)
                      for v in (c[i] for c in cells)]
            yield Text("")
            block = _plain_block(console, names, values, width, value_width) if plain else None
            if block is not None:
                yield from block
                continue
            grid = Table.grid(padding=(0, 2), pad_edge=False)
            grid.add_column(no_wrap=True, style="dim")
            grid.add_column(overflow="fold", max_width=value_width)
            for name, value in zip(names, values, strict=True):
                grid.add_row(name, value)
            yield _Indented(grid, 2)


def _plain_block(console: Any, names: list[str], values: list[Text], width: int,
                 value_width: int) -> list[Segment] | None:
    """The lines ``_Indented(grid, 2)`` renders for one row, made directly (styles are not
    shown), or None where the grid would do more than this follows (a column squeezed).

    The grid's layout, as rich (15.x, ``Table._calculate_column_widths`` and ``_render``,
    ``Padding``) makes it: the name column as wide as the widest name plus the 2-space
    padding, the value column as wide as the widest value line (at most ``value_width``),
    each value wrapped to it (``Text.wrap``: left, folded), names at the top of their rows,
    every line indented by 2 and padded with spaces to ``width``.
    ``tests/cli/test_terminal.py`` compares both ways on awkward cells.
    """
    inner = width - 2  # inside the indent
    if inner - 2 < 1:
        return None
    names_w = max(min(min(cell_len(n), inner - 2) + 2, inner) for n in names)
    longest = 0
    for value in values:
        lines = value.plain.splitlines()
        line_w = min(max(map(cell_len, lines)), inner) if lines else 0
        longest = max(longest, line_w)
    values_w = min(longest, value_width) or 1
    if names_w + values_w > inner or any(cell_len(n) > names_w - 2 for n in names):
        return None
    out: list[Segment] = []
    blank_name = " " * names_w
    for name, value in zip(names, values, strict=True):
        wrapped = value.wrap(console, values_w, justify="left", overflow="fold",
                             tab_size=console.tab_size or 8, no_wrap=False)
        head = "  " + name + " " * (names_w - cell_len(name))
        for line in wrapped or [Text("")]:
            text = head + line.plain
            out.append(Segment(text + " " * (width - cell_len(text)) + "\n"))
            head = "  " + blank_name
    return out


# Where a word too long for its line breaks (a path, a module, a URL), the first kind
# preferred: after a directory's separator, else after a dot or a colon
_SEPARATORS = ("/\\", ".:")
_WORD_RE = re.compile(r"\S+")


def _path_breaks(word: str, width: int) -> list[int]:
    """Offsets in ``word`` (wider than ``width`` cells) after which its lines end: each line
    as long as fits, ending after the last separator in it (``_SEPARATORS``, in their order)
    where that keeps at least a quarter of the width on the line, else at the width (as
    rich folds). Linear in the word."""
    breaks: list[int] = []
    start, left = 0, cell_len(word)
    narrow = word.isascii()  # (one cell a character: no counting)
    while left > width:
        if narrow:
            end = start + width
        else:
            end, cells = start, 0
            while end < len(word) and cells + cell_len(word[end]) <= width:
                cells += cell_len(word[end])
                end += 1
            end = max(end, start + 1)  # (a character wider than the line: alone on it)
        cut = end
        for kind in _SEPARATORS:
            at = max(word.rfind(c, start, end) for c in kind)
            if at >= 0 and (at + 1 - start) * 4 >= width:
                cut = at + 1
                break
        left -= cut - start if narrow else cell_len(word[start:cut])
        breaks.append(cut)
        start = cut
    return breaks


def fold_paths(value: Text, width: int) -> Text:
    """``value`` with each word wider than ``width`` on lines of its own, broken after path
    separators (``…/wanvideo/`` over ``modules/model.py:1300``, not ``…/wanvideo/mo`` over
    ``dules/…``); styles kept. Other text is left to rich's wrapping between words."""
    plain = value.plain
    if width < 1 or cell_len(plain) <= width:
        return value
    offsets: list[int] = []
    for m in _WORD_RE.finditer(plain):
        word = m.group()
        if cell_len(word) <= width:
            continue
        line_start = plain.rfind("\n", 0, m.start()) + 1
        if plain[line_start:m.start()].strip():
            offsets.append(m.start())  # the word begins a line, as rich puts it
        offsets.extend(m.start() + b for b in _path_breaks(word, width))
    if not offsets:
        return value
    pieces = value.divide(offsets)
    for piece in pieces:
        piece.rstrip()
    return Text("\n").join(pieces)


def _stack(header: Any) -> Any:
    """``"eager ms"`` -> ``"eager\\nms"``; a header that is not plain text is kept."""
    return "\n".join(header.split()) if isinstance(header, str) else header


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
            # a path wider than the line breaks after a separator, not mid-name
            objects = tuple(fold_paths(Text(o) if isinstance(o, str) else o, self.width)
                            if isinstance(o, (str, Text)) else o for o in objects)
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)

    def on_broken_pipe(self) -> None:
        """The reader went away (``dyncli … | head``): rich's own handling ends the process
        with status 1, which dyncli means for a tripped gate (``--fail-on``); raised as the
        ``BrokenPipeError`` it is, ``dyncli.cli`` ends quietly with 2 (docs/reliability.md)."""
        self.quiet = True  # nothing more to this stream
        raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")


class TrimmedLines:
    """A file's or a pipe's stream whose lines lose their trailing spaces: rich pads each line
    of a table (and of a row's block) to the width, which a terminal hides and a file keeps
    (120 columns of spaces after a 20-column line: noise in an editor, in a diff, to grep)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if " \n" in text:  # (linear: no regex over a run of spaces)
            self.stream.write("\n".join(line.rstrip(" ") for line in text.split("\n")))
        else:
            self.stream.write(text)
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding: the stream's
        return getattr(self.stream, name)

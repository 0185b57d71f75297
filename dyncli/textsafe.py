"""Text from inputs, made safe for a human view: control characters shown, never obeyed.

A file name, a function or source name from a PGO file, a line of a log, a model name in a
bench JSON, a Redis key: each can hold ``ESC ] 0 ; … BEL`` (sets the terminal's title),
``ESC [ 2 J`` (clears the screen), a newline that forges a line of output, or a bidi override
that shows text in another order than it is. rich strips a few control characters, not ESC.

:func:`visible` escapes them the way ``git`` and ``ls -b`` show such names: ``\\n``, ``\\t``,
``\\r``, ``\\x1b``, ``\\x9b``, ``\\u202e``. It is applied where input text meets a human view
(``Error:`` and ``Warning:`` lines, table cells, free-text lines) and, as the last line of
defence, to every text segment a dyncli console prints (:class:`SafeRenderHook`; there the
layout's own newlines and tabs are kept). :func:`markup_safe` adds rich-markup escaping for a
string that goes into markup. JSON, CSV and HTML are not touched here: their writers quote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderHook, RenderResult

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
# C0, DEL, C1; bidi and line-separator format characters; lone surrogates (not printable, and
# a UnicodeEncodeError on a UTF-8 terminal).
_RANGES = ((0x00, 0x20), (0x7F, 0xA0), (0x200E, 0x2010), (0x2028, 0x202F), (0x2066, 0x206A),
           (0xD800, 0xE000))


def _escape(code: int) -> str:
    if code in _NAMED:
        return _NAMED[code]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _char_class(ranges: Iterable[tuple[int, int]]) -> re.Pattern[str]:
    return re.compile("[" + "".join(f"\\u{lo:04x}-\\u{hi - 1:04x}" for lo, hi in ranges) + "]")


class _Tables(dict[bool, dict[int, str]]):
    """``str.translate`` tables, built on first use (2,126 entries: a millisecond of every
    command's start-up otherwise): ``_TABLE[False]`` escapes all, ``[True]`` keeps the layout."""

    def __missing__(self, keep_layout: bool) -> dict[int, str]:
        table = {code: _escape(code) for lo, hi in _RANGES for code in range(lo, hi)}
        self[False] = table
        self[True] = {code: text for code, text in table.items() if code not in (0x09, 0x0A)}
        return self[keep_layout]


_TABLE = _Tables()


class _Lazy:
    """A character class compiled on first use: its ranges up to U+E000 took 1-4 ms of every
    command's start-up to compile (more on a busy machine), and text without a control,
    format or surrogate character, the most of it, never needs it (``str.isprintable``)."""

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        self.ranges = ranges
        self.pattern: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        if text.isprintable():  # every character escaped here is one isprintable refuses
            return None
        if self.pattern is None:
            self.pattern = _char_class(self.ranges)
        return self.pattern.search(text)


UNSAFE = _Lazy(_RANGES)
_UNSAFE_LAYOUT = _Lazy(((0x00, 0x09), (0x0B, 0x20), *_RANGES[1:]))


def visible(text: object, *, keep_layout: bool = False) -> str:
    """``str(text)`` with every control character escaped visibly (``\\x1b``, ``\\n``).

    ``keep_layout`` keeps newlines and tabs: for a table cell whose lines a renderer joined
    itself (an input's newline then breaks a line inside the cell, never out of it).
    """
    s = text if type(text) is str else str(text)
    if keep_layout:
        return s.translate(_TABLE[True]) if _UNSAFE_LAYOUT.search(s) else s
    return s.translate(_TABLE[False]) if UNSAFE.search(s) else s


def markup_safe(text: object) -> str:
    """:func:`visible` text that can also go inside rich markup: ``[bold]`` stays literal."""
    from rich.markup import escape

    return escape(visible(text))


def is_safe(text: str) -> bool:
    """Whether ``text`` has no control, bidi or surrogate character (nothing to escape)."""
    return UNSAFE.search(text) is None


class _Sanitized:
    """A renderable whose text segments are passed through :func:`visible` (layout kept)."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for segment in console.render(self.renderable, options):
            text = segment.text
            if segment.control or not _UNSAFE_LAYOUT.search(text):
                yield segment
            else:
                yield Segment(text.translate(_TABLE[True]), segment.style)


class SafeRenderHook:
    """A rich render hook: whatever a console prints, its text reaches the terminal escaped.

    rich's own styles and cursor moves are control *segments* and pass; only text is escaped.
    """

    def process_renderables(self, renderables: list[Any]) -> list[Any]:
        return [_Sanitized(r) for r in renderables]


def safe_console(console: Console) -> Console:
    """``console`` with :class:`SafeRenderHook` pushed: nothing it prints obeys a control."""
    console.push_render_hook(cast("RenderHook", SafeRenderHook()))
    return console

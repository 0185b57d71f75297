"""The one output layer: the :class:`Output` of a command, JSON envelopes and documents.

Data goes to stdout, progress and hints to stderr. Rich decides colour from the stream: when
stdout is not a terminal the output is plain text, with no colour and no spinners; with
``--json -`` the document owns stdout and the human view moves to stderr. Each feature's
renderer (``bench/render.py``, ``diagnose/render.py``, ``suggest/render.py``,
``compare/render.py``) turns that feature's result object into tables and prints them through
an :class:`Output`. Text that comes from an input (file names, log lines, model and PGO
names) becomes display text in one place, :func:`input_text`: never markup.
Atomic result files are :mod:`dyncli.files` (re-exported here).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from dyncli import __version__
from dyncli.errors import DyncliError, OutputError
from dyncli.files import (
    atomic_target,
    atomic_write_text,
    check_outputs,
    check_target,
    remove_pending,
    sweep_stale,
)
from dyncli.textsafe import safe_console, visible

if TYPE_CHECKING:  # rich is imported when a console is made: not at start-up
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

SCHEMA_VERSION = 1


# Width for files and pipes when COLUMNS is not set: there is no terminal to fit, and rich's
# default of 80 folds the tables' long cells (paths, guard expressions) for no reason.
PIPE_WIDTH = 120


def _console(file: Any, soft_wrap: bool) -> Console:
    from dyncli.termfit import FitConsole, TrimmedLines

    # markup off: a path such as x[/yellow].log is text, not a (broken) tag; and every text
    # segment printed passes through textsafe.visible (an ESC from an input is shown as \x1b).
    # FitConsole wraps between words on a terminal.
    console = FitConsole(file=file, highlight=False, soft_wrap=soft_wrap, markup=False)
    if not console.is_terminal:
        console.file = cast("IO[str]", TrimmedLines(file))
        if "COLUMNS" not in os.environ:
            console.width = PIPE_WIDTH
    return safe_console(console)


def stdout_console() -> Console:
    """Console for data. Created per call so that a redirected ``sys.stdout`` is honoured."""
    return _console(sys.stdout, soft_wrap=False)


def stderr_console() -> Console:
    """Console for progress, warnings and hints."""
    return _console(sys.stderr, soft_wrap=True)


def input_text(value: object, limit: int | None = None) -> Text:
    """Text that came from an input (a file name, a log line, a model or PGO name) for display.

    The one place such text becomes something to print: a rich ``Text`` (so ``[bold]`` or
    ``[s77, 8]`` stays as written, never markup), cut to ``limit`` characters with "…", tabs
    as spaces (rich expands a tab column by column).
    """
    from rich.text import Text

    text = str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    # control characters escaped (dyncli.textsafe); a renderer's own newlines are kept
    return Text(visible(text.replace("\t", " "), keep_layout=True))


class Output:
    """How one command speaks: its human view, its document, progress, warnings and errors.

    ``mode`` is ``rich`` (stdout is a terminal: colour), ``plain`` (a pipe or a file: no
    colour, no spinners) or ``json`` (``--json -`` or another document on stdout: the human
    view goes to stderr so stdout holds the document alone). Consoles are made when asked
    for, so a redirected ``sys.stdout`` (tests, pipes) is honoured.
    """

    def __init__(self, stdout_taken: bool = False) -> None:
        self.stdout_taken = stdout_taken

    @classmethod
    def for_targets(cls, *targets: str | Path | None) -> Output:
        """The output of a command whose files are ``targets``: ``-`` among them takes stdout."""
        return cls(stdout_taken=any(t is not None and str(t) == "-" for t in targets))

    @property
    def mode(self) -> str:
        """``json``, ``rich`` or ``plain`` (see the class)."""
        if self.stdout_taken:
            return "json"
        return "rich" if self.view.is_terminal else "plain"

    @property
    def view(self) -> Console:
        """The console of the human view: stdout, or stderr when a document takes stdout."""
        return stderr_console() if self.stdout_taken else stdout_console()

    def text(self, message: str | Text) -> None:
        """A line of the human view, printed as written (no markup): wrapped between words on
        a terminal, whole in a pipe or a file (the README's promise; tables keep the width)."""
        self.view.print(message, markup=False, highlight=False, soft_wrap=True)

    def table(self, table: Table) -> None:
        """A table of the human view."""
        self.view.print(table)

    @contextlib.contextmanager
    def user_code(self) -> Iterator[None]:
        """Around code that is the user's (a model's ``forward``, its build function): what it
        prints goes to stderr while a document takes stdout, so ``--json -`` stays one JSON
        document (a model printing in its forward made it unparseable)."""
        if not self.stdout_taken:
            yield
            return
        with contextlib.redirect_stdout(sys.stderr):
            yield

    def result(self, document: dict[str, Any], target: str | Path | None) -> None:
        """Write a JSON document to ``target`` (``-``: stdout, else a file written atomically)."""
        if target is not None:
            write_json(target, document)

    @staticmethod
    def info(message: str) -> None:
        """One progress line on stderr, as written (control characters escaped)."""
        stderr_console().print(visible(message, keep_layout=True), markup=False, highlight=False)

    @staticmethod
    def warn(message: str, console: Console | None = None) -> None:
        """One ``Warning:`` line on stderr; ``message`` is shown as written. ``console``: the
        one a live progress bar draws on, so the line goes above the bar, not into it."""
        from rich.text import Text

        line = Text("Warning:", style="yellow")
        line.append(" " + visible(message))
        (console or stderr_console()).print(line, highlight=False)

    @staticmethod
    def hint(message: str) -> None:
        """One ``Hint:`` line on stderr."""
        sys.stderr.write(f"Hint: {visible(message)}\n")
        sys.stderr.flush()

    @staticmethod
    def error(err: DyncliError) -> None:
        """``Error: …`` and ``Hint: …`` on stderr (plain text, as the last thing a run says);
        the traceback first when ``DYNCLI_DEBUG=1``."""
        if os.environ.get("DYNCLI_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exception(err, file=sys.stderr)
        sys.stderr.write(f"Error: {visible(err.message)}\n")
        if err.hint:
            sys.stderr.write(f"Hint: {visible(err.hint)}\n")
        sys.stderr.flush()


def warn(message: str) -> None:
    """One warning line on stderr, shown as written (:meth:`Output.warn`): no markup, control
    characters escaped. (It read rich markup before issue 22; no caller escapes for it now.)"""
    Output.warn(message)


def info(message: str) -> None:
    """One progress/info line on stderr (:meth:`Output.info`)."""
    Output.info(message)


def section_table(title: str, columns: list[str], ranks: bool = False) -> Table:
    """A left-titled table whose long cells fold; a leading ``rank`` column when ``ranks``."""
    from dyncli.termfit import FitTable

    table = FitTable(title=title, title_justify="left", show_lines=False, expand=False)
    if ranks:
        table.add_column("rank", justify="right")
    for col in columns:
        table.add_column(col, overflow="fold")
    return table


# A cell longer than this is cut in the terminal view (the JSON keeps the whole value): rich
# folds a cell character by character, and a 10 MB guard expression took 87 s to lay out.
MAX_CELL = 500


def cell_text(value: object, limit: int = MAX_CELL) -> str:
    """``str(value)`` cut to ``limit`` characters with "…", for a table cell."""
    return input_text(value, limit).plain


# A free-text line of the terminal view (a suggestion, its evidence) is cut past this.
MAX_TEXT = 2000


def line_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` for one terminal line: cut past ``limit`` characters, saying where the rest is."""
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters in --json)"
    return visible(text.replace("\t", " "))  # rich expands a tab to up to 8 columns, one by one


def add_text_row(table: Table, *cells: object) -> None:
    """Add cells as plain text: sizes such as ``[s77, 8]`` would otherwise be eaten as rich tags.

    Long cells are cut (see ``MAX_CELL``).
    """
    table.add_row(*(input_text(c, MAX_CELL) for c in cells))


def rank_cell(rank: int | None) -> str:
    """A row's rank as a table cell ("-": a row of no rank, beside ranked ones)."""
    return "-" if rank is None else str(rank)


def add_ranked_row(table: Table, ranks: bool, rank: int | None, *cells: object) -> None:
    """``add_text_row`` with the row's cell of section_table's ``rank`` column first, where the
    table has one (``ranks``, as section_table was given it)."""
    add_text_row(table, *([rank_cell(rank)] if ranks else []), *cells)


class Capped:
    """A view's sections cut at ``limit`` rows (``--limit``), each cut said under the section
    it cut (``(frames: showing 20 of 31; --json has all)``), never above its title or not
    at all."""

    def __init__(self, out: Console, limit: int) -> None:
        self.out, self.limit = out, limit
        self._said: list[str] = []

    def rows(self, rows: Sequence[Any], what: str) -> Sequence[Any]:
        """The first ``limit`` of ``rows``; the cut is said at the next :meth:`show`/:meth:`done`."""
        if len(rows) > self.limit:
            self._said.append(f"({what}: showing {self.limit} of {len(rows)}; --json has all)")
        return rows[:self.limit]

    def show(self, table: Table) -> None:
        """Print ``table``, then what was cut from it."""
        self.out.print(table)
        self.done()

    def done(self) -> None:
        """Say the cuts not yet said (after a section of lines, not a table)."""
        for line in self._said:
            self.out.print(line, markup=False, soft_wrap=True)
        self._said.clear()


def envelope(command: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Wrap a command's JSON payload with ``schema_version``, the dyncli version and command."""
    return {"schema_version": SCHEMA_VERSION, "dyncli": __version__, "command": command, **payload}


# Past this size a document is written compact: json's indenting encoder is pure Python and
# about 5x slower than the C one (1.2 s for a 10,000-frame suggest result, 0.1 s compact).
_INDENT_LIMIT = 1 << 20


def to_json_text(document: dict[str, Any]) -> str:
    """JSON text: NaN/inf written as null, Paths as strings; indented unless over 1 MB."""
    try:
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, default=_default)
    except ValueError:  # a NaN or infinity somewhere: replace them, then encode again
        document = _clean(document)
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, default=_default)
    ascii_only = False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: JSON escapes them (\udcff) with ensure_ascii
        ascii_only = True
        text = json.dumps(document, ensure_ascii=True, allow_nan=False, default=_default)
    if len(text) <= _INDENT_LIMIT:
        text = json.dumps(document, indent=2, ensure_ascii=ascii_only, allow_nan=False,
                          default=_default)
    return text + "\n"


def _default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(target: str | Path, document: dict[str, Any]) -> None:
    """Write a JSON document to ``target``: ``-`` is stdout, anything else an atomic file."""
    write_text(target, to_json_text(document))


class BackgroundWrite:
    """A JSON document built and written by a forked child while this process goes on (the
    terminal view of a big diagnosis): ``join()`` waits for it and raises its error here.

    Only for a file target on a system with ``fork``; elsewhere (stdout, Windows) the document
    is written at once, as ``write_json`` does. The child never returns into the caller: it
    ends with ``os._exit`` (no second flush of this process's buffers, no exit handlers)."""

    def __init__(self, target: str | Path, make: Callable[[], dict[str, Any]]) -> None:
        self.pid = 0
        self.read_fd = -1
        if str(target) == "-" or not hasattr(os, "fork"):
            write_json(target, make())
            return
        sys.stdout.flush()
        sys.stderr.flush()
        self.read_fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid:
            os.close(write_fd)
            return
        code, report = 0, b""
        try:  # the child
            os.close(self.read_fd)
            write_json(target, make())
        except DyncliError as err:
            code, report = 1, json.dumps([err.message, err.hint]).encode()
        except BaseException as err:  # reported by the parent, never raised in the child
            code, report = 1, json.dumps([f"{target}: {type(err).__name__}: {err}", None]).encode()
        finally:
            try:
                os.write(write_fd, report)
            finally:
                os._exit(code)

    def join(self) -> None:
        """Wait for the child; its failure is this process's ``OutputError``."""
        if not self.pid:
            return
        with os.fdopen(self.read_fd, "rb") as fh:
            report = fh.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if report or status:
            message, hint = json.loads(report) if report else [
                f"the JSON document was not written (writer exit status {status})", None]
            raise OutputError(str(message), hint=hint if isinstance(hint, str) else None)


def write_text(target: str | Path, text: str) -> None:
    """Write a document to ``target``: ``-`` is stdout, anything else an atomic file."""
    if str(target) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(Path(target), text)


__all__ = ["MAX_CELL", "MAX_TEXT", "SCHEMA_VERSION", "Capped", "Output", "add_text_row", "atomic_target",
           "atomic_write_text", "cell_text", "check_outputs", "check_target", "envelope", "info",
           "input_text", "line_text", "remove_pending", "section_table", "stderr_console",
           "stdout_console", "sweep_stale", "to_json_text", "warn", "write_json", "write_text"]

"""The one output layer: consoles, JSON envelopes and atomic result files.

Data goes to stdout, progress and hints to stderr. Rich decides colour from the stream: when
stdout is not a terminal the output is plain text, with no colour and no spinners.
Per-command renderers (``render.bench``, ``render.diagnose``, ``render.suggest``) turn a core
result object into tables; this module is what they share.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from dyncli import __version__
from dyncli.errors import InputError

if TYPE_CHECKING:
    from rich.table import Table

SCHEMA_VERSION = 1


# Width for files and pipes when COLUMNS is not set: there is no terminal to fit, and rich's
# default of 80 folds the tables' long cells (paths, guard expressions) for no reason.
PIPE_WIDTH = 120


def _console(file: Any, soft_wrap: bool) -> Console:
    console = Console(file=file, highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


def stdout_console() -> Console:
    """Console for data. Created per call so that a redirected ``sys.stdout`` is honoured."""
    return _console(sys.stdout, soft_wrap=False)


def stderr_console() -> Console:
    """Console for progress, warnings and hints."""
    return _console(sys.stderr, soft_wrap=True)


def warn(message: str) -> None:
    """One warning line on stderr."""
    stderr_console().print(f"[yellow]Warning:[/yellow] {message}", markup=True, highlight=False)


def info(message: str) -> None:
    """One progress/info line on stderr."""
    stderr_console().print(message, markup=False, highlight=False)


def section_table(title: str, columns: list[str], ranks: bool = False) -> Table:
    """A left-titled table whose long cells fold; a leading ``rank`` column when ``ranks``."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    if ranks:
        table.add_column("rank", justify="right")
    for col in columns:
        table.add_column(col, overflow="fold")
    return table


def add_text_row(table: Table, *cells: object) -> None:
    """Add cells as plain text: sizes such as ``[s77, 8]`` would otherwise be eaten as rich tags."""
    from rich.text import Text

    table.add_row(*(Text(str(c)) for c in cells))


def envelope(command: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Wrap a command's JSON payload with ``schema_version``, the dyncli version and command."""
    return {"schema_version": SCHEMA_VERSION, "dyncli": __version__, "command": command, **payload}


@contextmanager
def atomic_target(path: str | Path) -> Iterator[Path]:
    """A temp file beside ``path`` to write; renamed over ``path`` when the block succeeds.

    A reader never sees a half-written file, an interrupted write leaves the old one, and the
    result gets the mode an ordinary ``open()`` would give it (``mkstemp`` makes 0600).
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{path}: cannot write: directory {directory} does not exist")
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp = Path(name)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_target`), fsync'd."""
    with atomic_target(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


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
    if len(text) <= _INDENT_LIMIT:
        text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=_default)
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
    text = to_json_text(document)
    if str(target) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(Path(target), text)

"""The one way dyncli opens what it reads: a path, a ``.gz`` file or ``-`` (stdin), streaming.

Every feature reads through here (diagnose's text logs and traces, suggest's traces); the
parsers only ever see lines. Lines are bytes (decoding happens only for the records a parser
keeps, with invalid UTF-8 replaced), so CRLF endings, stray non-UTF-8 bytes and a truncated
last line all pass. gzip is recognised by its magic bytes, never by the file name. What is
clearly not text fails early with one line naming the input: a directory, an empty file, a
binary file (NUL bytes in its first line), a corrupt gzip stream.

Also here: finding the trace files of a TORCH_TRACE directory (one per rank) and the rank a
file name carries.
"""

from __future__ import annotations

import functools
import gzip
import io
import itertools
import re
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from dyncli.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 65536
# The most bytes read as one line. Longer lines (no real torch line is near it: the longest
# guard and graph lines of big models run to hundreds of KB) come in pieces of this size, so
# a 500 MB single-line file costs 8 MB at a time, not 1 GB; the pieces after the first are
# counted as unrecognized lines by the parsers (and shift the line numbers after them).
MAX_LINE = 8 << 20
_BUFFER = 1 << 20
STDIN = "-"
STDIN_NAME = "<stdin>"

# torch/_logging/_internal.py names each process's trace file like this, with the rank in it
# when torch.distributed is initialised: dedicated_log_torch_trace_rank_0_xxxx.log. Copies
# are often renamed (…_rank_0.log): the rank is ``rank_N`` followed by "_", "." or the end.
TRACE_GLOB = "dedicated_log_torch_trace*.log*"
_RANK_IN_NAME = re.compile(r"rank_(\d{1,9})(?=[_.]|$)")

_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


@dataclass
class Source:
    """One opened input: its display name, its lines, and what went wrong while reading.

    ``first`` is the first line (at most ``SNIFF_BYTES``), already read to tell what the input
    is; ``lines()`` yields it again, then the rest.
    """

    name: str
    stream: IO[bytes]
    first: bytes = b""
    compressed: bool = False
    warnings: list[str] = field(default_factory=list)
    counted: int = 0
    seekable: bool = True  # False for stdin, a pipe (``<(zcat …)``) or a device

    def lines(self) -> Iterator[bytes]:
        """The input's lines (bytes, line ends kept); a truncated gzip stops with a warning.

        For a plain file this is the file's own line iterator (C speed, no Python frame per
        line); only gzip streams, which can fail mid-way, and stdin, which has no ``tell()``,
        go through a generator.
        """
        first = self.first
        if first and not first.endswith(b"\n"):
            # the sniffed block ended mid-line (at most MAX_LINE in all)
            first += self.stream.readline(max(MAX_LINE - len(first), 1))
        head = [first] if first else []
        if not self.compressed and self.seekable:
            # readline(MAX_LINE) through iter(callable, sentinel): still no Python frame per line
            return itertools.chain(head, iter(functools.partial(self.stream.readline, MAX_LINE), b""))
        return self._guarded(head)

    def _guarded(self, head: list[bytes]) -> Iterator[bytes]:
        try:
            yield from head
            self.counted += sum(map(len, head))
            for line in iter(functools.partial(self.stream.readline, MAX_LINE), b""):
                self.counted += len(line)
                yield line
        except _GZIP_ERRORS as exc:
            self.warnings.append(f"{self.name}: compressed stream is truncated or corrupt "
                                 f"({exc}); analysed what was read before it")
        except OSError as exc:  # an I/O error mid-way (a file on a failing or network disk)
            self.warnings.append(f"{self.name}: read error ({exc.strerror or exc}); "
                                 "analysed what was read before it")

    def bytes_read(self) -> int:
        """Bytes read so far (uncompressed for .gz), for the statistics."""
        if self.compressed or not self.seekable:
            return self.counted
        try:
            return self.stream.tell()
        except (OSError, ValueError):
            return self.counted


def display_name(path: str | Path) -> str:
    """How an input is named in messages: ``<stdin>`` for ``-``, else the path as given."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def _sniff(name: str, stream: IO[bytes]) -> bytes:
    try:
        return stream.readline(SNIFF_BYTES)
    except _GZIP_ERRORS as exc:
        raise InputError(f"{name}: not a readable gzip file ({exc})") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None


@contextmanager
def open_input(path: str | Path, *, check_text: bool = True) -> Iterator[Source]:
    """Open one input for streaming: a file (gzip by magic bytes) or ``-`` for stdin.

    Raises ``InputError`` for what cannot be read; with ``check_text`` also for an empty or
    binary input (what no log or trace can be).
    """
    text = str(path)
    name = display_name(text)
    if text == STDIN:
        stdin: IO[bytes] = sys.stdin.buffer
        first = _sniff(name, stdin)
        if check_text:
            check_head(name, first)
        yield Source(name, stdin, first, seekable=False)
        return
    if Path(text).is_dir():
        raise InputError(f"{name}: is a directory, not a file",
                         hint="Pass a TORCH_LOGS text log, or a TORCH_TRACE directory holding "
                              "dedicated_log_torch_trace*.log files.")
    try:
        raw = io.BufferedReader(io.FileIO(text, "r"), buffer_size=_BUFFER)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        compressed = raw.peek(2)[:2] == GZIP_MAGIC
        # GzipFile reads through an 8 KiB buffer: a truncated .gz loses at most that much.
        stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw)
        first = _sniff(name, stream)
        if check_text:
            check_head(name, first)
        yield Source(name, stream, first, compressed, seekable=raw.seekable())
    finally:
        raw.close()


def is_stream(path: str | Path) -> bool:
    """Whether ``path`` is ``-`` or a pipe/device (``<(zcat run.log.gz)``): readable only once.

    Such an input cannot be opened once to sniff and again to read (the sniff would consume
    its head): open it once and use ``Source.first``.
    """
    if str(path) == STDIN:
        return True
    p = Path(path)
    return p.exists() and not p.is_file() and not p.is_dir()


def first_line(path: str | Path) -> bytes:
    """The first line of a file (decompressed), or ``b""`` when it cannot be read."""
    try:
        with open_input(path, check_text=False) as source:
            return source.first
    except InputError:
        return b""


def check_head(name: str, head: bytes) -> None:
    """Refuse an input whose first line shows it is empty or binary."""
    if not head:
        raise InputError(f"{name}: is empty, not a log",
                         hint='Capture one with: TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" '
                              "python train.py 2> run.log")
    if b"\x00" in head:
        raise InputError(f"{name}: is a binary file, not a text log",
                         hint="dyncli diagnose reads TORCH_LOGS text logs (optionally .gz) and "
                              "TORCH_TRACE directories.")


def rank_in_name(path: Path) -> int | None:
    """The rank a trace file's name carries (``…_rank_3_…``, ``…_rank_3.log``), else None."""
    m = _RANK_IN_NAME.search(path.name)
    return int(m[1]) if m else None


def trace_dir_files(directory: Path) -> list[Path]:
    """The trace files of a TORCH_TRACE directory (possibly none), sorted by name.

    Files named as torch names them; failing those, ``*.log`` / ``*.log.gz`` files whose
    first line is a trace envelope (traces copied and renamed).
    """
    from dyncli.logparse.trace import is_trace_line

    named = sorted(p for p in directory.glob(TRACE_GLOB) if p.is_file())
    if named:
        return named
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.name.endswith((".log", ".log.gz"))
                  and is_trace_line(first_line(p)))


def trace_files(path: Path) -> list[Path]:
    """The trace files of one input: a TORCH_TRACE directory's files, or the file itself."""
    if path.is_dir():
        files = trace_dir_files(path)
        if not files:
            raise InputError(f"{path}: directory has no TORCH_TRACE files (dedicated_log_torch_trace*.log)",
                             hint="Pass the directory given to TORCH_TRACE, or one trace file.")
        return files
    if path.exists():  # a file, or a pipe such as <(zcat trace.gz): read as one stream
        return [path]
    raise InputError(f"{path}: no such file or directory")

"""Reading log inputs: files, ``.gz`` files, ``-`` (stdin) → lines of bytes, streaming.

All file IO of ``dyncli diagnose`` for text logs lives here; the parsers only see lines.
Lines are bytes (decoding happens only for the records the parser keeps, with invalid
UTF-8 replaced), so CRLF endings, stray non-UTF-8 bytes and a truncated last line all pass.
What is clearly not a log fails early with one line naming the input: a directory, an
empty file, a binary file (NUL bytes in its first block), a corrupt gzip stream.
"""

from __future__ import annotations

import gzip
import io
import itertools
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from dyncli.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 8192
_BUFFER = 1 << 20


@dataclass
class LogSource:
    """One opened input: its display name, its lines, and what went wrong while reading."""

    name: str
    stream: IO[bytes]
    first: bytes = b""
    compressed: bool = False
    warnings: list[str] = field(default_factory=list)

    counted: int = 0

    def lines(self) -> Iterator[bytes]:
        """The input's lines (bytes, line ends kept); a truncated gzip stops with a warning.

        For a plain file this is the file's own line iterator (C speed, no Python frame per
        line); only gzip streams, which can fail mid-way, and stdin, which has no ``tell()``,
        go through a generator.
        """
        first = self.first
        if first and not first.endswith(b"\n"):
            first += self.stream.readline()  # the sniffed block ended mid-line
        head = [first] if first else []
        if not self.compressed and self.name != "<stdin>":
            return itertools.chain(head, self.stream)
        return self._guarded(head)

    def _guarded(self, head: list[bytes]) -> Iterator[bytes]:
        try:
            yield from head
            self.counted += sum(map(len, head))
            for line in self.stream:
                self.counted += len(line)
                yield line
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            self.warnings.append(f"{self.name}: compressed stream is truncated or corrupt "
                                 f"({exc}); analysed what was read before it")

    def bytes_read(self) -> int:
        """Bytes read so far (uncompressed for .gz), for the statistics."""
        if self.compressed or self.name == "<stdin>":
            return self.counted
        try:
            return self.stream.tell()
        except (OSError, ValueError):
            return self.counted


def _display(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _sniff(name: str, stream: IO[bytes]) -> bytes:
    """Read the first block (at most one line) and refuse what is clearly not a text log."""
    try:
        head = stream.readline(SNIFF_BYTES)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"{name}: not a readable gzip file ({exc})") from None
    _check_head(name, head)
    return head


@contextmanager
def open_log(path: str | Path) -> Iterator[LogSource]:
    """Open one log input for streaming; raise ``InputError`` for what cannot be a log."""
    text = str(path)
    name = _display(text)
    if text == "-":
        stdin: IO[bytes] = sys.stdin.buffer
        yield LogSource(name, stdin, _sniff(name, stdin))
        return
    if Path(text).is_dir():
        raise InputError(f"{name}: is a directory, not a log file",
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
        yield LogSource(name, stream, _sniff(name, stream), compressed)
    finally:
        raw.close()


def _check_head(name: str, head: bytes) -> None:
    if not head:
        raise InputError(f"{name}: is empty, not a log",
                         hint='Capture one with: TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" '
                              "python train.py 2> run.log")
    if b"\x00" in head:
        raise InputError(f"{name}: is a binary file, not a text log",
                         hint="dyncli diagnose reads TORCH_LOGS text logs (optionally .gz) and "
                              "TORCH_TRACE directories.")

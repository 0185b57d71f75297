"""The one way dyncli opens what it reads: a path, a ``.gz`` file or ``-`` (stdin), streaming.

Every feature reads through here (diagnose's text logs and traces, suggest's traces); the
parsers only ever see lines. Lines are bytes (decoding happens only for the records a parser
keeps, with invalid UTF-8 replaced), so CRLF endings, stray non-UTF-8 bytes and a truncated
last line all pass. gzip is recognised by its magic bytes, never by the file name. What is
clearly not text fails early with one line naming the input: a directory, an empty file, a
binary file (NUL bytes in its first line), a corrupt gzip stream, a file none of whose first
``RECOGNIZE_BYTES`` holds a torch log line (``/dev/urandom``, a blank-line bomb), a ``.gz``
that expands past ``MAX_EXPANSION`` times its size (``--max-expansion`` lifts it). A FIFO is
opened without blocking: with no writer it reads as empty instead of hanging in ``open()``.

Also here: finding the trace files of a TORCH_TRACE directory (one per rank) and the rank a
file name carries.
"""

from __future__ import annotations

import functools
import gzip
import io
import itertools
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
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
# Bytes read at a time by ``Source.parts``: big enough that the per-block work vanishes, small
# enough to stay in the CPU cache (1 MB blocks measured ~1.6x slower per line than 256 KB).
BLOCK = 256 << 10
STDIN = "-"
STDIN_NAME = "<stdin>"

# torch/_logging/_internal.py names each process's trace file like this, with the rank in it
# when torch.distributed is initialised: dedicated_log_torch_trace_rank_0_xxxx.log. Copies
# are often renamed (…_rank_0.log): the rank is ``rank_N`` followed by "_", "." or the end.
TRACE_GLOB = "dedicated_log_torch_trace*.log*"
_RANK_IN_NAME = re.compile(r"rank_(\d{1,9})(?=[_.]|$)")

_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)

# An input must show a torch log (or trace) line within its first megabyte: past it, what is
# all blank lines, noise or random bytes is refused instead of being read to its end.
RECOGNIZE_BYTES = 1 << 20
# A compressed input may expand to this many times its size on disk (real logs: 4-18x, traces
# ~4x; gzip's worst is ~1,000x), and to at most 2 lines per compressed byte (real logs: ~0.2):
# past both floors, more is a decompression bomb. None lifts the bound (--max-expansion 0).
DEFAULT_MAX_EXPANSION = 100.0
MAX_EXPANSION: float | None = DEFAULT_MAX_EXPANSION
MIN_EXPANDED_BYTES = 16 << 20
LINES_PER_BYTE = 2
MIN_EXPANDED_LINES = 1 << 20


def set_max_expansion(ratio: float | None) -> None:
    """``--max-expansion``: the bound on a compressed input's expansion (0 or less: none;
    None: the default, so that one command's flag does not outlive it in the same process)."""
    global MAX_EXPANSION
    MAX_EXPANSION = DEFAULT_MAX_EXPANSION if ratio is None else ratio if ratio > 0 else None


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
    recognize: bool = False  # refuse it when its first RECOGNIZE_BYTES hold no torch log line
    packed_size: int | None = None  # bytes on disk of a compressed regular file

    def lines(self) -> Iterator[bytes]:
        """The input's lines (bytes, line ends kept); a truncated gzip stops with a warning.

        For a plain file this is the file's own line iterator (C speed, no Python frame per
        line); only gzip streams, which can fail mid-way, and stdin, which has no ``tell()``,
        go through a generator.
        """
        head, ended = self._head()
        if not self.compressed and self.seekable:
            # readline(MAX_LINE) through iter(callable, sentinel): still no Python frame per line
            return itertools.chain(head, iter(functools.partial(self.stream.readline, MAX_LINE), b""))
        return self._guarded(head, ended)

    def _head(self) -> tuple[list[bytes], bool]:
        """The first lines: the sniffed one, and those read to recognize the input; and
        whether the stream ended (or failed) meanwhile."""
        first = self.first
        if first and not first.endswith(b"\n"):
            # the sniffed block ended mid-line (at most MAX_LINE in all)
            first += self.stream.readline(max(MAX_LINE - len(first), 1))
        head = [first] if first else []
        ended = False
        if self.recognize:
            ended = self._recognized_head(head)
        return head, ended

    def parts(self) -> Iterator[bytes | Iterable[bytes]]:
        """The same lines as ``lines()``, in parts: for a plain file, blocks of whole lines.

        A part is either ``bytes``, a block of whole lines, or an iterable of lines. A plain
        file is read ``BLOCK`` bytes at a time, each block completed to its next line end (or
        to ``MAX_LINE``, as ``readline(MAX_LINE)`` cuts): a ``BytesIO`` over a block yields its
        lines for half of what a buffered file's ``readline`` costs per line (the reading alone
        of benchmarks/diagnose_text.py). Compressed streams and stdin, which are bounded and
        guarded line by line, come as one part: ``lines()``.
        """
        if self.compressed or not self.seekable:
            yield self.lines()
            return
        head, ended = self._head()
        yield head
        if ended:
            return
        read, readline = self.stream.read, self.stream.readline
        while True:
            block = read(BLOCK)
            if not block:
                return
            if block[-1] != 10:  # complete the last line (a piece of at most MAX_LINE)
                tail = len(block) - block.rfind(b"\n") - 1
                block += readline(MAX_LINE - tail)
            yield block

    def _recognized_head(self, head: list[bytes]) -> bool:
        """Read lines into ``head`` until one is a glog line; refuse the input if the first
        ``RECOGNIZE_BYTES`` hold none. Returns whether the stream ended (or failed) meanwhile."""
        from dyncli.logparse.glog import GLOG_RE, OLD_PREFIX_RE

        glog, old = GLOG_RE.match, OLD_PREFIX_RE.match  # (old: torch 2.1/2.2's layout)

        def match(line: bytes) -> bool:
            return glog(line) is not None or old(line) is not None

        if any(match(line) for line in head):
            return False
        size = sum(map(len, head))
        readline = functools.partial(self.stream.readline, MAX_LINE)
        while size < RECOGNIZE_BYTES:
            try:
                line = readline()
            except (*_GZIP_ERRORS, OSError) as exc:
                self._read_failed(exc)
                return True
            if not line:
                return True
            head.append(line)
            size += len(line)
            if match(line):
                return False
        raise InputError(f"{self.name}: not a torch log or trace: nothing in its first "
                         f"{RECOGNIZE_BYTES >> 20} MB ({len(head):,} lines) is a torch log line",
                         hint='Capture a log with: TORCH_LOGS="+dynamic,recompiles,guards,'
                              'graph_breaks" python train.py 2> run.log (or TORCH_TRACE=DIR)')

    def _read_failed(self, exc: BaseException) -> None:
        if isinstance(exc, OSError) and not isinstance(exc, _GZIP_ERRORS):
            # an I/O error mid-way (a file on a failing or network disk)
            self.warnings.append(f"{self.name}: read error ({exc.strerror or exc}); "
                                 "analysed what was read before it")
        else:
            self.warnings.append(f"{self.name}: compressed stream is truncated or corrupt "
                                 f"({exc}); analysed what was read before it")

    def _guarded(self, head: list[bytes], ended: bool = False) -> Iterator[bytes]:
        max_bytes = max_lines = None
        if self.compressed and self.packed_size is not None and MAX_EXPANSION is not None:
            max_bytes = max(MIN_EXPANDED_BYTES, int(MAX_EXPANSION * self.packed_size))
            max_lines = max(MIN_EXPANDED_LINES, LINES_PER_BYTE * self.packed_size)
        try:
            yield from head
            self.counted += sum(map(len, head))
            if ended:
                return
            if max_bytes is None or max_lines is None:
                for line in iter(functools.partial(self.stream.readline, MAX_LINE), b""):
                    self.counted += len(line)
                    yield line
                return
            n = len(head)
            for line in iter(functools.partial(self.stream.readline, MAX_LINE), b""):
                self.counted += len(line)
                n += 1
                if self.counted > max_bytes or n > max_lines:
                    self._bomb(n)
                yield line
        except (*_GZIP_ERRORS, OSError) as exc:
            self._read_failed(exc)

    def _bomb(self, lines: int) -> None:
        assert self.packed_size is not None
        raise InputError(f"{self.name}: a decompression bomb? {self.packed_size:,} compressed "
                         f"bytes expand past {self.counted:,} bytes and {lines:,} lines, more than "
                         "any torch log of that size",
                         hint="If it is a real log, lift the bound with --max-expansion 0 "
                              "(or a larger ratio; the default is 100).")

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


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # replaced or closed (tests, daemons)
        return False


@contextmanager
def open_input(path: str | Path, *, check_text: bool = True,
               recognize: bool | None = None) -> Iterator[Source]:
    """Open one input for streaming: a file (gzip by magic bytes) or ``-`` for stdin.

    Raises ``InputError`` for what cannot be read; with ``check_text`` also for an empty or
    binary input (what no log or trace can be). ``recognize`` (default: ``check_text``): the
    lines raise ``InputError`` when the first ``RECOGNIZE_BYTES`` hold no torch log line.
    """
    text = str(path)
    name = display_name(text)
    if text == STDIN:
        stdin: IO[bytes] = sys.stdin.buffer
        if _is_terminal(sys.stdin):  # nothing piped: say why it waits, and how to end
            from dyncli.output import info

            info("Reading a log from the terminal (stdin): paste it, then press Ctrl-D on a "
                 "line of its own (Ctrl-Z, Enter on Windows). To read a file: pass its path.")
        first = _sniff(name, stdin)
        if check_text:
            check_head(name, first)
        yield Source(name, stdin, first, seekable=False,
                     recognize=check_text if recognize is None else recognize)
        return
    if Path(text).is_dir():
        raise InputError(f"{name}: is a directory, not a file",
                         hint="Pass a TORCH_LOGS text log, or a TORCH_TRACE directory holding "
                              "dedicated_log_torch_trace*.log files.")
    try:
        raw = io.BufferedReader(io.FileIO(open_nonblocking(text), "r"), buffer_size=_BUFFER)
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
        st = os.fstat(raw.fileno())
        packed = st.st_size if compressed and stat.S_ISREG(st.st_mode) else None
        yield Source(name, stream, first, compressed, seekable=raw.seekable(),
                     recognize=check_text if recognize is None else recognize, packed_size=packed)
    finally:
        raw.close()


def open_nonblocking(path: str) -> int:
    """``os.open`` for reading that never blocks in ``open()`` (a FIFO with no writer), then
    made blocking again so that reads wait for a writer's data as usual."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd


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


class SeenFiles:
    """The regular files already taken, by device and inode: a file named twice (``run.log
    run.log``, ``/tmp/trace /tmp/trace/*.log``, a link to it) is read once, not counted twice."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, int], str] = {}

    def again(self, path: str | Path) -> str | None:
        """None the first time ``path`` is met (and for what is not a regular file: stdin, a
        pipe); after that, the warning that says it was read once."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        key = (st.st_dev, st.st_ino)
        first = self._seen.get(key)
        if first is None:
            self._seen[key] = str(path)
            return None
        same = "given twice" if first == str(path) else f"the same file as {first}"
        return f"{path}: {same}; read once"


def rank_in_name(path: Path) -> int | None:
    """The rank a trace file's name carries (``…_rank_3_…``, ``…_rank_3.log``), else None."""
    m = _RANK_IN_NAME.search(path.name)
    return int(m[1]) if m else None


def trace_dir_files(directory: Path) -> list[Path]:
    """The trace files of a TORCH_TRACE directory (possibly none), sorted by name.

    Files named as torch names them; failing those, ``*.log`` / ``*.log.gz`` files whose
    first line is a trace envelope (traces copied and renamed).
    """
    from dyncli.logparse.trace_format import is_trace_line

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

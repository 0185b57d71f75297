"""TORCH_TRACE inputs → ``Diagnosis`` (with its ``TraceReport``): finding, sniffing, reading.

Accepted: a TORCH_TRACE directory (every ``dedicated_log_torch_trace*.log[.gz]`` in it, one
per rank), one such file, or its ``.gz``. Whether a file is a trace is decided by its
content (the first line is a glog prefix followed by a JSON envelope), not its name, so a
renamed trace still works and a text log named like a trace is not mistaken for one.
The parser is pure; this module is the only place that opens trace files.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from dyncli.diagnose.analyzer import Analyzer
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.trace import TraceAccumulator, trace_advice
from dyncli.errors import InputError
from dyncli.logparse.events import ParseStats
from dyncli.logparse.trace import TraceParser, is_trace_line
from dyncli.logparse.trace_map import TraceEventMapper

TRACE_GLOB = "dedicated_log_torch_trace*.log*"
_RANK_IN_NAME = re.compile(r"rank_(\d+)_")
_GZIP_MAGIC = b"\x1f\x8b"


@contextmanager
def open_binary(path: Path) -> Iterator[IO[bytes]]:
    """Open ``path`` for reading bytes, decompressing gzip (by magic bytes, not by name)."""
    try:
        fh: IO[bytes] = path.open("rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        if fh.read(2) == _GZIP_MAGIC:
            fh.close()
            fh = gzip.open(path, "rb")  # type: ignore[assignment]  # noqa: SIM115
        else:
            fh.seek(0)
        yield fh
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc
    finally:
        fh.close()


def _first_line(path: Path) -> bytes:
    with open_binary(path) as fh:
        for line in fh:
            if line.strip():
                return line[:65536]
            break
    return b""


def is_trace_file(path: Path) -> bool:
    """True when ``path`` is a file whose first line is a TORCH_TRACE envelope."""
    try:
        return path.is_file() and is_trace_line(_first_line(path))
    except InputError:
        return False


def is_trace_input(path: Path) -> bool:
    """True for a TORCH_TRACE directory or a trace file (sniffed by content)."""
    if path.is_dir():
        return any(path.glob(TRACE_GLOB))
    return is_trace_file(path)


def trace_files(path: Path) -> list[tuple[Path, int | None]]:
    """The trace files of one input, each with the rank its name carries (``rank_N_``)."""
    if path.is_dir():
        files = sorted(p for p in path.glob(TRACE_GLOB) if p.is_file())
        if not files:
            raise InputError(f"{path}: directory has no dedicated_log_torch_trace*.log files",
                             hint="Pass the directory given to TORCH_TRACE, or one trace file.")
    elif path.is_file():
        if not is_trace_file(path):
            raise InputError(f"{path}: not a TORCH_TRACE file (no JSON envelope on its first line)")
        files = [path]
    else:
        raise InputError(f"{path}: no such file or directory")
    out = []
    for f in files:
        m = _RANK_IN_NAME.search(f.name)
        out.append((f, int(m[1]) if m else None))
    return out


def diagnose_traces(paths: Sequence[Path], *, strict: bool = False) -> Diagnosis:
    """Read every trace of ``paths`` once, streaming, into one Diagnosis with ``trace`` set.

    One parser per file (each process has its own intern table). ``strict`` makes
    malformed lines, unknown event kinds and payload hash mismatches errors.
    """
    analyzer = Analyzer()
    extra = TraceAccumulator()
    stats = ParseStats()
    kinds: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    mismatch = 0
    inputs: list[str] = []
    for path in paths:
        for file, rank in trace_files(Path(path)):
            inputs.append(str(file))
            parser = TraceParser(str(file), strict=strict, verify=strict)
            mapper = TraceEventMapper(parser, rank)
            with open_binary(file) as fh:
                for event in mapper.events(parser.feed(fh)):
                    analyzer.feed(event)
                    extra.feed(event)
            s = parser.stats
            stats.lines += s.lines
            stats.recognized += s.recognized
            stats.unrecognized += sum(s.unknown.values())
            stats.malformed += s.malformed
            stats.bytes += file.stat().st_size
            for line, why in s.samples:
                stats.sample(line, f"{file.name}: {why}")
            kinds.update(s.kinds)
            unknown.update(s.unknown)
            mismatch += s.payload_mismatch
    if stats.lines == 0:
        raise InputError(f"{', '.join(inputs) or paths}: trace is empty")
    diag = analyzer.result(stats=stats, inputs=inputs)
    report = extra.finish(diag, kinds, unknown, mismatch)
    return dataclasses.replace(diag, trace=report,
                               suggestions=diag.suggestions + trace_advice(report))

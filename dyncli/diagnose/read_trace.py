"""TORCH_TRACE inputs → ``Diagnosis`` (with its ``TraceReport``).

Accepted: a TORCH_TRACE directory (every ``dedicated_log_torch_trace*.log[.gz]`` in it, one
per rank), one such file, its ``.gz``, or a trace on stdin. Whether a file is a trace is
decided by its content (the first line is a glog prefix followed by a JSON envelope), not its
name, so a renamed trace still works and a text log named like a trace is not mistaken for
one. Files are opened by ``dyncli.inputs``; the parser is pure.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from dyncli.diagnose.analyzer import Analyzer
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.trace import TraceAccumulator, trace_advice
from dyncli.errors import InputError
from dyncli.inputs import Source, first_line, open_input, rank_in_name, trace_dir_files, trace_files
from dyncli.logparse.events import ParseStats
from dyncli.logparse.trace import TraceParser, is_trace_line
from dyncli.logparse.trace_map import TraceEventMapper


def is_trace_input(path: Path) -> bool:
    """True for a TORCH_TRACE directory or a trace file (sniffed by content)."""
    if path.is_dir():
        return bool(trace_dir_files(path))
    return path.is_file() and is_trace_line(first_line(path))


class _TraceReader:
    """Feeds trace sources, one parser each, into one Analyzer and one TraceAccumulator."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.analyzer = Analyzer()
        self.extra = TraceAccumulator()
        self.stats = ParseStats()
        self.kinds: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.mismatch = 0
        self.inputs: list[str] = []

    def read(self, source: Source, rank: int | None, size: int | None = None) -> None:
        if not is_trace_line(source.first):
            raise InputError(f"{source.name}: not a TORCH_TRACE file (no JSON envelope on its "
                             "first line)")
        self.inputs.append(source.name)
        # One parser per file: each process has its own intern table.
        parser = TraceParser(source.name, strict=self.strict, verify=self.strict)
        mapper = TraceEventMapper(parser, rank)
        for event in mapper.events(parser.feed(source.lines())):
            self.analyzer.feed(event)
            self.extra.feed(event)
        s = parser.stats
        self.stats.add(ParseStats(lines=s.lines, recognized=s.recognized,
                                  unrecognized=sum(s.unknown.values()), malformed=s.malformed,
                                  bytes=source.bytes_read() if size is None else size))
        short = Path(source.name).name
        for line, why in s.samples:
            self.stats.sample(line, f"{short}: {why}")
        self.kinds.update(s.kinds)
        self.unknown.update(s.unknown)
        self.mismatch += s.payload_mismatch

    def result(self) -> Diagnosis:
        if self.stats.lines == 0:
            raise InputError(f"{', '.join(self.inputs)}: trace is empty")
        diag = self.analyzer.result(stats=self.stats, inputs=self.inputs)
        report = self.extra.finish(diag, self.kinds, self.unknown, self.mismatch)
        return dataclasses.replace(diag, trace=report,
                                   suggestions=diag.suggestions + trace_advice(report))


def diagnose_traces(paths: Sequence[Path], *, strict: bool = False,
                    stdin: Source | None = None) -> Diagnosis:
    """Read every trace of ``paths`` (and ``stdin``, already opened) into one Diagnosis.

    ``strict`` makes malformed lines, unknown event kinds and payload hash mismatches errors.
    """
    reader = _TraceReader(strict)
    if stdin is not None:
        reader.read(stdin, None)
    for path in paths:
        for file in trace_files(Path(path)):
            with open_input(file) as source:
                reader.read(source, rank_in_name(file), file.stat().st_size)
    return reader.result()

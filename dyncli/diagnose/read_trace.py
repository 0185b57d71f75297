"""TORCH_TRACE inputs → ``Diagnosis`` (with its ``TraceReport``).

Accepted: a TORCH_TRACE directory (every ``dedicated_log_torch_trace*.log[.gz]`` in it, one
per rank), one such file, its ``.gz``, or a trace on stdin. Whether a file is a trace is
decided by its content (the first line is a glog prefix followed by a JSON envelope), not its
name, so a renamed trace still works and a text log named like a trace is not mistaken for
one. Files are opened by ``dyncli.inputs``; the parser is pure.

Every file is its own process (torch writes one file per process): its compile ids are its
own. The rank comes from the envelopes (``rank``), else from the file name (``rank_N``
followed by ``_``, ``.`` or the end), else it is unknown. When two files claim one rank (two
runs of a job into one directory, a rank field that repeats) or several have none, both are
kept: their compile ids carry a label made from the file name (``rank-0-a1b2:0/0``, see
``CompileId``), and a warning says so. In a directory, a file that is empty, unreadable or
not a trace is skipped with one warning; only when no file is left is it an error.

A large job writes one file per rank. With ``jobs`` > 1 the files are parsed in a process
pool, each into its list of events (:func:`parse_file`); the parent feeds those lists to the
one Analyzer in file order, exactly as the serial reader feeds the events as it parses them,
so the result is the same by construction (a test compares the JSON). Parsing (JSON decoding)
is the expensive part and it is what runs in parallel; the price is memory: a file's events
are held whole while they wait to be fed, and at most ``2 * jobs`` files are in flight. The
pool, like the parsing child of one big file (``trace_pipe``), is started by
``dyncli.diagnose.children``. The reading ends in ``dyncli.diagnose.conclude``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dyncli.diagnose import children
from dyncli.diagnose.analyzer import Analyzer
from dyncli.diagnose.conclude import RegistryLoader, conclude, no_registry
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.processes import Process, check_trace, find_processes
from dyncli.diagnose.trace import TraceAccumulator
from dyncli.diagnose.trace_advice import trace_advice
from dyncli.diagnose.trace_report import ProcessInfo
from dyncli.errors import DyncliError, InputError, StrictError, UsageError
from dyncli.gcpause import gc_paused
from dyncli.inputs import Source, first_line, open_input, trace_dir_files
from dyncli.logparse.events import ParseStats
from dyncli.logparse.trace import TraceParser, blocks
from dyncli.logparse.trace_format import TraceStats, is_trace_line
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
        self.analyzer = Analyzer(trace=True)
        self.extra = TraceAccumulator()
        self.stats = ParseStats()
        self.kinds: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.mismatch = 0
        self.inputs: list[str] = []
        self.warnings: list[str] = []
        self.dynamo_starts: list[int] = []

    def read(self, source: Source, proc: Process, size: int | None = None) -> None:
        """Parse one source and feed its events as they come (streaming: constant memory)."""
        check_trace(source)
        self.inputs.append(source.name)
        parser, events = _parse(source, proc, self.strict)
        for event in events:
            self.analyzer.feed(event)
            self.extra.feed(event)
        self._account(source.name, parser.stats, source.bytes_read() if size is None else size)
        self.warnings += source.warnings

    def read_cudagraph_log(self, source: Source) -> None:
        """A TORCH_LOGS text log of the same run, for its CUDA-graph records only: which graph
        and size each recording was (the trace has when and how long). A log without one is
        refused: the rest of a log cannot be joined with a trace."""
        from dyncli.logparse.cudagraph_events import EVENTS
        from dyncli.logparse.textlog import TextLogParser

        stats = ParseStats()
        found = 0
        for event in TextLogParser(stats).parse_parts(source.parts()):
            if type(event) in EVENTS:
                found += 1
                self.analyzer.feed(event)
        if not found:
            raise UsageError("cannot mix TORCH_LOGS text logs and TORCH_TRACE traces in one call",
                             hint=f"{source.name} holds no CUDA-graph record, the one thing a log "
                                  "adds to a trace; run dyncli diagnose once per kind of input.")
        if self.strict and (stats.unrecognized or stats.malformed):
            line, text = (stats.samples or [(0, "")])[0]
            raise StrictError(f"{source.name}:{line}: unrecognized or malformed log line "
                              f"(--strict): {text[:120]}",
                              hint="run without --strict to skip such lines")
        stats.bytes = source.bytes_read()
        self.stats.add(stats)
        self.inputs.append(source.name)
        self.warnings += [*source.warnings, f"{source.name}: read for its {found} CUDA-graph "
                          "record(s) only; the trace gives the rest"]

    def read_piped(self, proc: Process) -> None:
        """:meth:`read` with the parsing in a child process (``trace_pipe``): same result."""
        from dyncli.diagnose import trace_pipe

        parser, events, info = trace_pipe.read_piped(proc)
        self.inputs.append(parser.source)
        for event in events:
            self.analyzer.feed(event)
            self.extra.feed(event)
        self._account(parser.source, parser.stats, proc.file.stat().st_size)
        self.warnings += info["warnings"]

    def absorb(self, parsed: ParsedFile) -> None:
        """Feed a file a worker parsed (:func:`parse_file`), as :meth:`read` would have."""
        if parsed.error is not None:
            kind, message, hint = parsed.error
            raise _ERRORS.get(kind, InputError)(message, hint=hint)
        self.inputs.append(parsed.name)
        for event in parsed.events:
            self.analyzer.feed(event)
            self.extra.feed(event)
        self._account(parsed.name, parsed.stats, parsed.size)

    def _account(self, name: str, s: TraceStats, size: int) -> None:
        self.stats.add(ParseStats(lines=s.lines, recognized=s.recognized,
                                  unrecognized=sum(s.unknown.values()), malformed=s.malformed,
                                  bytes=size, reasons=dict(s.reasons)))
        short = Path(name).name
        for line, why in s.samples:
            self.stats.sample(line, f"{short}: {why}")
        self.kinds.update(s.kinds)
        self.unknown.update(s.unknown)
        self.mismatch += s.payload_mismatch
        self.dynamo_starts.append(s.kinds.get("dynamo_start", 0))

    def result(self, procs: Sequence[Process], registry: RegistryLoader) -> Diagnosis:
        if self.stats.lines == 0:
            raise InputError(f"{', '.join(self.inputs)}: trace is empty")
        diag = self.analyzer.result(stats=self.stats, inputs=self.inputs)
        processes = tuple(
            ProcessInfo(file=p.name, rank=p.rank, rank_from=p.rank_from, label=p.label,
                        dynamo_start=n) for p, n in zip(procs, self.dynamo_starts, strict=False))
        report = dataclasses.replace(
            self.extra.finish(diag, self.kinds, self.unknown, self.mismatch), processes=processes)
        return conclude(dataclasses.replace(
            diag, trace=report, log_level="trace", richer_log="",
            suggestions=diag.suggestions + trace_advice(report, diag.suggestions),
            warnings=diag.warnings + tuple(self.warnings) + _unexplained(diag)), registry)


def _unexplained(diag: Diagnosis) -> tuple[str, ...]:
    """A trace that shows recompiles by their ids but holds no reason for any of them
    (torch 2.3 and 2.4 write no ``recompile_reasons`` artifact): say why, beside the
    unexplained-recompiles finding that says what to run (``advice._unexplained``)."""
    implied = sum(max(0, f.compiles - 1) for f in diag.frames)
    if not implied or diag.recompiles:
        return ()
    return (f"{implied} recompile(s) by their compile ids, but this trace holds no recompile "
            "reasons (torch 2.3 and 2.4 write none)",)


def _parse(source: Source, proc: Process, strict: bool) -> tuple[TraceParser, Iterator[Any]]:
    # One parser and one mapper per file: each process has its own intern table, its own
    # compile-id space and its own reset generations.
    parser = TraceParser(source.name, strict=strict, verify=strict)
    mapper = TraceEventMapper(parser, proc.rank, proc.label)
    return parser, mapper.events(parser.feed_blocks(blocks(source.parts())))


@dataclass
class ParsedFile:
    """One trace file parsed in a worker: its events in order, its stats, or its error."""

    name: str
    events: list[Any]
    stats: TraceStats
    size: int
    error: tuple[str, str, str | None] | None = None


_ERRORS: dict[str, type[DyncliError]] = {"InputError": InputError, "StrictError": StrictError}


def parse_file(proc: Process, strict: bool) -> ParsedFile:
    """Parse one trace file completely (a process-pool task: everything it returns pickles)."""
    file = proc.file
    try:
        with open_input(file) as source:
            check_trace(source)
            parser, events = _parse(source, proc, strict)
            return ParsedFile(source.name, list(events), parser.stats, file.stat().st_size)
    except DyncliError as e:  # re-raised by the parent, in file order, as the serial run would
        return ParsedFile(str(file), [], TraceStats(), 0, (type(e).__name__, e.message, e.hint))


def diagnose_traces(paths: Sequence[Path], *, strict: bool = False,
                    streams: Sequence[Source] = (), jobs: int | None = None,
                    registry: RegistryLoader = no_registry,
                    logs: Sequence[Source | Path] = ()) -> Diagnosis:
    """Read every trace of ``paths`` (and ``streams``, stdin or pipes already opened) into one
    Diagnosis.

    ``strict`` makes malformed lines, unknown event kinds and payload hash mismatches errors.
    ``jobs``: processes that parse rank files in parallel (default: the core count; 1 =
    serial and streaming); the Diagnosis is the same either way. ``registry``: how to get
    torch's graph-break registry (``dyncli.diagnose.conclude``). ``logs``: TORCH_LOGS text
    logs of the same run, read for their CUDA-graph records (``read_cudagraph_log``).
    """
    reader = _TraceReader(strict)
    procs, skipped = find_processes(paths, streams)
    reader.warnings += skipped
    files = [p for p in procs if p.path is not None]
    jobs_given = jobs is not None
    wanted = children.default_jobs() if jobs is None else jobs
    jobs = min(wanted, len(files))
    from dyncli.diagnose import trace_pipe

    # one big file and a second core: parse it in a child while this process analyzes (by
    # default only while a core is idle: on a busy machine the split costs more than it saves)
    piped = (len(files) == 1 and trace_pipe.wanted(files[0], wanted, strict)
             and (jobs_given or children.idle_core(wanted) or trace_pipe.early(files[0])))
    if not piped:
        children.discard_early()  # a child api.run started for nothing: stopped
    for stream, proc in zip(streams, procs, strict=False):
        reader.read(stream, proc)
    # The cyclic GC paused: a trace makes ~10^5 short-lived acyclic objects (decoded
    # envelopes, events), and each collection re-scans the long-lived per-compile state
    # (~8% of the reading time on a 100 MB trace).
    with gc_paused():
        if piped:
            reader.read_piped(files[0])
        elif jobs <= 1:
            for proc in files:
                with open_input(proc.file) as source:
                    reader.read(source, proc, proc.file.stat().st_size)
        else:
            for parsed in children.in_pool(functools.partial(parse_file, strict=strict),
                                           files, jobs):
                reader.absorb(parsed)
        for log in logs:
            if isinstance(log, Path):
                with open_input(log) as source:
                    reader.read_cudagraph_log(source)
            else:
                reader.read_cudagraph_log(log)
        return reader.result(procs, registry)

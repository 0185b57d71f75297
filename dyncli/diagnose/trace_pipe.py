"""One big trace file read by two processes: a child parses, this process maps and analyzes.

A single TORCH_TRACE file of a long run (hundreds of MB) is one process's records in order,
so it cannot be split among workers like a directory's rank files: compile ids, reset
generations and the intern table depend on everything before. What can run beside the
analysis is the parsing (reading the lines, skipping payloads, decoding the envelopes: about
half the time). So for a file of at least ``PIPE_BYTES`` when ``--jobs`` allows two
processes, a forked child runs ``TraceParser`` over the file and sends its records, in
batches, through a pipe; this process turns them into events (``TraceEventMapper``) and feeds
the Analyzer as the serial reader does. The result is the same by construction:

- the child's parser is set up like the serial one (``install_filters``: its filters depend on
  the lines alone), so it yields the same records;
- intern-table entries (``str`` lines) travel in the same stream, each before the records
  that follow it in the file, into a parser object here that serves ``filename()``;
- what the child counts (lines, kinds, malformed lines) and what the mapper counts here
  (malformed records) are added up at the end; the first bad lines are merged by line number.

Not used for ``--strict`` (an error must be the first bad line's, whichever process meets
it), stdin or streams. The pipe holds a few batches, so memory stays bounded: the child waits
while this process is behind. An error in the child (not a trace, unreadable) comes back as
the same ``InputError``; a child that dies is an error naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from dyncli.diagnose.processes import Process
from dyncli.errors import DyncliError, InputError, StrictError
from dyncli.inputs import open_input
from dyncli.logparse.trace import TraceParser, TraceRecord, TraceStats
from dyncli.logparse.trace_map import TraceEventMapper, install_filters

# A file at least this big is parsed in a child process (below it, the fork and the pickling
# cost more than they save).
PIPE_BYTES = 32 << 20
_BATCH = 512  # records (and intern entries) per message

_ERRORS: dict[str, type[DyncliError]] = {"InputError": InputError, "StrictError": StrictError}


def wanted(proc: Process, jobs: int, strict: bool) -> bool:
    """Whether ``proc`` (the only file to read) is worth a parsing child."""
    if strict or jobs < 2 or proc.path is None or not hasattr(os, "fork"):
        return False
    try:
        return proc.path.stat().st_size >= PIPE_BYTES
    except OSError:
        return False


def _record_tuple(rec: TraceRecord) -> tuple[Any, ...]:
    # plain tuples pickle in C; a slots dataclass goes through Python-level __getstate__
    return (rec.line, rec.kind, rec.meta, rec.timestamp, rec.pid, rec.emitter, rec.frame_id,
            rec.frame_compile_id, rec.attempt, rec.compiled_autograd_id, rec.rank, rec.payload)


class _Recording(dict):
    """The child's intern table: what is set is also queued, in order, for the other side."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[Any, Any]] = []

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.log.append((key, value))


def _child(proc: Process, conn: Any) -> None:
    """The parsing child: records and intern entries in file order, then the stats."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone reports Ctrl-C
    try:
        with open_input(proc.file) as source:
            from dyncli.diagnose.read_trace import _check_trace

            _check_trace(source)
            parser = TraceParser(source.name)
            install_filters(parser)
            table = parser.strings = _Recording()
            batch: list[Any] = []
            for rec in parser.feed(source.lines()):
                if table.log:  # entries of the str lines before this record
                    batch += table.log
                    table.log.clear()
                batch.append(_record_tuple(rec))
                if len(batch) >= _BATCH:
                    conn.send(("batch", batch))
                    batch = []
            if batch:
                conn.send(("batch", batch))
            conn.send(("end", parser.stats, source.bytes_read(), source.warnings))
    except DyncliError as e:
        conn.send(("error", type(e).__name__, e.message, e.hint))
    except BrokenPipeError:  # the parent stopped reading (an error, Ctrl-C)
        pass
    finally:
        conn.close()


def read_piped(proc: Process) -> tuple[TraceParser, Iterator[Any], dict[str, Any]]:
    """(parser, events, info) of one trace file parsed in a child process.

    ``parser`` holds the intern table and, once ``events`` is exhausted, the stats of both
    processes; ``info`` then has ``size`` (bytes read) and ``warnings``.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(proc, send), daemon=True)
    child.start()
    send.close()  # the child holds the only sending end: EOF when it ends
    parser = TraceParser(str(proc.file))
    mapper = TraceEventMapper(parser, proc.rank, proc.label)
    info: dict[str, Any] = {"size": 0, "warnings": []}

    def records() -> Iterator[TraceRecord]:
        try:
            while True:
                try:
                    message = receive.recv()
                except EOFError:
                    raise InputError(f"{proc.name}: the process reading it ended without a "
                                     "result", hint="--jobs 1 reads it in this process") from None
                if message[0] == "batch":
                    for item in message[1]:
                        if len(item) == 2:
                            parser.strings[item[0]] = item[1]
                        else:
                            yield TraceRecord(*item)
                elif message[0] == "end":
                    _, stats, info["size"], info["warnings"] = message
                    _merge(parser, stats)
                    return
                else:
                    _, kind, text, hint = message
                    raise _ERRORS.get(kind, InputError)(text, hint=hint)
        finally:
            receive.close()
            child.join(timeout=5)
            if child.is_alive():
                child.kill()

    return parser, mapper.events(records()), info


def _merge(parser: TraceParser, child: TraceStats) -> None:
    """Add the child's counts to what the mapper counted here (malformed records)."""
    mine = parser.stats
    mine.lines += child.lines
    mine.records += child.records
    mine.payload_lines += child.payload_lines
    mine.malformed += child.malformed
    mine.payload_mismatch += child.payload_mismatch
    mine.kinds.update(child.kinds)
    mine.unknown.update(child.unknown)
    mine.ranks |= child.ranks
    mine.reasons.update(child.reasons)
    # the serial parser keeps the first five bad lines, in line order: so do both together
    mine.samples[:] = sorted(mine.samples + child.samples, key=lambda s: s[0])[:5]

"""One big trace file read by two processes: a child parses, this process maps and analyzes.

A single TORCH_TRACE file of a long run (hundreds of MB) is one process's records in order,
so it cannot be split among workers like a directory's rank files: compile ids, reset
generations and the intern table depend on everything before. What can run beside the
analysis is the first half of the parsing: reading the lines, skipping payloads, joining the
payloads that are kept. So for a file of at least ``PIPE_BYTES`` when ``--jobs`` allows two
processes, a forked child runs ``TraceParser.feed_raw_blocks`` over the file and sends its raw
records (envelope line undecoded, payload joined) in batches through a pipe; this process
finishes them (``TraceParser.cook``: JSON, intern table), turns them into events
(``TraceEventMapper``) and feeds the Analyzer as the serial reader does. The halves were cut
where the two processes take about the same time. The result is the same by construction:

- the child's parser is set up like the serial one (``install_filters``: its filters depend on
  the lines alone), and ``cook`` does what ``feed`` does after the loop, so the records are
  the same; ``str`` lines travel in the same stream, in file order;
- what the child counts (lines, kinds, malformed lines) and what is counted here (bad
  envelopes, malformed records) are added up at the end; the first bad lines are merged by
  line number, as the serial parser meets them.

With the default ``--jobs`` it is used only while the load average leaves more than half a
core free (``idle_core``); ``--jobs 2`` or more asks for it whatever the load. Not used for
``--strict`` (an error must be the first bad line's, whichever process meets it), stdin or
streams. The pipe holds a few batches, so memory stays bounded: the child waits
while this process is behind. An error in the child (not a trace, unreadable) comes back as
the same ``InputError``; a child that dies is an error naming the file.

The child itself (what it runs, its fork, its early start, when it is worth one) is in
``dyncli.diagnose.children``, with every other child process diagnose starts: ``api.run``
forks it before importing the analysis (``children.prestart``), and :func:`read_piped` takes
it over.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from dyncli.diagnose import children
from dyncli.diagnose.processes import Process
from dyncli.errors import DyncliError, InputError, StrictError
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_format import TraceRecord, TraceStats
from dyncli.logparse.trace_map import TraceEventMapper

_ERRORS: dict[str, type[DyncliError]] = {"InputError": InputError, "StrictError": StrictError}


def wanted(proc: Process, jobs: int, strict: bool) -> bool:
    """Whether ``proc`` (the only file to read) is worth a parsing child."""
    if strict or jobs < 2 or proc.path is None or not sys.platform.startswith("linux"):
        return False  # fork is the start method this relies on: safe on Linux only
    try:
        return proc.path.stat().st_size >= children.PIPE_BYTES
    except OSError:
        return False


def early(proc: Process) -> bool:
    """Whether the command already forked the parsing child of ``proc`` (the load rule was
    applied then: a load that rose meanwhile does not waste it)."""
    return proc.path is not None and children.has_early(proc.path)


def read_piped(proc: Process) -> tuple[TraceParser, Iterator[Any], dict[str, Any]]:
    """(parser, events, info) of one trace file parsed in a child process.

    ``parser`` holds the intern table and, once ``events`` is exhausted, the stats of both
    processes; ``info`` then has ``size`` (bytes read) and ``warnings``.
    """
    assert proc.path is not None
    # the child api.run forked before its imports (children.prestart), else a new one
    child, receive = children.adopt(proc.path) or children.start(proc.file)
    parser = TraceParser(str(proc.file))
    mapper = TraceEventMapper(parser, proc.rank, proc.label)
    info: dict[str, Any] = {"size": 0, "warnings": []}
    cook = parser.cook

    def records() -> Iterator[TraceRecord]:
        ended = False
        try:
            while True:
                try:
                    message = receive.recv()
                except EOFError:
                    raise InputError(f"{proc.name}: the process reading it ended without a "
                                     "result", hint="--jobs 1 reads it in this process") from None
                if message[0] == "batch":
                    for item in message[1]:
                        if len(item) == 4:
                            record = cook(item)
                            if record is not None:
                                yield record
                        elif len(item) == 5:
                            record = cook(item[:4], signature=item[4])
                            if record is not None:
                                yield record
                        else:
                            yield TraceRecord(*item)
                elif message[0] == "end":
                    _, stats, info["size"], info["warnings"] = message
                    _merge(parser, stats)
                    ended = True
                    return
                elif message[0] == "raise":
                    raise message[1]
                else:
                    _, kind, text, hint = message
                    raise _ERRORS.get(kind, InputError)(text, hint=hint)
        finally:
            receive.close()
            if not ended:  # an error or Ctrl-C here: the child's work is of no use
                children.stop(child)
            else:
                child.join(timeout=5)

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

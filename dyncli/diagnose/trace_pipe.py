"""One big trace file read by two processes: a child parses, this process maps and analyzes.

A single TORCH_TRACE file of a long run (hundreds of MB) is one process's records in order,
so it cannot be split among workers like a directory's rank files: compile ids, reset
generations and the intern table depend on everything before. What can run beside the
analysis is the first half of the parsing: reading the lines, skipping payloads, joining the
payloads that are kept. So for a file of at least ``PIPE_BYTES`` when ``--jobs`` allows two
processes, a forked child runs ``TraceParser.feed_raw`` over the file and sends its raw
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
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

from dyncli.diagnose.processes import Process
from dyncli.errors import DyncliError, InputError, StrictError
from dyncli.inputs import open_input
from dyncli.logparse.trace import TraceParser, source_blocks
from dyncli.logparse.trace_events import graph_signature
from dyncli.logparse.trace_format import TraceRecord, TraceStats
from dyncli.logparse.trace_lines import install_filters
from dyncli.logparse.trace_map import TraceEventMapper

# A file at least this big is parsed in a child process (below it, the fork and the pickling
# cost more than they save).
PIPE_BYTES = 32 << 20
_BATCH = 512  # raw records per message

_ERRORS: dict[str, type[DyncliError]] = {"InputError": InputError, "StrictError": StrictError}


def wanted(proc: Process, jobs: int, strict: bool) -> bool:
    """Whether ``proc`` (the only file to read) is worth a parsing child."""
    if strict or jobs < 2 or proc.path is None or not sys.platform.startswith("linux"):
        return False  # fork is the start method this relies on: safe on Linux only
    try:
        return proc.path.stat().st_size >= PIPE_BYTES
    except OSError:
        return False


# Kinds whose envelopes the child decodes too (the JSON of the rest is decoded here): the
# big ones, with stacks and metrics; the split that gave both processes about the same CPU
# time on the benchmark trace (0.45-0.5 s each for 100 MB, under load).
COOKED_HERE = frozenset({"compilation_metrics"})


def _fields(rec: TraceRecord) -> list[Any]:
    # sent as a plain tuple: it pickles in C (a slots dataclass through Python __getstate__)
    return [rec.line, rec.kind, rec.meta, rec.timestamp, rec.pid, rec.emitter, rec.frame_id,
            rec.frame_compile_id, rec.attempt, rec.compiled_autograd_id, rec.rank, rec.payload]


def idle_core(cores: int) -> bool:
    """Whether a core is likely free for the child: the 1-minute load average leaves more than
    half of one. On a busy machine the child only competes with this process, and the split
    costs ~0.2 CPU-s per 100 MB (measured at load 3.6 on 2 cores: 1.51 CPU-s against 1.31);
    on an idle one it saves a quarter of the wall (102 MiB: 1.00 s against 1.36 s, 2 cores).
    The average lags by a minute: a machine busy until just now still reads ~1 on 2 cores
    (that quiet measurement was taken at 1.1), so ``cores - 1`` would refuse it."""
    try:
        return os.getloadavg()[0] < cores - 0.5
    except OSError:  # not available: assume the cores are ours
        return True


def _child(proc: Process, conn: Any) -> None:
    """The parsing child: raw records in file order, then its stats."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone reports Ctrl-C
    try:
        with open_input(proc.file) as source:
            from dyncli.diagnose.read_trace import _check_trace

            _check_trace(source)
            parser = TraceParser(source.name)
            install_filters(parser)
            batch: list[Any] = []
            cook = parser.cook
            blocks = source_blocks(source)
            raws = (parser.feed_raw(source.lines()) if blocks is None
                    else parser.feed_raw_blocks(blocks))
            for raw in raws:
                if raw[2] in COOKED_HERE:
                    record = cook(raw)
                    if record is None:
                        continue
                    fields = _fields(record)
                    if record.kind == "compilation_metrics":
                        # torch's whole config rides in every one (~35 KB of JSON strings);
                        # no handler reads it: not worth a pipe
                        fields[2] = {k: v for k, v in record.meta.items()
                                     if not k.endswith("_config")}
                    batch.append(tuple(fields))
                elif raw[2] == "dynamo_output_graph":
                    # the graph's signature (the mapper's most costly step) is made here from
                    # the payload, and sent instead of it
                    batch.append((*raw[:3], None, graph_signature(raw[3] or "")))
                else:
                    batch.append(raw)
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
    except Exception as e:  # raised again in the parent, as serial would
        try:
            conn.send(("raise", e))
        except Exception:  # not picklable: its type and text then
            conn.send(("raise", RuntimeError(f"{type(e).__name__}: {e}")))
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
                child.kill()
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

"""Every child process dyncli diagnose starts, in one place.

- **The parsing child of one big trace file** (``dyncli.diagnose.trace_pipe`` reads what it
  sends). What it runs (:func:`parse_into`) needs only the reader (``dyncli.logparse`` and
  ``dyncli.inputs``), not the analysis, so ``dyncli.diagnose.api.run`` forks it first
  (:func:`prestart`), before it imports the analysis: ~0.1 s of a run's start-up the child
  then spends parsing. ``trace_pipe.read_piped`` takes that child over (:func:`adopt`) when it
  reads the same file, else forks one itself (:func:`start`). Both ways the child is the same
  function on the same file, so the records, and the result, are the same.
- **The pool that parses a directory's rank files** (:func:`in_pool`), for
  ``dyncli.diagnose.read_trace``.

Whether a child is worth it is decided here too: the cores (:func:`default_jobs`) and the
load (:func:`idle_core`). The parsers themselves (``dyncli.logparse``) open no file and start
no process.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from dyncli.config import usable_cores
from dyncli.diagnose.processes import check_trace
from dyncli.errors import DyncliError
from dyncli.inputs import first_line, open_input
from dyncli.logparse.trace import TraceParser, blocks
from dyncli.logparse.trace_events import graph_signature
from dyncli.logparse.trace_format import TraceRecord, is_trace_line
from dyncli.logparse.trace_lines import install_filters

# A file at least this big is parsed in a child process (below it, the fork and the pickling
# cost more than they save).
PIPE_BYTES = 32 << 20
_BATCH = 512  # raw records per message

# Kinds whose envelopes the child decodes too (the JSON of the rest is decoded by the
# process that maps them): compile metrics, whose ~35 KB of torch config per compile no
# handler reads and which are sent without it. Records with stacks (create_symbol,
# guard_added) travel raw: unpickling their decoded stacks cost more than decoding them.
COOKED_HERE = frozenset({"compilation_metrics"})


def _fields(rec: TraceRecord) -> list[Any]:
    # sent as a plain tuple: it pickles in C (a slots dataclass through Python __getstate__)
    return [rec.line, rec.kind, rec.meta, rec.timestamp, rec.pid, rec.emitter, rec.frame_id,
            rec.frame_compile_id, rec.attempt, rec.compiled_autograd_id, rec.rank, rec.payload]


def parse_into(file: str | Path, conn: Any) -> None:
    """The parsing child: raw records of ``file`` in file order, in batches, then its stats;
    an error as a message (``trace_pipe.read_piped`` raises it again)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone reports Ctrl-C
    try:
        with open_input(file) as source:
            check_trace(source)
            parser = TraceParser(source.name)
            install_filters(parser)
            batch: list[Any] = []
            cook = parser.cook
            for raw in parser.feed_raw_blocks(blocks(source.parts())):
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


def start(file: str | Path) -> tuple[Any, Any]:
    """Fork the parsing child of ``file``: (the process, the receiving end of its pipe)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    _widen(send)
    child = ctx.Process(target=parse_into, args=(file, send), daemon=True)
    child.start()
    send.close()  # the child holds the only sending end: EOF when it ends
    return child, receive


def _widen(conn: Any) -> None:
    """Give the pipe the largest buffer the system allows (Linux: 1 MB, from 64 KB): the child
    parses ahead while this process is still importing or analysing, instead of waiting for
    it to drain each 64 KB."""
    import fcntl

    try:
        size = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), min(size, 1 << 24))
    except (OSError, ValueError):
        pass  # not Linux, or not allowed: the default buffer


def default_jobs() -> int:
    """The default ``--jobs``: the cores this process may use (``config.usable_cores``, which
    ``--verbose`` shows)."""
    return usable_cores()


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


# the child :func:`prestart` forked: (file identity, process, receiving end)
_EARLY: list[tuple[tuple[int, ...], Any, Any]] = []


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def prestart(paths: list[str], jobs: int | None, strict: bool) -> bool:
    """Fork the parsing child now if the reading will want one: one plain trace file of at
    least ``PIPE_BYTES`` (the rule ``read_trace.diagnose_traces`` applies: not ``--strict``,
    ``--jobs`` ≥ 2 given, or by default two cores and one of them idle). Returns whether it
    did. Anything else (a directory, stdin, a text log, an error) is left to the reading,
    which stops a child it does not use (:func:`discard_early`)."""
    if len(paths) != 1 or strict or not sys.platform.startswith("linux") or _EARLY:
        return False
    path = Path(paths[0])
    if paths[0] == "-" or not path.is_file():
        return False
    cores = default_jobs() if jobs is None else jobs
    ident = _identity(path)
    if cores < 2 or ident is None or ident[2] < PIPE_BYTES:
        return False
    if jobs is None and not idle_core(cores):
        return False
    if not is_trace_line(first_line(path)):
        return False
    _EARLY.append((ident, *start(path)))
    return True


def has_early(path: Path) -> bool:
    """Whether :func:`prestart` forked the child of ``path`` (the same file, unchanged)."""
    return bool(_EARLY) and _EARLY[0][0] == _identity(path)


def discard_early() -> None:
    """Stop a child :func:`prestart` forked that the reading does not use."""
    while _EARLY:
        _, child, receive = _EARLY.pop()
        receive.close()
        stop(child)


def adopt(path: Path) -> tuple[Any, Any] | None:
    """The child :func:`prestart` forked, if it reads ``path`` (the same file, unchanged);
    else None (and an early child of another file is stopped)."""
    if not _EARLY:
        return None
    if has_early(path):
        _, child, receive = _EARLY.pop()
        return child, receive
    discard_early()
    return None


def stop(child: Any) -> None:
    """End a child this module started (it ignores Ctrl-C: the parent reports it)."""
    child.kill()
    child.join(timeout=5)


_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def in_pool(task: Callable[[_Item], _Result], items: Iterable[_Item],
            jobs: int) -> Iterator[_Result]:
    """``task`` of each item in ``jobs`` processes, results in the items' order, at most
    ``2 * jobs`` in flight (bounds the memory held). ``task`` is a module-level function
    whose items and results pickle."""
    from concurrent.futures import Future, ProcessPoolExecutor

    # Workers ignore Ctrl-C: the parent alone reports it (one line, exit 130), instead of
    # every worker printing its own KeyboardInterrupt traceback.
    with ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint) as pool:
        pending: deque[Future[_Result]] = deque()
        todo = iter(items)
        for item in todo:
            pending.append(pool.submit(task, item))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            done = pending.popleft().result()
            for item in todo:  # the next one, if any
                pending.append(pool.submit(task, item))
                break
            yield done

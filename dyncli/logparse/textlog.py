"""TORCH_LOGS text logs → events, streaming: lines (bytes) in, ``events`` out.

A *record* is one logging call: its first line plus the following lines that repeat the
exact same glog prefix (torch repeats the prefix on every line of a multi-line message).
Records are kept open per (rank, pid), so lines of other processes or threads interleaved
in between do not split them. Records are dispatched by the first word of their message
through ``KINDS``; kinds that only need their first line never hold more than it, the
guards tree is handled line by line, and only the few multi-line kinds (recompiles, graph
breaks, errors, recompile-limit warnings) keep their lines, capped at ``MAX_RECORD_LINES``.
So memory stays constant whatever the log size.

Speed comes from the observation that most lines repeat the previous line's prefix: the rest
of a guards tree, of a multi-line record, or a burst of one-line records from one call site
in one millisecond. Such a line costs one ``startswith``: a call site logs one format string,
so lines of a *silent* site (a kind the diagnosis does not need) are counted unread, and in a
guards tree only TENSOR_MATCH lines with a dynamic dim and shape LAMBDA_GUARDs are parsed.

Nothing here raises on bad input: unknown kinds, non-glog lines and records that fail to parse
are counted in ``ParseStats`` (``unrecognized``/``malformed``); callers decide what is fatal
(``--strict``). No file IO and no torch: see ``dyncli.inputs`` for reading files.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import textautotune as autotune
from dyncli.logparse import textdde as dde
from dyncli.logparse import textguards as guards
from dyncli.logparse import textnotes as notes
from dyncli.logparse import textold as old
from dyncli.logparse import textorphans as orphans
from dyncli.logparse import textversion
from dyncli.logparse.glog import GLOG_RE, OLD_PREFIX_RE
from dyncli.logparse.safe import RECORD_ERRORS, reason
from dyncli.logparse.textbreaks import HOP_LOGGER, exc_warning
from dyncli.logparse.textcrash import TRITON_FAILED, TRITON_LOGGER, CrashReader, triton_failed
from dyncli.logparse.textdrawn import RichBox, coloured, uncoloured
from dyncli.logparse.textforeign import ForeignLines
from dyncli.logparse.textkinds import (
    COLLECT,
    DUMPS,
    DYN_SOURCES,
    FIRST,
    FLAT,
    KINDS,
    KNOWN_TEXT,
    MARKERS,
    MAX_RECORD_LINES,
    READ_WHERE,
    SILENT,
    SILENT_WORDS,
    TRACE_KIND,
    TREE,
    TREE_WORD,
    UNKNOWN,
    Handler,
    artifact,
    is_start,
)
from dyncli.logparse.textmsg import dynamic_sources
from dyncli.logparse.textpaste import rank_cut
from dyncli.logparse.trace_format import is_trace_line

_RANK, _PID, _CID = (GLOG_RE.groupindex[g] for g in ("rank", "pid", "cid"))
_Key = tuple[Any, ...]  # (rank or None, pid) as bytes, from the glog match: one per process

def _dynamic_size(raw: bytes) -> bool:
    """Whether a TENSOR_MATCH line's ``size=[…]`` has a dynamic (None) dim."""
    i = raw.find(b" size=[")
    return i >= 0 and b"None" in raw[i + 7: raw.find(b"]", i)]


_STATIC = b"_dynamo_static_indices', set())"


_NO_COMMON: dict[str, Any] = {}
_RANK_LOOKAHEAD = 256  # lines read ahead for the rank of a first line whose tag a paste cut

_NO_EVENTS: tuple[ev.Event, ...] = ()


# the one "Step 1:" line that starts a compile (its "Step 1: torchdynamo done tracing fn
# (RETURN_VALUE)" under the same id ends it: read as a start, every +dynamo log counted each
# compile twice, the second as a reset)
_STEP1_START = b"Step 1: torchdynamo start tracing"


def _backend(prefix: bytes) -> bool:
    """Whether a record is the backend's, inductor's, not dynamo's: by its prefix's file
    (``torch/_inductor/select_algorithm.py:1905]``) or logger (torch 2.1/2.2's layout)."""
    return b"_inductor/" in prefix or b"_inductor\\" in prefix or b"torch._inductor." in prefix


class _Record:
    __slots__ = ("common", "handler", "kind", "lines", "mode", "prefix", "tail")

    def __init__(self, prefix: bytes, kind: bytes, mode: int, handler: Handler | None,
                 common: dict[str, Any], first: bytes) -> None:
        self.prefix, self.kind, self.mode, self.handler, self.common = prefix, kind, mode, handler, common
        self.lines: list[bytes] = [first] if mode in (FIRST, COLLECT) else []
        self.tail = True  # lines without a prefix may still continue it (torch 2.0; until a blank)


# Stands for "no open record": its prefix matches no line, so every line takes the regex path.
_GONE = _Record(b"\x00", b"?", UNKNOWN, None, _NO_COMMON, b"")


class TextLogParser(ForeignLines):
    """Incremental parser: ``parse(lines)`` yields events and fills ``stats``."""

    def __init__(self, stats: ev.ParseStats | None = None) -> None:
        self.stats = stats if stats is not None else ev.ParseStats()
        self._open: dict[_Key, _Record] = {}
        self._pid_rank: dict[bytes, bytes] = {}
        self._cids: dict[tuple[bytes, int, str], ev.CompileId | None] = {}
        self._first_pid: bytes | None = None  # the first process without a rank tag
        # per process (pid): compile ids seen, compile starts seen, resets seen (generation)
        self._seen: dict[bytes, set[bytes]] = {}
        self._backend_seen: dict[bytes, set[bytes]] = {}  # ids only the backend's records showed
        self._started: dict[bytes, dict[bytes, set[bytes]]] = {}
        self._gen: dict[bytes, int] = {}
        self._commons: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._prefix_re = GLOG_RE  # OLD_PREFIX_RE once a line of torch 2.1/2.2's layout is seen
        self._waiting: dict[bytes, list[ev.Event]] = {}  # pid -> events for its next compile id
        # pid -> compiled autograd's cache misses waiting for the capture (``!N``) that follows
        # them, and the newest dynamo compile (not a capture's) the process logged
        self._ca_waiting: dict[bytes, list[ev.AutogradCacheMiss]] = {}
        self._newest: dict[bytes, ev.CompileId | None] = {}
        self._stray: bytes | None = None  # an unprefixed "function: '…'" line before an orphan
        self._speculated_at = -2  # the line of the last speculate_subgraph record
        self._crashes = CrashReader()  # the program's tracebacks: did torch's compiler raise
        self._box = RichBox()  # rich's traceback box, read as Python's lines
        self._versions = textversion.VersionLines()  # the torch version the paste states

    def parse(self, lines: Iterable[bytes], first_line: int = 1) -> Iterator[ev.Event]:
        """Parse every line (bytes, with or without line ends) and flush at the end."""
        return self.parse_parts((lines,), first_line)

    def parse_parts(self, parts: Iterable[bytes | Iterable[bytes]],
                    first_line: int = 1) -> Iterator[ev.Event]:
        """``parse`` of lines that come in parts (``Source.parts()``): blocks of whole lines
        (``bytes``) or iterables of lines.

        The loop is the hot path of ``dyncli diagnose``: a line that repeats the previous
        line's prefix (most lines: guard trees, multi-line records, bursts of one-line records
        in the same millisecond) is handled without the regex and without allocations, and
        such a line of a silent record costs one ``startswith`` (no line number is kept per
        line: it is counted from ``fast`` and ``slow`` where an event needs it).
        """
        parts = self._rank_restored(parts)
        stats, open_, pid_rank = self.stats, self._open, self._pid_rank
        match: Callable[[bytes], Any] = self._prefix_re.match
        # The open record of the previous line's process; a sentinel no line starts with.
        cur = _GONE
        mode = cur.mode
        last_prefix, plen = b"\x00", 1
        last_key: _Key = (None, b"")
        base = first_line - 1
        silent_mode, tree_mode = SILENT, TREE  # (locals: read on every line)
        old_match: Callable[[bytes], Any] | None = (
            OLD_PREFIX_RE.match if self._prefix_re is GLOG_RE else None)
        fast = slow = 0  # lines of the fast path (silent and tree lines), and the others
        known = 0  # silent records started (recognized)
        starts = 0  # of them, the silent records started (the others count in _start)
        seen_get = self._seen.get
        try:
            for part in parts:
                # a block of whole lines (bytes) or any iterable of lines
                for raw in io.BytesIO(part) if isinstance(part, bytes) else part:
                    if raw.startswith(last_prefix):
                        # Same prefix = same process, same call site, same millisecond. A silent
                        # site only ever logs its one kind, so its lines need no look at all.
                        if mode == silent_mode:
                            fast += 1
                            continue
                        if mode == tree_mode:
                            fast += 1
                            # Only TENSOR_MATCH lines with a dynamic dim (size=[None, …]), the
                            # record's first TENSOR_MATCH (it names the frame) and shape guards
                            # on inputs carry facts; the rest of the tree is skipped unparsed.
                            # The first byte of the guard kind (T, L, D) rules out most lines.
                            i = raw.find(b"+- ", plen) + 3
                            if i < 3:
                                continue
                            c = raw[i:i + 1]
                            if (c == b"T" and raw.startswith(b"TENSOR_MATCH:", i)
                                    and (not cur.lines or _dynamic_size(raw))) or (
                                    c == b"L" and raw.startswith(b"LAMBDA_GUARD: ", i) and b"L[" in raw) or (
                                    c == b"D" and _STATIC in raw):
                                cur.lines.append(b"")
                                out = self._tree(cur, raw[plen:].rstrip(b"\r\n"), base + fast + slow)
                                if out:
                                    yield from out
                            continue
                        slow += 1
                        message = raw[plen:].rstrip(b"\r\n")
                        sp = message.find(b" ")
                        word = message[:sp] if sp >= 0 else message
                        if word not in KINDS and mode != UNKNOWN:
                            # a continuation line (no kind's first word): kept if collected
                            known += 1
                            if mode == COLLECT and len(cur.lines) < MAX_RECORD_LINES:
                                cur.lines.append(message)
                                if cur.handler is notes.deferred_backward:
                                    yield from self._deferred_dde(cur.common, message,
                                                                  base + fast + slow)
                            elif mode == FLAT:
                                out = self._flat(cur, message, base + fast + slow)
                                if out:
                                    yield from out
                            continue
                        out = self._same_prefix(last_key, cur, word, message, base + fast + slow)
                        if out:
                            yield from out
                        cur = open_.get(last_key) or _GONE
                        mode = cur.mode
                        continue
                    # A line that starts a record (most often of a silent kind): the one regex,
                    # then as few steps as possible (this branch runs for ~1 line in 10).
                    slow += 1
                    raw = raw.rstrip(b"\r\n")
                    # (inside prose's inline code span, which the line above opened: words
                    # about a log whatever its prefix: textpaste.prose_code; _foreign's)
                    in_span = self._span_to == base + fast + slow - 1
                    m = None if in_span else match(raw)
                    if m is None and coloured(raw):  # a terminal's colours (IPython's)
                        raw = uncoloured(raw)
                        m = None if in_span else match(raw)
                    if m is None and not in_span and old_match is not None \
                            and (m := old_match(raw)) is not None:
                        # torch 2.1/2.2's layout (glog.OLD_PREFIX_RE): read the rest as such.
                        # Its prefixes end in milliseconds and a logger, not a line: records
                        # of different call sites share them, so no silent run is skipped.
                        match, old_match, silent_mode = old_match, None, -1
                        self._prefix_re = OLD_PREFIX_RE
                    if m is None and (fixed := self._pasted(raw, base + fast + slow)) is not None:
                        # torch's record where a paste put it (issue 33): read as written
                        raw = fixed
                        m = GLOG_RE.match(raw)
                    if m is None:
                        out = self._foreign(raw, base + fast + slow, last_key)
                        if out:
                            yield from out
                        if self._span_to == base + fast + slow:
                            last_prefix = b"\x00"  # (the next line is in the span: no fast path)
                        continue
                    if self._pending is not None:  # a prefixed line ends a pending message
                        yield from self._pending_done()
                    plen = m.end()
                    last_prefix = raw[:plen]
                    if plen == len(raw) and last_prefix[-1:] != b" ":
                        # an empty message whose trailing blank an editor or a paste dropped:
                        # the prefix of the record's other lines ends with one
                        last_prefix += b" "
                        plen += 1
                    key = last_key = m.group(_RANK, _PID)  # (rank, pid): one open record per process
                    if key[0] is not None:
                        pid_rank[key[1]] = key[0]
                    sp = raw.find(b" ", plen)
                    word = raw[plen:sp] if sp >= 0 else raw[plen:]
                    if word in SILENT_WORDS:
                        silent = True
                    elif (mark := READ_WHERE.get(word)) is not None:
                        silent = mark not in raw
                    elif word[:8] == b"symbol_g":  # "symbol_guard_limit_before_specialize=2 exceeded"
                        word = word.split(b"=", 1)[0]
                        silent = word in SILENT_WORDS
                    else:
                        silent = False
                    cid_b = m.group(_CID)
                    if cid_b is not None and (cid_b not in seen_get(key[1], ()) or word in MARKERS):
                        out = self._compile_seen(key, cid_b, word, raw[plen:], base + fast + slow,
                                                 _backend(last_prefix))
                        if out:
                            yield from out
                    rec = open_.get(key)
                    if rec is not None:
                        if rec.prefix == last_prefix:
                            # The same process's record resumes after lines of another process.
                            out = self._same_prefix(key, rec, word, raw[plen:], base + fast + slow)
                            if out:
                                yield from out
                            cur = open_.get(key) or _GONE
                            mode = cur.mode
                            continue
                        if rec.mode >= FIRST:
                            out = self._close(key)
                            if out:
                                yield from out
                        elif silent and rec.mode == SILENT:
                            known += 1
                            starts += 1
                            rec.prefix = last_prefix  # reuse: no allocation per one-line record
                            cur = rec
                            mode = SILENT
                            continue
                    if silent:
                        known += 1
                        starts += 1
                        cur = open_[key] = _Record(last_prefix, word, SILENT, None, _NO_COMMON, b"")
                        mode = SILENT
                        continue
                    out = self._start(key, last_prefix, raw[plen:], base + fast + slow,
                                      self._common(key, cid_b))
                    if out:
                        yield from out
                    cur = open_[key]
                    mode = cur.mode
            if self._pending is not None:
                yield from self._pending_done()
            crashed = self._crashes.done()
            self.stats.records += len(crashed)
            yield from crashed
            for kind, n in self._crashes.refused.items():
                self.stats.seen[kind] = self.stats.seen.get(kind, 0) + n
            self._crashes.refused.clear()
            for key in list(open_):
                yield from self._close(key)
            for waiting in self._waiting.values():  # no compile came after them
                yield from waiting
            self._waiting.clear()
            for misses in self._ca_waiting.values():  # the log ends before their capture
                yield from misses
            self._ca_waiting.clear()
        finally:
            stats.lines += fast + slow
            stats.recognized += fast + known
            stats.records += starts

    def _rank_restored(self, parts: Iterable[bytes | Iterable[bytes]]
                       ) -> Iterator[bytes | Iterable[bytes]]:
        """``parts``, their first line's rank tag restored where the paste began inside it
        (``textpaste.rank_cut``: ":V0707 … 123 torch/…" under "[rank0]:V0707 … 123 …" lines):
        the rank is the one the same pid's first tagged line shows, looked for in the next
        ``_RANK_LOOKAHEAD`` lines. Without it the record counted as another process than the
        rest of its own (its rank unknown until a later line showed the pid's)."""
        parts = iter(parts)
        for part in parts:
            lines = iter(io.BytesIO(part) if isinstance(part, bytes) else part)
            first = next(lines, None)
            if first is None:
                continue
            cut = rank_cut(first.rstrip(b"\r\n"))
            if cut is None:
                yield (first,)
                yield lines
                yield from parts
                return
            rest = itertools.chain(lines, (line for p in parts for line in (
                io.BytesIO(p) if isinstance(p, bytes) else p)))
            held = list(itertools.islice(rest, _RANK_LOOKAHEAD))
            rank = next((m["rank"] for line in held if (m := GLOG_RE.match(line)) is not None
                         and m["rank"] is not None and m["pid"] == cut[1]), None)
            if rank is not None:
                first = b"[rank" + rank + b"]:" + first[cut[0]:]
                self.stats.pasted["rank tags restored"] = \
                    self.stats.pasted.get("rank tags restored", 0) + 1
            yield (first, *held)
            yield rest
            return

    def _compile_seen(self, key: _Key, cid_b: bytes, word: bytes, message: bytes,
                      lineno: int, backend: bool = False) -> Iterable[ev.Event]:
        """Count every compile and notice ``torch._dynamo.reset()``, per process (pid).

        A compile is counted from the first record carrying its id, whatever the record (a
        frame with only int/float inputs logs no symbol or tensor guard, but it logs
        ``create_env`` with +dynamic and its guards tree): a ``CreateEnv`` event stands for it.
        A compile's start (``create_env``, ``Recompiling function``, ``Step 1: torchdynamo
        start tracing``: each once per compile attempt) seen again for an id this process
        has already started means the ids started over after a reset: what follows is the
        next generation (``CompileId.generation``), as the trace reader does on
        ``dynamo_start``.

        A record of the backend (``backend``: inductor's file) counts its id too, marked so
        (``CreateEnv.backend``), and leaves it unseen: the first dynamo record of that id
        makes a ``CreateEnv`` of its own.
        """
        pid = key[1]
        if backend:
            shown = self._backend_seen.setdefault(pid, set())
            if cid_b in shown:
                return _NO_EVENTS
            shown.add(cid_b)
            return (ev.CreateEnv(**self._common(key, cid_b), line=lineno, backend=True),)
        seen = self._seen.setdefault(pid, set())
        if word in MARKERS and (word != b"Step" or message.startswith(_STEP1_START)):
            started = self._started.setdefault(pid, {})
            kinds = started.setdefault(cid_b, set())
            if word in kinds:  # this id started before: torch._dynamo.reset() came between
                self._gen[pid] = self._gen.get(pid, 0) + 1
                started.clear()
                seen.clear()
                self._backend_seen.pop(pid, None)
                started[cid_b] = {word}
            else:
                kinds.add(word)
        if cid_b in seen:
            return _NO_EVENTS
        seen.add(cid_b)
        if self._prefix_re is OLD_PREFIX_RE:
            rec = self._open.get(key)
            if rec is not None and rec.mode >= FIRST and rec.common.get("compile_id") is None:
                self._close(key)  # a "Recompiling" record: waits for this very id
        common = self._common(key, cid_b)
        created = ev.CreateEnv(**common, line=lineno)
        if cid_b[:1] != b"!":
            self._newest[pid] = common["compile_id"]
        elif (rec := self._open.get(key)) is not None and rec.kind == b"Cache":
            self._close(key)  # the miss just before this capture's first record: it waits
        if cid_b[:1] == b"!" and self._ca_waiting and (misses := self._ca_waiting.pop(pid, None)):
            # compiled autograd's capture after its cache misses: theirs (its id alone, !N)
            cid = common["compile_id"]
            capture = None if cid is None else cid.capture()
            return [*(dataclasses.replace(e, compile_id=capture) for e in misses), created]
        waiting = self._waiting.pop(pid, None) if self._waiting else None
        if waiting:
            return [*(dataclasses.replace(e, **common) for e in waiting), created]
        return (created,)

    def _common(self, key: _Key, cid_b: bytes | None) -> dict[str, Any]:
        """The fields every event of a record carries: rank, pid, compile id (a shared dict:
        callers copy it, never change it)."""
        gen = self._gen.get(key[1], 0) if self._gen else 0
        rank_b = key[0] if key[0] is not None else self._pid_rank.get(key[1])
        made = self._commons.get((key, cid_b, gen, rank_b))
        if made is not None:
            return made
        if len(self._commons) >= 4096:  # bounded, whatever the number of processes and ids
            self._commons.clear()
        made = self._commons[(key, cid_b, gen, rank_b)] = self._make_common(key, cid_b, gen, rank_b)
        return made

    def _make_common(self, key: _Key, cid_b: bytes | None, gen: int,
                     rank_b: bytes | None) -> dict[str, Any]:
        cid = None
        # Two processes without rank tags (pytorch#141790: two runs of a program in one log)
        # number their compiles from 0/0 each: the second's ids carry its pid, so that they
        # count as its own. (pid 0 is a prefix a paste lost and dyncli rebuilt: any process.)
        process = ""
        pid = key[1]
        if rank_b is None and pid and pid != b"0":
            if self._first_pid is None:
                self._first_pid = pid
            elif pid != self._first_pid:
                process = f"pid{int(pid)}"
        if cid_b is not None:
            cid = self._cids.get((cid_b, gen, process))
            if cid is None:
                cid = ev.CompileId.parse(cid_b.decode())
                if cid is not None and (gen or process):
                    cid = dataclasses.replace(cid, generation=gen, process=process)
                self._cids[(cid_b, gen, process)] = cid
        return {"rank": int(rank_b) if rank_b is not None else None, "pid": int(key[1] or 0),
                "compile_id": cid}

    def _same_prefix(self, key: _Key, rec: _Record, word: bytes,
                     message: bytes, lineno: int) -> Iterable[ev.Event]:
        """A line repeating the open record's prefix: a continuation, or a new record that
        shares it (one-line records from one call site within the same millisecond)."""
        if is_start(word, message) and not (
                message.startswith(old.OLD_BREAK.encode()) and (
                    rec.handler is orphans.orphan_item or (
                        rec.kind == b"Graph" and rec.lines
                        and old.CONSIDER_RE.match(rec.lines[0].decode("utf-8", "replace"))))):
            # (the Tensor.item() warning's own "Graph break: from user code at:" continues it,
            # its first line cut too)
            out = list(self._close(key))
            common = rec.common if rec.common is not _NO_COMMON else self._common_of(rec.prefix)
            out += self._start(key, rec.prefix, message, lineno, common)
            return out
        if rec.mode == UNKNOWN:
            found = dde.events(message, rec.common, lineno, notes.in_recording(rec.prefix))
            if found:
                self.stats.recognized += 1
                self._dde_owned(rec.common, lineno)
                return found
            error = notes.recorded_error(rec.prefix, message, rec.common, lineno)
            if error is not None:  # (recording.py's traceback's exception: what raised)
                self.stats.recognized += 1
                return (error,)
            self.stats.unrecognized += 1
            return _NO_EVENTS
        self.stats.recognized += 1
        if rec.mode == TREE:
            return self._tree(rec, message, lineno)
        if rec.mode == COLLECT and len(rec.lines) < MAX_RECORD_LINES:
            rec.lines.append(message)
            if rec.handler is notes.deferred_backward:
                return self._deferred_dde(rec.common, message, lineno)
        elif rec.mode == FLAT:
            return self._flat(rec, message, lineno)
        return _NO_EVENTS

    def _flat(self, rec: _Record, message: bytes, lineno: int) -> Iterable[ev.Event]:
        """One guard of torch 2.1–2.3's flat list (``guards.flat_guard``)."""
        return self._guard(guards.flat_guard, rec, message, lineno)

    def _guard(self, read: Callable[[str, dict[str, Any]], ev.Event | None], rec: _Record,
               message: bytes, lineno: int) -> Iterable[ev.Event]:
        """The event of one guard line (tree or flat), a malformed one counted and skipped."""
        try:
            event = read(message.decode("utf-8", "replace"), {**rec.common, "line": lineno})
        except RECORD_ERRORS as exc:
            self._malformed(lineno, message, exc)
            return _NO_EVENTS
        return (event,) if event is not None else _NO_EVENTS

    def _common_of(self, prefix: bytes) -> dict[str, Any]:
        """Event fields from a prefix (for records whose fields were not built: silent ones)."""
        m = self._prefix_re.match(prefix)
        if m is None:  # pragma: no cover - prefixes come from a match
            return {}
        return self._common(m.group(_RANK, _PID), m.group(_CID))

    def _start(self, key: _Key, prefix: bytes, message: bytes,
               lineno: int, common: dict[str, Any]) -> Iterable[ev.Event]:
        common = {**common, "line": lineno}
        if message[:2] == b'{"' and is_trace_line(prefix + message):
            # a TORCH_TRACE record amid text (a trace pasted under words, a page of docs):
            # torch's, but a trace's, which the text reader does not read (ParseStats.seen);
            # its payload's lines under it too (textforeign)
            self.stats.recognized += 1
            self.stats.blank += 1
            self.stats.seen["trace-record"] = self.stats.seen.get("trace-record", 0) + 1
            self._open[key] = _Record(prefix, TRACE_KIND, UNKNOWN, None, common, message)
            return _NO_EVENTS
        self.stats.records += 1
        word = message.split(b" ", 1)[0].split(b"=", 1)[0]
        if not message or word == b"TREE_GUARD_MANAGER:":
            self.stats.recognized += 1
            self._open[key] = _Record(prefix, TREE_WORD, TREE, None, common, message)
            return _NO_EVENTS
        entry = KINDS.get(word) if is_start(word, message) else None
        if entry is None and notes.in_deferred_backward(prefix, message):
            # a line of AOTAutograd's suppressed-backward warning, its head before the paste
            # (pytorch#193693): that note, and a data-dependent error its traceback ends in
            self.stats.partial += 1
            self.stats.recognized += 1
            self._open[key] = _Record(prefix, b"", COLLECT, notes.deferred_backward, common,
                                      message)
            return self._deferred_dde(common, message, lineno)
        if entry is None or word == b"Could":  # (not a record of a kind torch names)
            found = dde.events(message, common, lineno, notes.in_recording(prefix))
            if found:  # a line of a data-dependent error: the rest of its record a traceback
                self.stats.recognized += 1
                self._open[key] = _Record(prefix, b"?", UNKNOWN, None, common, message)
                self._dde_owned(common, lineno)
                return found
        self._dde_seen = dde.FAR  # another record: a stack after it may be its own
        if entry is None and (prefix.endswith(b"[__guards] ") or b".__guards: [" in prefix):
            # torch 2.1–2.3 log their guards one per line, without a tree
            self.stats.recognized += 1
            rec = self._open[key] = _Record(prefix, b"?", FLAT, None, common, message)
            return self._flat(rec, message, lineno)
        if entry is None and TRITON_LOGGER in prefix and (
                prefix[:1] == b"E" or b"]:E" in prefix[:24] or message.startswith(TRITON_FAILED)):
            # a kernel Triton could not compile (textcrash; its head where the paste cut the
            # level letter, stand-in-preprocessor#10)
            entry = (triton_failed, True)
        if entry is None and (autotune.LOGGER in prefix or autotune.OLD_LOGGER in prefix):
            entry = (autotune.record, True)  # inductor's autotuning: its failed candidates
        if entry is None and message.startswith(notes.DEFERRED_BACKWARD):
            entry = (notes.deferred_backward, True)  # a backward compile torch suppressed
        if entry is None and message.startswith(notes.SHAPE_ENV_FAILED):
            entry = (notes.shape_env_failed, True)  # a ShapeEnv call that raised (recording.py)
        if entry is None and notes.is_note(message):
            entry = (notes.noted, False)  # torch's note: "Not enough SMs to use max_autotune_gemm"
        if word == b"speculate_subgraph:":
            self._speculated_at = lineno
        elif entry is None and self._speculated_at == lineno - 1 and HOP_LOGGER in prefix:
            # the exception torch logs right after its speculate_subgraph record (2.1-2.2's
            # log.exception, 2.15's log.info): what it could not trace, that record's own
            entry = (None, False)
        if entry is None and (b"_dynamo/exc.py:" in prefix or b"_dynamo\\exc.py:" in prefix):
            entry = (exc_warning, True)  # a graph break torch warned of (2.7-2.14)
        if entry is None and (b"__cudagraphs" in prefix or (
                b"__perf_hints" in prefix and b"cudagraph" in message)
                or message.startswith(cg.SKIP_HEADS_B)):
            # (a skip is a skip on any logger: torch 2.0 warned on torch._inductor.compile_fx)
            entry = (cg.text_record, True)  # CUDA-graph records: dyncli.logparse.cudagraphs
        if entry is None:
            if any(s in message for s in DYN_SOURCES):
                entry = (dynamic_sources, False)
            elif any(s in message for s in KNOWN_TEXT) or artifact(prefix) in DUMPS:
                entry = (None, False)
            elif notes.in_shape_env_failed(prefix, message):
                # a line of recording.py's record of a failed ShapeEnv call (its traceback),
                # the head before the paste: read on as that record's (its facts logged ones)
                self.stats.partial += 1
                self.stats.recognized += 1
                self._open[key] = _Record(prefix, b"?", UNKNOWN, None, common, message)
                error = notes.recorded_error(prefix, message, common, lineno)
                return _NO_EVENTS if error is None else (error,)
            elif (orphan := orphans.orphan(prefix, message)) is not None:
                # a line from inside a record whose first line the paste left out
                self.stats.partial += 1
                self.stats.recognized += 1
                rec = self._open[key] = _Record(prefix, b"", COLLECT, orphan, common, message)
                if self._stray is not None and orphan is orphans.orphan_limit:
                    rec.lines.insert(0, self._stray)  # its function line came just before
                self._stray = None
                return _NO_EVENTS
            else:
                self.stats.unread += 1
                self.stats.unrecognized += 1
                self._sample(lineno, message)
                self._open[key] = _Record(prefix, b"?", UNKNOWN, None, common, message)
                return _NO_EVENTS
        self.stats.recognized += 1
        handler, collect = entry
        mode = SILENT if handler is None else COLLECT if collect else FIRST
        self._open[key] = _Record(prefix, word, mode, handler, common, message)
        return _NO_EVENTS

    def _tree(self, rec: _Record, message: bytes, lineno: int) -> Iterable[ev.Event]:
        if b"TENSOR_MATCH:" not in message and b"LAMBDA_GUARD:" not in message \
                and b"_dynamo_static_indices" not in message:
            return _NO_EVENTS
        return self._guard(guards.tree_line, rec, message, lineno)

    def _deferred_dde(self, common: dict[str, Any], message: bytes,
                      lineno: int) -> Iterable[ev.Event]:
        """The data-dependent error a line of the suppressed-backward warning states (the
        backward compile's error, read as the same error is anywhere else), if it does."""
        found = dde.events(message, common, lineno)
        if found:
            self._dde_owned(common, lineno)
        return found

    def _close(self, key: _Key) -> Iterable[ev.Event]:
        rec = self._open.pop(key, None)
        if rec is None or rec.handler is None:
            return _NO_EVENTS
        try:
            out = rec.handler([b.decode("utf-8", "replace") for b in rec.lines], rec.common)
        except RECORD_ERRORS as exc:  # the one guard around a record: a counted skip
            self._malformed(rec.common["line"], rec.lines[0], exc)
            return _NO_EVENTS
        if rec.kind == b"Cache" and out:
            # compiled autograd's cache miss: logged before the capture it causes, without an
            # id; it waits for that capture's (_compile_seen), knowing the compile before it
            newest = self._newest.get(key[1])
            self._ca_waiting.setdefault(key[1], []).extend(
                dataclasses.replace(e, after=newest) for e in out
                if isinstance(e, ev.AutogradCacheMiss))
            return _NO_EVENTS
        if self._prefix_re is OLD_PREFIX_RE and rec.common.get("compile_id") is None and out:
            # torch 2.1/2.2 log "Recompiling" outside the compile it starts: it belongs to
            # the next compile id this process logs (see _compile_seen)
            self._waiting.setdefault(key[1], []).extend(out)
            return _NO_EVENTS
        return out

    def _sample(self, lineno: int, text: bytes) -> None:
        if self.stats.samples is None or len(self.stats.samples) < 5:
            self.stats.sample(lineno, text.decode("utf-8", "replace"))

    def _malformed(self, lineno: int, message: bytes, exc: Exception) -> None:
        self.stats.count(reason(exc))
        self.stats.malformed += 1
        self.stats.recognized -= 1
        self._sample(lineno, message)


def parse_lines(lines: Iterable[bytes], stats: ev.ParseStats | None = None) -> Iterator[ev.Event]:
    """Events of a TORCH_LOGS text log given as lines of bytes; counts go to ``stats``."""
    return TextLogParser(stats).parse(lines)

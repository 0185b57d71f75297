"""TORCH_LOGS text logs → events, streaming: lines (bytes) in, ``events`` out.

A *record* is one logging call: its first line plus the following lines that repeat the
exact same glog prefix (torch repeats the prefix on every line of a multi-line message).
Records are kept open per (rank, pid), so lines of other processes or threads interleaved
in between do not split them. Records are dispatched by the first word of their message
through ``KINDS``; kinds that only need their first line never hold more than it, the
guards tree is handled line by line, and only the few multi-line kinds (recompiles, graph
breaks, errors, recompile-limit warnings) keep their lines, capped at ``MAX_RECORD_LINES``.
So memory stays constant whatever the log size.

Nothing here raises on bad input: unknown kinds, non-glog lines and records that fail to parse
are counted in ``ParseStats`` (``unrecognized``/``malformed``); callers decide what is fatal
(``--strict``). No file IO and no torch: see ``dyncli.core.logsource`` for reading files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse import textmsg as msg
from dyncli.logparse.glog import GLOG_RE

MAX_RECORD_LINES = 2000
Handler = Callable[[list[str], dict[str, Any]], list[ev.Event]]

# first word of a record -> (handler or None = known but nothing to extract, collect lines?)
KINDS: dict[bytes, tuple[Handler | None, bool]] = {
    b"create_symbol": (msg.create_symbol, False),
    b"create_unbacked_symint": (msg.create_unbacked, False),
    b"create_unbacked_symfloat": (msg.create_unbacked, False),
    b"create_unbacked_symbool": (msg.create_unbacked, False),
    b"eval": (msg.guard_added, False),
    b"runtime_assert": (msg.guard_added, False),
    b"set_replacement": (msg.set_replacement, False),
    b"_update_var_to_range": (msg.var_to_range, False),
    b"marking": (msg.marking, False),
    b"Recompiling": (msg.recompiling, True),
    b"Graph": (msg.graph_break, True),
    b"torch._dynamo": (msg.recompile_limit, True),
    b"Error": (msg.constraint_violations, True),
    b"could": (msg.data_dependent, False),
    # known, nothing the diagnosis needs (recognized, not reported as unknown)
    **{word: (None, False) for word in (
        b"create_env", b"produce_guards", b"track_symint", b"track_symfloat", b"Skipping",
        b"lru_cache_stats", b"Guard", b"GUARDS:", b"Python", b"Created", b"compute_unbacked_bindings",
        b"constrain_symbol_range", b"Could", b"Ignored", b"symbol_guard_limit_before_specialize",
        b"add_backed_var_to_val", b"set_real_tensor_prop_unbacked_vals", b"automatic",
        b"runtime_asserts_frozen", b"SPECIALIZATION", b"Data", b"Stack", b"torchdynamo",
        b"Step", b"TRACE", b"Restarting", b"skipping:", b"create_unspecified_symbol",
        b"_update_version_counter", b"__guards",
    )},
}
# Kinds a continuation line may start: such a line begins a new record with the same prefix
# (two one-line records logged from the same line in the same microsecond look identical).
_TREE = b""  # the guards tree starts with an empty line or TREE_GUARD_MANAGER:
_DYN_SOURCES = (b" marked dynamic due to dynamic-sources entry", b" marked dynamic via dynamic-sources")
# Known records whose first word varies ("1 Warning only constraints violated").
_KNOWN_TEXT = (b" Warning only constraints violated", b" dim ", b" marked dynamic via dynamic-values")


def _kind(message: bytes) -> bytes:
    if not message:
        return _TREE
    word = message.split(b" ", 1)[0] or b" "  # b" ": an indented line, never a record start
    if word == b"Graph" and not message.startswith(b"Graph break"):
        return b"Graph Break Reason"  # a continuation, never a record start
    if word == b"TREE_GUARD_MANAGER:":
        return _TREE
    return word


class _Record:
    __slots__ = ("collect", "common", "handler", "kind", "lines", "prefix")

    def __init__(self, prefix: bytes, kind: bytes, handler: Handler | None,
                 common: dict[str, Any], first: bytes, collect: bool) -> None:
        self.prefix, self.kind, self.handler, self.common = prefix, kind, handler, common
        self.collect = collect
        self.lines: list[bytes] | None = [first] if (collect or handler is not None) else None


class TextLogParser:
    """Incremental parser: ``feed`` lines, iterate events; ``finish`` flushes open records."""

    def __init__(self, stats: ev.ParseStats | None = None) -> None:
        self.stats = stats if stats is not None else ev.ParseStats()
        self._open: dict[tuple[int | None, int], _Record] = {}
        self._pid_rank: dict[int, int] = {}
        self._cids: dict[bytes, ev.CompileId | None] = {}

    def parse(self, lines: Iterable[bytes], first_line: int = 1) -> Iterator[ev.Event]:
        """Parse every line (bytes, with or without line ends) and flush at the end."""
        stats = self.stats
        open_ = self._open
        last_prefix = b"\x00"
        last_key: tuple[int | None, int] = (None, 0)
        lineno = first_line - 1
        for raw in lines:
            lineno += 1
            stats.lines += 1
            stats.bytes += len(raw)
            raw = raw.rstrip(b"\r\n")
            if raw.startswith(last_prefix) and last_key in open_:
                # Fast path: same prefix as the previous line -> same process, same call site.
                yield from self._same_prefix(last_key, raw[len(last_prefix):], lineno)
                continue
            m = GLOG_RE.match(raw)
            if m is None:
                yield from self._foreign(raw, lineno)
                continue
            pid = int(m["pid"])
            rank: int | None
            if m["rank"] is not None:
                rank = self._pid_rank[pid] = int(m["rank"])
            else:
                rank = self._pid_rank.get(pid)  # e.g. atexit lines after destroy_process_group
            key = (rank, pid)
            prefix = raw[: m.end()]
            last_prefix, last_key = prefix, key
            rec = open_.get(key)
            if rec is not None and rec.prefix == prefix:
                # The same process's record resumes after lines of another process.
                yield from self._same_prefix(key, raw[m.end():], lineno)
                continue
            yield from self._close(key)
            cid_bytes = m["cid"]
            cid = None
            if cid_bytes is not None:
                if cid_bytes not in self._cids:
                    self._cids[cid_bytes] = ev.CompileId.parse(cid_bytes.decode())
                cid = self._cids[cid_bytes]
            message = raw[m.end():]
            common = {"rank": rank, "pid": pid, "compile_id": cid}
            yield from self._start(key, prefix, _kind(message), message, lineno, common)
        for key in list(open_):
            yield from self._close(key)

    def _same_prefix(self, key: tuple[int | None, int], message: bytes,
                     lineno: int) -> Iterator[ev.Event]:
        """A line repeating the open record's prefix: a continuation, or a new record that
        happens to share it (one-line records from one call site in the same microsecond)."""
        rec = self._open[key]
        kind = _kind(message)
        if kind in KINDS and kind != _TREE:
            yield from self._close(key)
            yield from self._start(key, rec.prefix, kind, message, lineno, rec.common)
        else:
            yield from self._continue(rec, message, lineno)

    def _start(self, key: tuple[int | None, int], prefix: bytes, kind: bytes, message: bytes,
               lineno: int, common: dict[str, Any]) -> Iterator[ev.Event]:
        common = {**common, "line": lineno}
        entry = KINDS.get(kind)
        if entry is None and kind != _TREE:
            if any(s in message for s in _DYN_SOURCES):
                entry = (msg.dynamic_sources, False)
            elif any(s in message for s in _KNOWN_TEXT):
                entry = (None, False)
            else:
                self.stats.unrecognized += 1
                self.stats.sample(lineno, message.decode("utf-8", "replace"))
                self._open[key] = _Record(prefix, b"?", None, common, message, False)
                return
        self.stats.recognized += 1
        handler, collect = entry if entry is not None else (None, False)
        rec = _Record(prefix, kind, handler, common, message, collect)
        self._open[key] = rec
        if kind == _TREE:
            yield from self._tree(rec, message, lineno)

    def _continue(self, rec: _Record, message: bytes, lineno: int) -> Iterator[ev.Event]:
        if rec.kind == b"?":
            self.stats.unrecognized += 1
            return
        self.stats.recognized += 1
        if rec.kind == _TREE:
            yield from self._tree(rec, message, lineno)
        elif rec.collect and rec.lines is not None and len(rec.lines) < MAX_RECORD_LINES:
            rec.lines.append(message)

    def _tree(self, rec: _Record, message: bytes, lineno: int) -> Iterator[ev.Event]:
        if b"TENSOR_MATCH:" in message or b"LAMBDA_GUARD:" in message:
            try:
                event = msg.tree_line(message.decode("utf-8", "replace"),
                                      {**rec.common, "line": lineno})
            except ValueError:
                self._malformed(lineno, message)
                return
            if event is not None:
                yield event

    def _close(self, key: tuple[int | None, int]) -> Iterator[ev.Event]:
        rec = self._open.pop(key, None)
        if rec is None or rec.handler is None or rec.lines is None:
            return
        try:
            events = rec.handler([b.decode("utf-8", "replace") for b in rec.lines], rec.common)
        except ValueError:
            self._malformed(rec.common["line"], rec.lines[0])
            return
        yield from events

    def _malformed(self, lineno: int, message: bytes) -> None:
        self.stats.malformed += 1
        self.stats.recognized -= 1
        self.stats.sample(lineno, message.decode("utf-8", "replace"))

    def _foreign(self, raw: bytes, lineno: int) -> Iterator[ev.Event]:
        """A line without a glog prefix: stdout noise, a Python traceback, a blank line."""
        if not raw.strip():
            self.stats.recognized += 1
            return
        self.stats.unrecognized += 1
        self.stats.sample(lineno, raw.decode("utf-8", "replace"))
        if b"as dynamic but your code specialized it" in raw:
            yield from msg.constraint_violations([raw.decode("utf-8", "replace")],
                                                 {"line": lineno})


def parse_lines(lines: Iterable[bytes], stats: ev.ParseStats | None = None) -> Iterator[ev.Event]:
    """Events of a TORCH_LOGS text log given as lines of bytes; counts go to ``stats``."""
    return TextLogParser(stats).parse(lines)

"""TORCH_TRACE structured traces (the files tlparse reads) → records, streaming and pure.

This module owns the reader: ``TraceParser``'s one loop over blocks of lines (a plain file's
blocks, or lines joined: :func:`blocks`), the envelope's JSON, the intern table, payload
verification and the two-process split (``feed_raw``/``cook``). Lines in, records out: it
opens nothing and starts no process (``dyncli.diagnose`` does both).
What a record is lives in ``dyncli.logparse.trace_format`` (the line format is described
there), the payload helpers in ``dyncli.logparse.trace_payload``.

``{"str": [path, index]}`` lines build the intern table that stack frames' integer
``filename`` fields refer to; they are consumed here, never yielded.

Speed matters more here than in the text parser: traces are mostly payloads (graphs, inductor
code, chromium events). Lines are handled as bytes, the kind is peeked without decoding, and
only kinds in ``keep`` are JSON-decoded; payloads are joined only for kinds in ``payloads``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dyncli.errors import StrictError
from dyncli.logparse import safe
from dyncli.logparse.glog import GLOG_RE
from dyncli.logparse.trace_format import (
    _SEP,
    DEFAULT_KEEP,
    DEFAULT_PAYLOADS,
    KNOWN_KINDS,
    PAYLOAD_ARTIFACTS,
    RawRecord,
    TraceRecord,
    TraceStats,
)
from dyncli.logparse.trace_payload import _join, _lines_holding

# A newline not followed by a tab: the end of a run of payload lines (the next line is an
# envelope, or the block ends).
_HEAD = re.compile(rb"\n(?!\t)")


class TraceParser:
    """Streaming trace parser. Feed it lines (bytes or str); it yields ``TraceRecord``s.

    ``strict`` turns malformed lines, unknown kinds and payload hash mismatches into
    ``StrictError``; ``verify`` checks every payload against its ``has_payload`` hash.
    """

    def __init__(self, source: str = "<trace>", *, strict: bool = False, verify: bool = False,
                 keep: frozenset[str] = DEFAULT_KEEP,
                 payloads: frozenset[str] = DEFAULT_PAYLOADS) -> None:
        self.source = source
        self.strict = strict
        self.verify = verify
        self.keep = keep
        self.payloads = payloads
        self.stats = TraceStats()
        self.strings: dict[int, str] = {}
        self._emitters: dict[tuple[Any, ...], str] = {}  # (file, line) -> "file:line"
        # kind -> test on the envelope's bytes: a record of that kind is decoded (and yielded)
        # only when it passes. A consumer installs these for records it would ignore anyway
        # (``TraceEventMapper``): what is never decoded is never checked either, like the
        # kinds outside ``keep``.
        self.wanted: dict[str, Callable[[bytes], bool]] = {}
        # kind -> test on the envelope's bytes: the payload of a record of that kind is kept
        # only when it passes (the record itself is decoded and yielded either way)
        self.payload_wanted: dict[str, Callable[[bytes], bool]] = {}
        # kind -> words: of that kind's payload only the lines holding one of them are kept
        # (a guards tree of thousands of lines, of which a consumer reads a dozen).
        self.payload_words: dict[str, tuple[bytes, ...]] = {}

    # ------------------------------------------------------------------ public

    def feed(self, lines: Iterable[bytes | str]) -> Iterator[TraceRecord]:
        """Parse ``lines`` (as a file's ``readline`` gives them) in order; records come out as
        soon as their payload has ended."""
        return self._feed_blocks(line_blocks(lines), raw=False)

    def feed_raw(self, lines: Iterable[bytes | str]) -> Iterator[RawRecord]:
        """``feed`` without its second half: the envelopes undecoded and ``str`` lines not
        interned, for :meth:`cook` to finish (in the process that maps the records, when
        ``dyncli.diagnose.trace_pipe`` splits the work)."""
        return self._feed_blocks(line_blocks(lines), raw=True)

    def feed_blocks(self, blocks: Iterable[bytes]) -> Iterator[TraceRecord]:
        """``feed`` over blocks of whole lines (a plain file read a block at a time, or lines
        joined: see :func:`blocks`): the same records and counts as ``feed`` over the lines."""
        return self._feed_blocks(blocks, raw=False)

    def feed_raw_blocks(self, blocks: Iterable[bytes]) -> Iterator[RawRecord]:
        """``feed_raw`` over blocks of whole lines."""
        return self._feed_blocks(blocks, raw=True)

    def _feed_blocks(self, blocks: Iterable[bytes], raw: bool) -> Iterator[Any]:
        """The one loop of the reader (``feed``, ``feed_raw``, ``feed_blocks``,
        ``feed_raw_blocks``): records of blocks of lines, payload lines skipped at C speed.

        A block is lines as ``readline(MAX_LINE)`` cuts them, each ending in a newline but
        perhaps the last (a piece of an over-long line, or the file's last line): the next
        block starts a new line. Most of a trace is payload lines; here a run of them costs a
        regex search (where does the next envelope start?) and a count of its newlines, and
        it is cut out of the block only when its record's payload is kept. Payloads are kept
        as runs of lines with their line count (``_join``'s ``nlines``). A payload line is
        legal only after an envelope; a chromium event is dropped as soon as its "name" line
        says it is not wanted; the line and payload-line counts are taken once at the end.
        ``tests/unit/test_trace_blocks.py`` checks that any cut of the same lines into blocks
        (a file's blocks, lines joined, one line a block) gives the same records, counts and
        errors.
        """
        stats = self.stats
        pending: tuple[int, bytes, str] | None = None
        chunks: list[bytes] | None = None  # runs of payload lines of ``pending`` when kept
        nl = 0  # lines in ``chunks``
        probe = False
        lineno = heads = 0  # lineno: the lines before the current one
        in_record = False
        finish = self._raw if raw else self._finish
        next_head = _HEAD.search
        kinds: dict[bytes, tuple[Any, ...]] = {}
        verify = self.verify
        for block in blocks:
            end = len(block)
            pos = 0
            while pos < end:
                if block[pos] == 9:  # a tab: a run of payload lines, up to the next envelope
                    m = next_head(block, pos)
                    stop = m.end() if m is not None else end
                    k = block.count(b"\n", pos, stop)
                    if stop == end and block[-1] != 10:
                        k += 1  # the block's last line has no newline
                    if chunks is not None:
                        chunks.append(block[pos:stop])
                        nl += k
                        if probe and nl >= 2:
                            probe = False
                            if not _wanted_chromium(_first_lines(chunks, 2, nl)):
                                pending, chunks = None, None
                    elif not in_record:
                        for i in range(1, k + 1):
                            self._malformed(lineno + i, "payload line without an envelope")
                    lineno += k
                    pos = stop
                    continue
                stop = block.find(b"\n", pos) + 1 or end
                stripped = block[pos:stop].rstrip(b"\r\n")
                pos = stop
                lineno += 1
                heads += 1
                in_record = False
                if pending is not None:
                    record = finish(*pending, chunks, nl)
                    pending, chunks = None, None
                    if record is not None:
                        yield record
                if not stripped:
                    continue
                # peek_kind, with the few kinds a trace has decoded once
                cut = stripped.find(b"] {")
                kind_end = stripped.find(b'"', cut + 4) if stripped[cut + 3:cut + 4] == b'"' else -1
                if cut < 0 or kind_end < 0:
                    self._malformed(lineno, "not a trace line")
                    continue
                raw_kind = stripped[cut + 4:kind_end]
                # what is asked of each kind (known? read? filtered? payload kept?), asked
                # once per kind: the filters are installed before the feeding starts
                info = kinds.get(raw_kind)
                if info is None:
                    info = self._kind_info(raw_kind.decode("utf-8", "replace"))
                    if len(kinds) < 256:  # hostile: a new kind per line; stay bounded
                        kinds[raw_kind] = info
                kind, read, wanted, payload_kind, payload_test, known = info
                in_record = True
                stats.kinds[kind] += 1
                if not known:
                    self._unknown(lineno, kind)
                if kind == "str":
                    if raw:
                        yield lineno, stripped, kind, None
                    else:
                        self._intern(lineno, stripped)
                    continue
                if not read or (wanted is not None and not wanted(stripped)):
                    if verify:
                        pending, chunks, nl, probe = (lineno, stripped, ""), [], 0, False
                    continue
                probe = kind == "chromium_event" and not verify
                if probe and _chromium_skipped(block, pos):
                    continue  # what the probe below decides, decided here: dropped
                pending = (lineno, stripped, kind)
                keep_payload = payload_kind and (payload_test is None or payload_test(stripped))
                chunks, nl = ([], 0) if keep_payload or verify else (None, 0)
        stats.lines += lineno
        stats.payload_lines += lineno - heads
        if pending is not None:
            record = finish(*pending, chunks, nl)
            if record is not None:
                yield record

    def _kind_info(self, kind: str) -> tuple[Any, ...]:
        """(kind, decoded?, its filter, payload kept?, its payload filter, known?)."""
        return (kind, kind in self.keep, self.wanted.get(kind), kind in self.payloads,
                self.payload_wanted.get(kind), kind in KNOWN_KINDS)

    def filename(self, index: Any) -> str | None:
        """The path an interned ``filename`` integer stands for (None when unknown)."""
        if isinstance(index, int):
            return self.strings.get(index)
        return index if isinstance(index, str) else None

    # ----------------------------------------------------------------- helpers

    def malformed(self, lineno: int, why: str) -> None:
        """Count a line or record that does not fit (``StrictError`` when strict)."""
        self._malformed(lineno, why)

    def _malformed(self, lineno: int, why: str) -> None:
        self.stats.malformed += 1
        self.stats.reasons[why] += 1
        if len(self.stats.samples) < 5:
            self.stats.samples.append((lineno, why))
        if self.strict:
            raise StrictError(f"{self.source}:{lineno}: {why}")

    def _unknown(self, lineno: int, kind: str) -> None:
        self.stats.unknown[kind] += 1
        if len(self.stats.samples) < 5:
            self.stats.samples.append((lineno, f"unknown event kind {kind!r}"))
        if self.strict:
            raise StrictError(f"{self.source}:{lineno}: unknown trace event kind {kind!r}")

    def _envelope(self, lineno: int, line: bytes) -> tuple[dict[str, Any], bytes] | None:
        cut = line.find(_SEP)
        try:
            env = _loads(line[cut + 2:])
        except ValueError:
            self._malformed(lineno, "envelope is not valid JSON")
            return None
        if not isinstance(env, dict) or not env:
            self._malformed(lineno, "envelope is not a JSON object")
            return None
        return env, line[:cut]

    def _intern(self, lineno: int, line: bytes) -> None:
        plain = _PLAIN_STR.match(line, line.find(_SEP) + 2)
        if plain is not None:  # most entries: what json.loads would make of them, at once
            try:
                self.strings[int(plain[2])] = plain[1].decode("utf-8", "surrogatepass")
                return
            except UnicodeDecodeError:
                pass  # json.loads fails on it too: counted below
        parsed = self._envelope(lineno, line)
        if parsed is None:
            return
        value = parsed[0].get("str")
        if (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
                and safe.json_int(value[1]) is not None):
            self.strings[value[1]] = value[0]
        else:
            self._malformed(lineno, "bad string-table entry")

    def _finish(self, lineno: int, line: bytes, kind: str, chunks: list[bytes] | None,
                nlines: int | None = None) -> TraceRecord | None:
        """The record of an envelope and its payload lines; ``kind`` "" = only verify it.
        ``nlines``: the block reader's runs of lines, and how many lines they hold."""
        parsed = self._envelope(lineno, line)
        if parsed is None:
            return None
        env, prefix = parsed
        if self.verify and chunks is not None:
            self._verify(lineno, env, chunks, nlines)
        if not kind:
            return None
        meta = _meta(env, kind)
        payload = None
        if chunks is not None and self._wants_payload(kind, meta, chunks, nlines):
            payload = self._payload(kind, chunks, nlines)
        return self._record(lineno, kind, env, prefix, meta, payload)

    def _payload(self, kind: str, chunks: list[bytes], nlines: int | None = None) -> str:
        words = self.payload_words.get(kind)
        return (_lines_holding(chunks, words, nlines) if words is not None
                else _join(chunks, b"\r\n", nlines).decode("utf-8", "replace"))

    def _record(self, lineno: int, kind: str, env: dict[str, Any], prefix: bytes,
                meta: dict[str, Any], payload: str | None,
                signature: Any = None) -> TraceRecord | None:
        head = GLOG_RE.match(prefix + b"]")
        if head is None:
            self._malformed(lineno, "no glog prefix before the JSON envelope")
            return None
        self.stats.records += 1
        get = env.get
        rank = _int(get("rank"))
        if rank is not None:
            self.stats.ranks.add(rank)
        where = head.group("file", "lineno")
        emitter = self._emitters.get(where)
        if emitter is None:  # the same few emitting lines of torch, record after record
            if len(self._emitters) > 4096:  # hostile: a new one per record; stay bounded
                self._emitters.clear()
            emitter = self._emitters[where] = (
                f"{where[0].decode('utf-8', 'replace')}:{where[1].decode()}")
        attempt = get("attempt")
        return TraceRecord(
            line=lineno, kind=kind, meta=meta,
            # "MMDD hh:mm:ss.ffffff": the date, one space, the time (GLOG_RE)
            timestamp=prefix[head.start("date"):head.end("time")].decode(),
            pid=int(head["pid"]),  # at most 20 digits (GLOG_RE)
            emitter=emitter,
            frame_id=_int(get("frame_id")),
            frame_compile_id=_int(get("frame_compile_id")),
            attempt=(_int(attempt) or 0) if attempt is not None else 0,
            compiled_autograd_id=_int(get("compiled_autograd_id")),
            rank=rank, payload=payload, envelope=env, signature=signature,
        )

    # ------------------------------------------------- split across two processes

    def _raw(self, lineno: int, line: bytes, kind: str, chunks: list[bytes] | None,
             nlines: int | None = None) -> RawRecord | None:
        """``feed_raw``'s record: the envelope still undecoded, the payload already joined
        (for an artifact, whatever its name: its name is in the envelope)."""
        if not kind:
            return None
        payload = None
        if chunks is not None and (kind != "chromium_event"
                                   or _wanted_chromium(_first_lines(chunks, 3, nlines))):
            payload = self._payload(kind, chunks, nlines)
        return lineno, line, kind, payload

    def cook(self, raw: RawRecord, signature: Any = None) -> TraceRecord | None:
        """The record (or intern-table entry: None) of a ``feed_raw`` item, as ``feed`` would
        have made it: the second half of the work, done by the process that maps records.
        ``signature``: a ``dynamo_output_graph``'s, made by the parsing child."""
        lineno, line, kind, payload = raw
        if kind == "str":
            self._intern(lineno, line)
            return None
        wanted = self.wanted.get(kind)
        if wanted is not None and not wanted(line):  # this side's filters may know more
            return None
        parsed = self._envelope(lineno, line)
        if parsed is None:
            return None
        env, prefix = parsed
        meta = _meta(env, kind)
        if kind == "artifact" and not self._wants_payload(kind, meta, []):
            payload = None
        return self._record(lineno, kind, env, prefix, meta, payload, signature)

    def _verify(self, lineno: int, env: dict[str, Any], chunks: list[bytes],
                nlines: int | None = None) -> None:
        """Check a payload against its envelope's ``has_payload``.

        torch (``trace_structured`` in torch/_logging/_internal.py, 2.3-2.15) hashes the
        payload string, UTF-8 encoded, with md5, and writes it as ``"\\n\\t" + line`` for each
        of its lines: the payload is the payload lines without their tab, joined by
        newlines. A record with payload lines and no hash, or a hash and no payload lines,
        is a mismatch too.
        """
        expected = env.get("has_payload")
        if expected is None and not chunks:
            return
        payload = _join(chunks, b"\n", nlines)
        import hashlib  # here: only --strict hashes payloads (and it costs start-up)

        digest = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        if digest != expected or not chunks:
            self.stats.payload_mismatch += 1
            if self.strict:
                raise StrictError(f"{self.source}:{lineno}: payload does not match its "
                                  "has_payload hash (md5)")

    @staticmethod
    def _wants_payload(kind: str, meta: dict[str, Any], chunks: list[bytes],
                       nlines: int | None = None) -> bool:
        if kind == "artifact":
            name = meta.get("name")
            return isinstance(name, str) and name in PAYLOAD_ARTIFACTS
        if kind == "chromium_event":
            return _wanted_chromium(_first_lines(chunks, 3, nlines))
        return True


# A string-table entry as torch writes it, with a plain string (no escape, no control
# character) and a small index: ``{"str": ["/path/file.py", 12]}``.
_PLAIN_STR = re.compile(rb'\{"str": \["([^"\\\x00-\x1f]*)", (0|[1-9][0-9]{0,17})\]\}\Z')
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner
# what _wanted_chromium looks for, as one search
_NAMES_RE = re.compile(rb'"name": "(?:pgo\.dynamic_whitelist|automatic_dynamic|CUDAGraphNode\.record)"')


def _loads(envelope: bytes) -> Any:
    """``safe.loads`` of an envelope (``{"`` and on: ``peek_kind`` saw them), without the
    steps ``json.loads`` takes for any input: the encoding is UTF-8 (as ``json.loads`` decides
    for bytes that start so), the value an object. Raises only ``ValueError`` as well."""
    if not envelope.startswith(b'{"'):
        return safe.loads(envelope)
    try:
        text = envelope.decode("utf-8", "surrogatepass")
        value, end = _SCAN(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if end != len(text) and text[end:].strip(" \t\n\r"):
        raise ValueError("extra data after the JSON value")
    return value


def _chromium_skipped(block: bytes, at: int) -> bool:
    """Whether the chromium event whose payload starts at ``at`` in ``block`` is one the
    probe drops: its first two payload lines are in the block and name neither wanted event."""
    if block[at:at + 1] != b"\t":
        return False
    second = block.find(b"\n", at) + 1
    if not second or block[second:second + 1] != b"\t":
        return False
    end = block.find(b"\n", second)
    return end >= 0 and _NAMES_RE.search(block, at, end) is None


def _first_lines(chunks: list[bytes], k: int, nlines: int | None) -> list[bytes]:
    """The first ``k`` lines of a payload: of its lines, or (``nlines`` given) of the block
    reader's runs of lines."""
    if nlines is None:
        return chunks[:k]
    out: list[bytes] = []
    for run in chunks:
        start = 0
        while len(out) < k:
            at = run.find(b"\n", start)
            if at < 0:
                if start < len(run):
                    out.append(run[start:])
                break
            out.append(run[start:at + 1])
            start = at + 1
        if len(out) >= k:
            break
    return out


def blocks(parts: Iterable[bytes | Iterable[bytes | str]]) -> Iterator[bytes]:
    """Blocks for :meth:`TraceParser.feed_blocks` from an input's parts (``Source.parts()``):
    blocks of whole lines as they are, iterables of lines joined (:func:`line_blocks`)."""
    for part in parts:
        if isinstance(part, bytes):
            yield part
        else:
            yield from line_blocks(part)


LINE_BLOCK = 256 << 10  # bytes of lines joined into one block


def line_blocks(lines: Iterable[bytes | str]) -> Iterator[bytes]:
    """Lines (as ``readline`` gives them; ``str`` encoded) joined into blocks of about
    ``LINE_BLOCK`` bytes, without adding or removing a byte: a line that does not end in a
    newline (a piece of a line cut at ``MAX_LINE``, the last line, a line given without its
    end) ends its block, so the next block starts a new line, as the next ``readline`` does.
    (An empty item is no line; a newline inside an item ends a line there.)"""
    buf: list[bytes] = []
    size = 0
    for line in _as_bytes(lines):
        buf.append(line)
        size += len(line)
        if size >= LINE_BLOCK or line[-1:] != b"\n":
            yield b"".join(buf)
            buf, size = [], 0
    if buf:
        yield b"".join(buf)


def _as_bytes(lines: Iterable[bytes | str]) -> Iterable[bytes]:
    """Bytes lines as they are (the fast path: files opened "rb"); str lines encoded."""
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return ()
    if isinstance(first, bytes):
        return itertools.chain((first,), it)  # type: ignore[arg-type]
    return (x.encode("utf-8", "surrogateescape") if isinstance(x, str) else x
            for x in itertools.chain((first,), it))


def _meta(env: dict[str, Any], kind: str) -> dict[str, Any]:
    meta = env.get(kind)
    return meta if isinstance(meta, dict) else {"value": meta}


def _wanted_chromium(chunks: list[bytes]) -> bool:
    """Chromium events are thousands of timings; only PGO's allow-list, automatic-dynamic
    marks and CUDA-graph recordings matter. torch writes the event with indent=0, so "name" is
    the payload's 2nd line."""
    return any(_NAMES_RE.search(c) is not None for c in chunks[:3])


_int = safe.json_int

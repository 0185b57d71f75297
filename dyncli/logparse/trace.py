"""TORCH_TRACE structured traces (the files tlparse reads) → records, streaming and pure.

This module owns the reader: ``TraceParser``'s one loop over the lines, the envelope's JSON,
the intern table, payload verification and the two-process split (``feed_raw``/``cook``).
What a record is lives in ``dyncli.logparse.trace_format`` (the line format is described
there), the payload helpers in ``dyncli.logparse.trace_payload``.

``{"str": [path, index]}`` lines build the intern table that stack frames' integer
``filename`` fields refer to; they are consumed here, never yielded.

Speed matters more here than in the text parser: traces are mostly payloads (graphs, inductor
code, chromium events). Lines are handled as bytes, the kind is peeked without decoding, and
only kinds in ``keep`` are JSON-decoded; payloads are joined only for kinds in ``payloads``.
"""

from __future__ import annotations

import hashlib
import itertools
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
    peek_kind,
)
from dyncli.logparse.trace_payload import _join, _lines_holding


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
        """Parse ``lines`` in order; records come out as soon as their payload has ended."""
        return self._feed(lines, raw=False)

    def feed_raw(self, lines: Iterable[bytes | str]) -> Iterator[RawRecord]:
        """``feed`` without its second half: the envelopes undecoded and ``str`` lines not
        interned, for :meth:`cook` to finish (in the process that maps the records, when
        ``dyncli.diagnose.trace_pipe`` splits the work)."""
        return self._feed(lines, raw=True)

    def _feed(self, lines: Iterable[bytes | str], raw: bool) -> Iterator[Any]:
        """The one loop of ``feed`` and ``feed_raw``.

        The loop is the hot path (traces are mostly payload lines): a payload line costs one
        slice test, and is appended only when its record's payload is kept; the line and
        payload-line counts are taken once at the end, not per line.
        """
        stats = self.stats
        pending: tuple[int, bytes, str] | None = None  # (line no, envelope line, kind)
        chunks: list[bytes] | None = None  # payload lines of ``pending`` when kept
        probe = False  # a chromium event: drop it once its "name" line says it is not wanted
        lineno = heads = 0
        in_record = False  # payload lines are legal only after an envelope
        finish = self._raw if raw else self._finish
        for lineno, line in enumerate(_as_bytes(lines), 1):
            if line[:1] == b"\t":
                if chunks is not None:
                    chunks.append(line)
                    if probe and len(chunks) == 2:
                        probe = False
                        if not _wanted_chromium(chunks):
                            pending, chunks = None, None
                elif not in_record:
                    self._malformed(lineno, "payload line without an envelope")
                continue
            heads += 1
            in_record = False
            if pending is not None:
                record = finish(*pending, chunks)
                pending, chunks = None, None
                if record is not None:
                    yield record
            stripped = line.rstrip(b"\r\n")
            if not stripped:
                continue
            kind = peek_kind(stripped)
            if kind is None:
                self._malformed(lineno, "not a trace line")
                continue
            in_record = True
            stats.kinds[kind] += 1
            if kind not in KNOWN_KINDS:
                self._unknown(lineno, kind)
            if kind == "str":
                if raw:
                    yield lineno, stripped, kind, None
                else:
                    self._intern(lineno, stripped)
                continue
            wanted = self.wanted.get(kind)
            if kind not in self.keep or (wanted is not None and not wanted(stripped)):
                if self.verify:  # --strict checks every payload, kept or not
                    pending, chunks, probe = (lineno, stripped, ""), [], False
                continue
            pending = (lineno, stripped, kind)
            keep_payload = kind in self.payloads and (
                (test := self.payload_wanted.get(kind)) is None or test(stripped))
            chunks = [] if keep_payload or self.verify else None
            probe = kind == "chromium_event" and not self.verify
        stats.lines += lineno
        stats.payload_lines += lineno - heads
        if pending is not None:
            record = finish(*pending, chunks)
            if record is not None:
                yield record

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
            env = safe.loads(line[cut + 2:])
        except ValueError:
            self._malformed(lineno, "envelope is not valid JSON")
            return None
        if not isinstance(env, dict) or not env:
            self._malformed(lineno, "envelope is not a JSON object")
            return None
        return env, line[:cut]

    def _intern(self, lineno: int, line: bytes) -> None:
        parsed = self._envelope(lineno, line)
        if parsed is None:
            return
        value = parsed[0].get("str")
        if (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
                and safe.json_int(value[1]) is not None):
            self.strings[value[1]] = value[0]
        else:
            self._malformed(lineno, "bad string-table entry")

    def _finish(self, lineno: int, line: bytes, kind: str,
                chunks: list[bytes] | None) -> TraceRecord | None:
        """The record of an envelope and its payload lines; ``kind`` "" = only verify it."""
        parsed = self._envelope(lineno, line)
        if parsed is None:
            return None
        env, prefix = parsed
        if self.verify and chunks is not None:
            self._verify(lineno, env, chunks)
        if not kind:
            return None
        meta = _meta(env, kind)
        payload = None
        if chunks is not None and self._wants_payload(kind, meta, chunks):
            payload = self._payload(kind, chunks)
        return self._record(lineno, kind, env, prefix, meta, payload)

    def _payload(self, kind: str, chunks: list[bytes]) -> str:
        words = self.payload_words.get(kind)
        return (_lines_holding(chunks, words) if words is not None
                else _join(chunks, b"\r\n").decode("utf-8", "replace"))

    def _record(self, lineno: int, kind: str, env: dict[str, Any], prefix: bytes,
                meta: dict[str, Any], payload: str | None) -> TraceRecord | None:
        head = GLOG_RE.match(prefix + b"]")
        if head is None:
            self._malformed(lineno, "no glog prefix before the JSON envelope")
            return None
        self.stats.records += 1
        rank = _int(env.get("rank"))
        if rank is not None:
            self.stats.ranks.add(rank)
        return TraceRecord(
            line=lineno, kind=kind, meta=meta,
            timestamp=f"{head['date'].decode()} {head['time'].decode()}",
            pid=int(head["pid"]),  # at most 20 digits (GLOG_RE)
            emitter=f"{head['file'].decode('utf-8', 'replace')}:{head['lineno'].decode()}",
            frame_id=_int(env.get("frame_id")),
            frame_compile_id=_int(env.get("frame_compile_id")),
            attempt=_int(env.get("attempt")) or 0,
            compiled_autograd_id=_int(env.get("compiled_autograd_id")),
            rank=rank, payload=payload, envelope=env,
        )

    # ------------------------------------------------- split across two processes

    def _raw(self, lineno: int, line: bytes, kind: str,
             chunks: list[bytes] | None) -> RawRecord | None:
        """``feed_raw``'s record: the envelope still undecoded, the payload already joined
        (for an artifact, whatever its name: its name is in the envelope)."""
        if not kind:
            return None
        payload = None
        if chunks is not None and (kind != "chromium_event" or _wanted_chromium(chunks)):
            payload = self._payload(kind, chunks)
        return lineno, line, kind, payload

    def cook(self, raw: RawRecord) -> TraceRecord | None:
        """The record (or intern-table entry: None) of a ``feed_raw`` item, as ``feed`` would
        have made it: the second half of the work, done by the process that maps records."""
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
        return self._record(lineno, kind, env, prefix, meta, payload)

    def _verify(self, lineno: int, env: dict[str, Any], chunks: list[bytes]) -> None:
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
        payload = _join(chunks, b"\n")
        digest = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        if digest != expected or not chunks:
            self.stats.payload_mismatch += 1
            if self.strict:
                raise StrictError(f"{self.source}:{lineno}: payload does not match its "
                                  "has_payload hash (md5)")

    @staticmethod
    def _wants_payload(kind: str, meta: dict[str, Any], chunks: list[bytes]) -> bool:
        if kind == "artifact":
            name = meta.get("name")
            return isinstance(name, str) and name in PAYLOAD_ARTIFACTS
        if kind == "chromium_event":
            return _wanted_chromium(chunks)
        return True


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
    """Chromium events are thousands of timings; only PGO's allow-list and automatic-dynamic
    marks matter. torch writes the event with indent=0, so "name" is the payload's 2nd line."""
    for c in chunks[:3]:
        if b'"name": "pgo.dynamic_whitelist"' in c or b'"name": "automatic_dynamic"' in c:
            return True
    return False


def _int(value: Any) -> int | None:
    return safe.json_int(value)

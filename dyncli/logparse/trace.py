"""TORCH_TRACE structured traces (the files tlparse reads) → records, streaming and pure.

One trace line, as torch 2.14 writes it (``TorchLogsFormatter(trace=True)`` in
torch/_logging/_internal.py)::

    V1122 01:19:01.836000 4440 torch/_dynamo/convert_frame.py:304] {"dynamo_start": {...}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    \t<payload line>           one per payload line; md5(payload) is the envelope's has_payload

The envelope's first key is the event kind, its value the metadata; ``frame_id``,
``frame_compile_id``, ``attempt``, ``compiled_autograd_id`` and ``rank`` sit beside it.
``{"str": [path, index]}`` lines build the intern table that stack frames' integer
``filename`` fields refer to; they are consumed here, never yielded.

Speed matters more here than in the text parser: traces are mostly payloads (graphs, inductor
code, chromium events). Lines are handled as bytes, the kind is peeked without decoding, and
only kinds in ``keep`` are JSON-decoded; payloads are joined only for kinds in ``payloads``.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dyncli.errors import StrictError
from dyncli.logparse import safe
from dyncli.logparse.glog import GLOG_RE

# Every kind torch 2.3–2.15 is known to emit. Anything else is counted as unknown, not fatal.
KNOWN_KINDS: frozenset[str] = frozenset({
    "str", "dynamo_start", "compilation_metrics", "compilation_metrics_runtime",
    "bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics",
    "symbolic_shape_specialization", "guard_added", "guard_added_fast", "create_symbol",
    "create_unbacked_symbol", "propagate_real_tensors", "expression_created", "missing_fake_kernel",
    "mismatched_fake_kernel", "artifact", "dynamo_output_graph", "dynamo_cpp_guards_str",
    "dynamo_guards", "chromium_event", "describe_storage", "describe_tensor", "describe_source",
    "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph",
    "inductor_output_code", "inductor_pre_grad_graph", "inductor_post_grad_graph",
    "optimize_ddp_split_graph", "optimize_ddp_split_child", "compiled_autograd_graph",
    "dump_file", "link", "exported_program", "graph_dump", "stack", "optimus",
    "inductor_provenance_tracking_node_mappings", "guard_on_data_dependent_error",
    "propagate_real_tensors_provenance",
})

# Kinds whose envelope dyncli decodes (the rest are only counted).
DEFAULT_KEEP: frozenset[str] = frozenset({
    "dynamo_start", "compilation_metrics", "symbolic_shape_specialization", "guard_added",
    "guard_added_fast", "create_symbol", "create_unbacked_symbol", "artifact",
    "dynamo_output_graph", "dynamo_cpp_guards_str", "chromium_event", "describe_tensor",
    "describe_source",
})

# Kinds whose payload is joined and kept. Artifacts are filtered again by name.
DEFAULT_PAYLOADS: frozenset[str] = frozenset({
    "artifact", "dynamo_output_graph", "dynamo_cpp_guards_str", "chromium_event",
})
PAYLOAD_ARTIFACTS: frozenset[str] = frozenset({
    "recompile_reasons", "dynamo_graph_break_reason", "get_local_code_state",
    "put_local_code_state", "get_remote_code_state", "put_remote_code_state",
    "get_extra_remote_code_state",
})

_SEP = b"] {"


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One envelope line of a trace, with its joined payload when it was kept."""

    line: int
    kind: str
    meta: dict[str, Any]
    timestamp: str
    pid: int
    emitter: str
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0
    compiled_autograd_id: int | None = None
    rank: int | None = None
    payload: str | None = None
    envelope: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def compile_id(self) -> str | None:
        """``0/1``, ``0/1_2`` for restart attempts, ``!3/0/1`` under compiled autograd."""
        return format_compile_id(self.frame_id, self.frame_compile_id, self.attempt,
                                 self.compiled_autograd_id)


def format_compile_id(frame_id: int | None, frame_compile_id: int | None, attempt: int = 0,
                      compiled_autograd_id: int | None = None) -> str | None:
    """Format a compile id the way torch's ``CompileId``/``TraceId`` ``__str__`` does."""
    if frame_id is None or frame_compile_id is None:
        if compiled_autograd_id is None:
            return None
        return f"!{compiled_autograd_id}"
    base = f"{frame_id}/{frame_compile_id}"
    if compiled_autograd_id is not None:
        base = f"!{compiled_autograd_id}/{base}"
    return f"{base}_{attempt}" if attempt else base


# (line number, envelope line, kind, joined payload or None): a record ``cook`` finishes
RawRecord = tuple[int, bytes, str, "str | None"]


@dataclass
class TraceStats:
    """What the parser saw. ``unknown`` and ``malformed`` are counts, never errors (unless strict)."""

    lines: int = 0
    records: int = 0
    payload_lines: int = 0
    malformed: int = 0
    payload_mismatch: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    ranks: set[int] = field(default_factory=set)
    samples: list[tuple[int, str]] = field(default_factory=list)  # first bad lines, for --verbose
    reasons: Counter[str] = field(default_factory=Counter)  # malformed lines and records, by why

    @property
    def recognized(self) -> int:
        """Lines belonging to a record of a known kind (payload lines included)."""
        return self.lines - self.unrecognized

    @property
    def unrecognized(self) -> int:
        """Malformed lines plus envelopes of kinds dyncli does not know."""
        return self.malformed + sum(self.unknown.values())


def peek_kind(line: bytes) -> str | None:
    """The event kind of an envelope line without decoding its JSON, or None if not one."""
    cut = line.find(_SEP)
    if cut < 0 or line[cut + 3:cut + 4] != b'"':
        return None
    end = line.find(b'"', cut + 4)
    if end < 0:
        return None
    return line[cut + 4:end].decode("utf-8", "replace")


def is_trace_line(line: bytes | str) -> bool:
    """True when ``line`` looks like a trace envelope (glog prefix followed by a JSON object)."""
    raw = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return (GLOG_RE.match(raw) is not None and peek_kind(raw) is not None
            and raw.rstrip(b"\r\n").endswith(b"}"))


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


def _join(chunks: list[bytes], strip: bytes) -> bytes:
    """A record's payload: its payload lines without their tab and line end (``strip``: the
    line-end bytes to cut), joined by newlines.

    Done on the whole payload at once (one join, one replace) when every line ends in exactly
    one newline and no ``\\r`` is about, else line by line.
    """
    if not chunks:
        return b""
    joined = b"".join(chunks)
    n = joined.count(b"\n")
    whole = n == len(chunks) or (n == len(chunks) - 1 and not chunks[-1].endswith(b"\n"))
    if whole and (strip == b"\n" or b"\r" not in joined):
        return joined[1:].replace(b"\n\t", b"\n").removesuffix(b"\n")
    return b"\n".join(c[1:].rstrip(strip) for c in chunks)


def _lines_holding(chunks: list[bytes], words: tuple[bytes, ...]) -> str:
    """The lines of a payload (as ``str.splitlines`` cuts the joined payload) that hold one of
    ``words`` (ASCII), joined by newlines; found with ``bytes.find`` on the joined lines, so
    the thousands of lines without them cost no Python step each."""
    joined = b"".join(chunks)
    n = joined.count(b"\n")
    if not (n == len(chunks) or (n == len(chunks) - 1 and not chunks[-1].endswith(b"\n"))):
        # lines without their line end (pieces of an over-long line, lines given in a list)
        text = _join(chunks, b"\r\n").decode("utf-8", "replace")
        return "\n".join(x for x in text.splitlines() if any(w.decode() in x for w in words))
    spans = set()
    for word in words:
        at = joined.find(word)
        while at >= 0:
            end = joined.find(b"\n", at)
            end = len(joined) if end < 0 else end
            spans.add((joined.rfind(b"\n", 0, at) + 1, end))
            at = joined.find(word, end)
    texts = []
    for start, end in sorted(spans):
        # one payload line: its tab off, its line end cut as _join does; then the cuts
        # str.splitlines makes inside it (\r, \f, \x1c…) and only the parts with a word
        line = joined[start + 1:end].rstrip(b"\r\n").decode("utf-8", "replace")
        texts += [x for x in line.splitlines() if any(w.decode() in x for w in words)]
    return "\n".join(texts)


def _wanted_chromium(chunks: list[bytes]) -> bool:
    """Chromium events are thousands of timings; only PGO's allow-list and automatic-dynamic
    marks matter. torch writes the event with indent=0, so "name" is the payload's 2nd line."""
    for c in chunks[:3]:
        if b'"name": "pgo.dynamic_whitelist"' in c or b'"name": "automatic_dynamic"' in c:
            return True
    return False


def _int(value: Any) -> int | None:
    return safe.json_int(value)


def decode_recompile_reasons(payload: str) -> list[str]:
    """The reasons of a ``recompile_reasons`` artifact.

    torch (guards.py, 2.5–2.14) logs ``reasons[0] if len(reasons) == 1 else reasons`` with
    encoding "json": one reason arrives as raw text, several as a JSON list.
    """
    text = payload.strip()
    if text.startswith("["):
        try:
            value = safe.loads(text)
        except ValueError:
            return [text]
        if isinstance(value, list):
            return [v if isinstance(v, str) else safe.short(v, 200) for v in value]
    if text.startswith('"'):
        try:
            return [str(safe.loads(text))]
        except ValueError:
            pass
    return [text] if text else []

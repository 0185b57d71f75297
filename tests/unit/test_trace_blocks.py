"""The trace reader's one loop gives the same records however the lines are cut into blocks.

A plain file is read in blocks (``Source.parts()``: 256 KB, completed to a line end);
a gzip file or stdin comes line by line (``Source.lines()``), and ``feed`` joins those lines
into blocks (``line_blocks``). Both must yield the same records (every field, the decoded
envelope too), the same intern table, the same counts and samples, and the same first error
under ``--strict``. Checked on every recorded trace in tests/data (all torch releases), with
and without the mapper's filters, cooked and raw (the parsing child's half), and on damaged
copies read with tiny blocks and a tiny line cap, so that every block boundary, over-long
line piece, CRLF, blank line, stray payload line and truncation meets the loop somewhere.

A line cut at ``MAX_LINE`` has no newline: joining lines must neither add one (that would
change a cut payload's text and its ``--strict`` hash) nor glue the next piece to it; the
cut-line tests below pin what the reader makes of it, the same from a plain file and from
a gzip stream.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from dyncli import inputs
from dyncli.errors import StrictError
from dyncli.logparse import trace_lines
from dyncli.logparse.trace import TraceParser, blocks, line_blocks
from dyncli.logparse.trace_map import TraceEventMapper, trace_events

DATA = Path(__file__).resolve().parents[1] / "data"
TRACES = sorted(DATA.rglob("dedicated_log_torch_trace*.log"))


def _read(path: Path, in_blocks: bool, *, filters: bool = True, raw: bool = False,
          strict: bool = False) -> tuple[list[Any], Any, dict[int, str], str | None]:
    """(records, stats, intern table, strict error) of one way of reading ``path``."""
    parser = TraceParser(str(path), strict=strict, verify=strict)
    if filters:
        trace_lines.install_filters(parser)
    out: list[Any] = []
    error = None
    with inputs.open_input(path) as source:
        if in_blocks:
            parts = blocks(source.parts())
            it = parser.feed_raw_blocks(parts) if raw else parser.feed_blocks(parts)
        else:
            it = parser.feed_raw(source.lines()) if raw else parser.feed(source.lines())
        try:
            for rec in it:
                out.append(rec if raw else (rec, rec.envelope))
        except StrictError as e:
            error = str(e)
    return out, parser.stats, parser.strings, error


def _same(path: Path, **kw: Any) -> None:
    assert _read(path, True, **kw) == _read(path, False, **kw)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: str(p.relative_to(DATA)))
def test_recorded_traces_read_alike(path: Path) -> None:
    _same(path)
    _same(path, raw=True)
    _same(path, filters=False)
    _same(path, strict=True)


def _damage(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(lines) + 1)
        what = rng.randrange(10)
        if what == 0:
            lines.insert(at, b"\n")  # a blank line: ends a record, orphans its payload
        elif what == 1:
            lines.insert(at, b"\tstray payload line\n")
        elif what == 2:
            lines.insert(at, b"garbage that is not a trace line\n")
        elif what == 3 and lines:
            del lines[min(at, len(lines) - 1)]
        elif what == 4:
            lines = [x.replace(b"\n", b"\r\n") for x in lines]
        elif what == 5:  # a chromium event the probe keeps: its name on payload line 1 or 2
            events = [i for i, x in enumerate(lines) if b'{"chromium_event"' in x]
            if events:
                i = rng.choice(events) + rng.choice([1, 2])
                lines[i:i + 1] = [rng.choice([b'\t"name": "automatic_dynamic"\n',
                                              b'\t"name": "pgo.dynamic_whitelist"',
                                              b'\t{"name": "automatic_dynamic", "args": {}}\n'])]
        elif what == 6:  # an over-long line (past the tiny cap), payload or envelope
            lines.insert(at, rng.choice([b"\t", b"V", b""]) + b"x" * rng.randint(50, 900) + b"\n")
        elif what == 7:
            lines.insert(at, b"\t\n")
        elif what == 8 and lines:
            i = min(at, len(lines) - 1)
            lines[i] = lines[i].replace(b'"', b"'", 1)  # a broken envelope
        else:
            lines.insert(at, b'V1122 01:19:12.903000 4440 x.py:1] {"unheard_of_kind": {}}\n')
    out = b"".join(lines)
    if rng.random() < 0.3:
        out = out[:rng.randrange(len(out) + 1)]  # cut mid-line, mid-record
    return out


SMALL = [p for p in TRACES if p.stat().st_size < 120_000][:6]


@pytest.mark.parametrize("seed", range(60))
def test_damaged_traces_read_alike_with_tiny_blocks(seed: int, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    source = SMALL[seed % len(SMALL)]
    data = source.read_bytes()
    # keep the first line: a file whose first line is not a trace is refused before reading
    first = data.index(b"\n") + 1
    path = tmp_path / "t.log"
    path.write_bytes(data[:first] + _damage(data[first:], rng))
    line_cap = rng.choice([64, 200, 4096])
    monkeypatch.setattr(inputs, "MAX_LINE", line_cap)
    monkeypatch.setattr(inputs, "BLOCK", rng.choice([1, 7, 61, line_cap // 2, line_cap]))
    for kw in ({}, {"raw": True}, {"filters": False}, {"strict": True}):
        _same(path, **kw)


def test_events_alike() -> None:
    """The mapper over either reader: the same events (what diagnose is made of)."""
    for path in TRACES[:10]:
        with inputs.open_input(path) as source:
            lines = list(trace_events(source.lines(), str(path)))
        parser = TraceParser(str(path))
        with inputs.open_input(path) as source:
            mapper = TraceEventMapper(parser)
            fast = list(mapper.events(parser.feed_blocks(blocks(source.parts()))))
        assert fast == lines



# ------------------------------------------------------------ a line cut at MAX_LINE


def test_line_blocks_add_no_byte_and_end_after_a_cut_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from dyncli.logparse import trace

    monkeypatch.setattr(trace, "LINE_BLOCK", 10)
    lines = [b"V1 a\n", b"\tpayload\n", b"\t" + b"x" * 7, b"yy\n", b"\tz\n", b"last"]
    got = list(line_blocks(lines))
    assert b"".join(got) == b"".join(lines)  # not a byte added or lost
    # a line without its newline (a cut piece, the last line) ends its block
    assert got == [b"V1 a\n\tpayload\n", b"\txxxxxxx", b"yy\n\tz\nlast"]
    assert list(line_blocks(["V1 a\n", "\tb"])) == [b"V1 a\n\tb"]  # str lines: encoded


def _cut_trace(tmp_path: Path) -> tuple[Path, Path, str]:
    """One record whose second payload line (100 x's) is longer than the line cap (64): as a
    plain file and gzipped, and its payload as torch wrote it."""
    import gzip
    import hashlib

    payload = "short\n" + "x" * 100 + "\nend"
    digest = hashlib.md5(payload.encode(), usedforsecurity=False).hexdigest()
    head = ('V1122 01:19:12.903000 4440 torch/_dynamo/convert_frame.py:1] {"artifact": '
            '{"name": "dynamo_graph_break_reason", "encoding": "string"}, "frame_id": 0, '
            f'"frame_compile_id": 0, "attempt": 0, "has_payload": "{digest}"}}\n')
    data = (head + "".join(f"\t{x}\n" for x in payload.split("\n"))).encode()
    plain, packed = tmp_path / "t.log", tmp_path / "t.log.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    return plain, packed, payload


@pytest.mark.parametrize("strict", [False, True])
def test_a_cut_payload_line_reads_alike_from_a_file_and_a_gzip_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    """``readline(64)`` cuts the 101-byte payload line: the first piece (a tab, 63 x's, no
    newline) is the payload's last line; the rest of the line (37 x's) starts no record, so it
    is a malformed line that ends the record, and ``\tend`` is a payload line without an
    envelope. The cut payload is kept as read (no newline added), so its hash does not match
    torch's: under ``--strict`` that is the first error, on the envelope's line."""
    plain, packed, payload = _cut_trace(tmp_path)
    monkeypatch.setattr(inputs, "MAX_LINE", 64)
    monkeypatch.setattr(inputs, "BLOCK", 32)  # below the cap, as 256 KB is below 8 MB
    got = []
    for path in (plain, packed):
        records, stats, _, error = _read(path, True, filters=False, strict=strict)
        got.append((records, stats, error and error.replace(str(path), "<t>")))
        if strict:
            assert error == f"{path}:1: payload does not match its has_payload hash (md5)"
            continue
        ((rec, _),) = records
        assert rec.payload == "short\n" + "x" * 63  # the cut piece, without a newline
        assert rec.payload != payload
        assert stats.lines == 5 and stats.malformed == 2
        assert dict(stats.reasons) == {"not a trace line": 1,
                                       "payload line without an envelope": 1}
    assert got[0] == got[1]  # a file's blocks and a stream's lines: the same reading
    # without the cap the same file is whole: the payload torch hashed
    monkeypatch.setattr(inputs, "MAX_LINE", 8 << 20)
    ((rec, _),), stats, _, error = _read(packed, True, filters=False, strict=True)
    assert error is None and rec.payload == payload and stats.malformed == 0

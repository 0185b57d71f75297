"""The block reader (``TraceParser.feed_blocks``) gives what the line-by-line loop gives.

``feed`` is the reference: one Python step per line. ``feed_blocks`` reads a plain file in
blocks and skips runs of payload lines with a regex search; both must yield the same records
(every field, the decoded envelope too), the same intern table, the same counts and samples,
and the same first error under ``--strict``. Checked on every recorded trace in tests/data
(all torch releases), with and without the mapper's filters, cooked and raw (the parsing
child's half), and on damaged copies read with tiny blocks and a tiny line cap, so that every
block boundary, over-long line piece, CRLF, blank line, stray payload line and truncation
meets the block reader somewhere.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from dyncli import inputs
from dyncli.errors import StrictError
from dyncli.logparse import trace_lines
from dyncli.logparse.trace import TraceParser, source_blocks
from dyncli.logparse.trace_map import TraceEventMapper, trace_events

DATA = Path(__file__).resolve().parents[1] / "data"
TRACES = sorted(DATA.rglob("dedicated_log_torch_trace*.log"))


def _read(path: Path, blocks: bool, *, filters: bool = True, raw: bool = False,
          strict: bool = False) -> tuple[list[Any], Any, dict[int, str], str | None]:
    """(records, stats, intern table, strict error) of one way of reading ``path``."""
    parser = TraceParser(str(path), strict=strict, verify=strict)
    if filters:
        trace_lines.install_filters(parser)
    out: list[Any] = []
    error = None
    with inputs.open_input(path) as source:
        if blocks:
            parts = source_blocks(source)
            assert parts is not None
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
            blocks = source_blocks(source)
            assert blocks is not None
            mapper = TraceEventMapper(parser)
            fast = list(mapper.events(parser.feed_blocks(blocks)))
        assert fast == lines


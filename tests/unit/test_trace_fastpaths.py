"""The trace reader's fast paths give what the plain, line-by-line code gives.

The parser joins payloads in one pass, keeps only the guards-tree lines the mapper reads,
and decodes only the envelopes a handler reads. Each is checked here against the straightforward version on
awkward inputs (CR, form feeds, lines without ends, invalid UTF-8).
"""

from __future__ import annotations

import random

import pytest
import trace_records as records

from dyncli.logparse import trace_payload
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_map import TraceEventMapper

_PIECES = ["a", "TENSOR_MATCH x", "LAMBDA_GUARD: L['x'].size()[0] > 2", "\r", "\x0c", "\x1c",
           "\u2028", "\t", "  ", "é", "\\", '"', "#"]


def _plain_join(chunks: list[bytes], strip: bytes) -> bytes:
    return b"\n".join(c[1:].rstrip(strip) for c in chunks)


def _lines(rng: random.Random) -> list[bytes]:
    out = []
    for _ in range(rng.randint(0, 8)):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6)))
        line = b"\t" + text.encode()
        if rng.random() < 0.3:
            line += b"\xff"  # invalid UTF-8
        if rng.random() < 0.9 or not out:
            line += rng.choice([b"\n", b"\r\n", b"\n"])
        out.append(line)
    return out


@pytest.mark.parametrize("seed", range(200))
def test_payload_join_and_line_filter_equal_the_plain_code(seed: int) -> None:
    rng = random.Random(seed)
    chunks = _lines(rng)
    for strip in (b"\r\n", b"\n"):
        assert trace_payload._join(chunks, strip) == _plain_join(chunks, strip)
    words = (b"TENSOR_MATCH", b"LAMBDA_GUARD")
    text = _plain_join(chunks, b"\r\n").decode("utf-8", "replace")
    expected = "\n".join(x for x in text.splitlines()
                         if any(w.decode() in x for w in words))
    assert trace_payload._lines_holding(chunks, words) == expected


def test_only_records_a_handler_reads_are_decoded() -> None:
    """Tensors without mark_dynamic dims and sources no marked tensor awaits are counted by
    kind, never decoded; an artifact of another name is decoded without its payload; what is
    read gives the same events."""
    lines = [*records.envelope("describe_tensor", {"id": 1, "describer_id": 0, "size": [2]},
                               end="\n"),
             *records.envelope("describe_source", {"id": 1, "describer_id": 0,
                                                   "source": "L['y']"}, end="\n"),
             *records.envelope("artifact", {"name": "inductor_output_code",
                                            "encoding": "string"}, "x = 1", end="\n"),
             *records.envelope("describe_tensor", {"id": 2, "describer_id": 0, "size": [2],
                                                   "dynamo_dynamic_indices": [0]}, end="\n",
                               frame_id=0, frame_compile_id=0),
             *records.envelope("describe_source", {"id": 2, "describer_id": 0,
                                                   "source": "L['x']"}, end="\n",
                               frame_id=0, frame_compile_id=0)]
    parser = TraceParser("t.log")
    events = list(TraceEventMapper(parser).events(parser.feed(lines)))
    assert [type(e).__name__ for e in events] == ["MarkedDynamic"]
    assert events[0].source == "L['x']"
    assert parser.stats.records == 3  # the artifact, the marked tensor and its source
    assert parser.stats.kinds["describe_tensor"] == 2 and parser.stats.kinds["artifact"] == 1
    assert parser.stats.malformed == 0

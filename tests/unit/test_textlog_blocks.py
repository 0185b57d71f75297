"""Reading a text log in blocks (``Source.parts``, ``TextLogParser.parse_parts``) gives exactly
what reading it line by line gives: the same lines, the same events, the same counts."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from dyncli import inputs
from dyncli.logparse import events as ev
from dyncli.logparse.textlog import TextLogParser

DATA = Path(__file__).resolve().parents[1] / "data"
LOGS = sorted(p for p in DATA.glob("**/*.log") if not p.name.startswith("dedicated_log_torch_trace"))


def by_lines(data: bytes) -> tuple[list[ev.Event], ev.ParseStats]:
    stats = ev.ParseStats()
    return list(TextLogParser(stats).parse(io.BytesIO(data))), stats


def by_blocks(data: bytes, size: int) -> tuple[list[ev.Event], ev.ParseStats]:
    """``data`` cut into blocks of whole lines of about ``size`` bytes."""
    parts: list[bytes] = []
    at = 0
    while at < len(data):
        end = data.find(b"\n", at + size)
        end = len(data) if end < 0 else end + 1
        parts.append(data[at:end])
        at = end
    stats = ev.ParseStats()
    return list(TextLogParser(stats).parse_parts(parts)), stats


def mutated(lines: list[bytes], seed: int) -> bytes:
    """A damaged copy of a log: foreign lines inside records and trees, CRLF, repeated and cut
    lines, a second process, no final newline."""
    rnd = random.Random(seed)
    out: list[bytes] = []
    for line in lines:
        r = rnd.random()
        if r < 0.03:
            out.append(b"stdout noise +- TENSOR_MATCH: x\n")
        elif r < 0.05:
            out.append(line.replace(b"\n", b"\r\n"))
        elif r < 0.07:
            out += [line, line]
        elif r < 0.08:
            out.append(line[:rnd.randrange(len(line))] + b"\n")
        elif r < 0.09:
            out.append(line.replace(b"7142 ", b"7143 "))
        else:
            out.append(line)
    return b"".join(out).rstrip(b"\n")


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_blocks_give_the_same_events_and_counts(path: Path) -> None:
    data = path.read_bytes()
    expected = by_lines(data)
    for size in (1, 700, 4096, 1 << 20):
        assert by_blocks(data, size) == expected


@pytest.mark.parametrize("seed", range(8))
def test_blocks_of_a_damaged_log_give_the_same_events_and_counts(seed: int) -> None:
    lines = (DATA / "logs" / "hf_tiny_bert.log").read_bytes().splitlines(keepends=True)
    start = random.Random(seed).randrange(len(lines) - 1500)
    data = mutated(lines[start:start + 1500], seed)
    expected = by_lines(data)
    assert expected[1].lines > 1000
    for size in (50, 3000, 100_000):
        assert by_blocks(data, size) == expected


def test_parts_are_the_lines_even_past_the_line_cap(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks end at line ends, and a line longer than MAX_LINE comes in the same pieces as
    ``readline(MAX_LINE)`` cuts it, whatever the block size."""
    monkeypatch.setattr(inputs, "MAX_LINE", 64)
    log = (DATA / "logs" / "multi_rank.log").read_bytes()
    data = log[:3000] + b"x" * 300 + b"\n" + b"y" * 64 + b"\n" + log[3000:6000] + b"z" * 70
    path = tmp_path / "run.log"
    path.write_bytes(data)
    with inputs.open_input(path) as source:
        expected = list(source.lines())
    for block in (1, 16, 33, 63):  # (BLOCK < MAX_LINE, as 256 KB < 8 MB)
        monkeypatch.setattr(inputs, "BLOCK", block)
        with inputs.open_input(path) as source:
            got = [line for part in source.parts()
                   for line in (io.BytesIO(part) if isinstance(part, bytes) else part)]
        assert got == expected, block

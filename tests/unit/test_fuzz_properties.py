"""Property tests: the parsers never raise on bad input, except their one documented error.

Inputs are arbitrary bytes and mutations of the real files of tests/data (issue 13). The
budgets are small and the seed fixed (``derandomize``) so that CI stays fast and repeatable;
``benchmarks/fuzz.py`` runs the long, whole-CLI campaign.
"""

from __future__ import annotations

import contextlib
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dyncli.errors import StrictError
from dyncli.logparse import glog
from dyncli.logparse.events import CompileId, ParseStats
from dyncli.logparse.textlog import parse_lines
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_map import trace_events
from dyncli.suggest.pgo_pickle import loads_state
from dyncli.suggest.pgo_trace import parse_rendered_state

DATA = Path(__file__).resolve().parents[1] / "data"
LOG = (DATA / "logs" / "graph_break_frames.log").read_bytes().splitlines(keepends=True)
TRACE = (DATA / "traces" / "graph_break_frames").glob("*.log").__next__().read_bytes() \
    .splitlines(keepends=True)
PICKLE = (DATA / "pgo" / "mlp" / "dynamo" / "code_state_mlp_None_.pkl").read_bytes()
FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Bytes a damaged log is likely to hold: separators of the glog prefix and of records, digits,
# brackets, JSON punctuation, invalid UTF-8 and lone-surrogate encodings.
_ALPHABET = [*list(b' []()/:_,.#+-{}"0123456789VIWEs\t\r\n'), 0, 255, 237, 160, 128]
noisy_bytes = st.lists(st.sampled_from(_ALPHABET), max_size=300).map(bytes)


@st.composite
def mutated(draw: st.DrawFn, lines: list[bytes]) -> list[bytes]:
    """A window of real lines with a few lines cut, duplicated, flipped or given noise."""
    start = draw(st.integers(0, max(0, len(lines) - 40)))
    out = list(lines[start:start + 40])
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(out) - 1))
        op = draw(st.sampled_from(["cut", "dup", "noise", "digits", "drop"]))
        line = out[i]
        at = draw(st.integers(0, len(line)))
        if op == "cut":
            out[i] = line[:at]
        elif op == "dup":
            out.insert(i, line)
        elif op == "noise":
            out[i] = line[:at] + draw(noisy_bytes) + line[at:]
        elif op == "digits":
            out[i] = line[:at] + b"9" * draw(st.sampled_from([19, 400, 4400])) + line[at:]
        elif len(out) > 1:
            del out[i]
    return out


def _text(lines: list[bytes]) -> ParseStats:
    stats = ParseStats()
    for _ in parse_lines(lines, stats):
        pass
    return stats


@FAST
@given(st.lists(noisy_bytes, max_size=30))
def test_text_parser_never_raises_on_noise(lines: list[bytes]) -> None:
    stats = _text(lines)
    assert stats.lines == len(lines)


@FAST
@given(mutated(LOG))
def test_text_parser_never_raises_on_mutated_logs(lines: list[bytes]) -> None:
    stats = _text(lines)
    assert stats.lines == len(lines)
    assert stats.malformed == sum(stats.reasons.values())


def _trace(lines: list[bytes], strict: bool = False) -> TraceParser:
    parser = TraceParser("<t>", strict=strict)
    for _ in trace_events(lines, parser=parser):
        pass
    return parser


def _lines_read(items: list[bytes]) -> int:
    """The lines the trace reader reads in ``items``: it reads them as a file's ``readline``
    gives them, so a newline inside an item ends a line there, an item without a newline at
    its end (a piece of a cut line) ends a line too, and an empty item is no line."""
    return sum(x.count(b"\n") + (bool(x) and not x.endswith(b"\n")) for x in items)


@FAST
@given(st.lists(noisy_bytes, max_size=30))
def test_trace_parser_never_raises_on_noise(lines: list[bytes]) -> None:
    assert _trace(lines).stats.lines == _lines_read(lines)


@FAST
@given(mutated(TRACE))
def test_trace_parser_never_raises_on_mutated_traces(lines: list[bytes]) -> None:
    assert _trace(lines).stats.lines == _lines_read(lines)


def test_lines_as_a_file_gives_them_are_counted_one_each() -> None:
    """Lines as ``readline`` gives them (each ends in its newline, or is a cut piece): the
    count is one per item, as the line loop this reader replaced counted them."""
    lines = [*TRACE[:30], b"\t" + b"x" * 50, b"tail of the cut line\n", b"last line"]
    assert _trace(lines).stats.lines == len(lines) == _lines_read(lines)


@FAST
@given(mutated(TRACE))
def test_strict_trace_parser_raises_only_strict_error(lines: list[bytes]) -> None:
    with contextlib.suppress(StrictError):
        _trace(lines, strict=True)


@FAST
@given(st.binary(max_size=400) | mutated([PICKLE]).map(b"".join))
def test_pgo_pickle_raises_only_documented_errors(data: bytes) -> None:
    with contextlib.suppress(ValueError, pickle.UnpicklingError):
        loads_state(data)


@FAST
@given(st.binary(max_size=200).map(lambda b: PICKLE[:len(PICKLE) // 2] + b))
def test_pgo_pickle_with_a_damaged_tail(data: bytes) -> None:
    with contextlib.suppress(ValueError, pickle.UnpicklingError):
        loads_state(data)


@FAST
@given(st.lists(st.text(max_size=80), max_size=20))
def test_rendered_pgo_state_raises_only_value_error(lines: list[str]) -> None:
    with contextlib.suppress(ValueError):
        parse_rendered_state(lines)


@FAST
@given(noisy_bytes)
def test_glog_prefix_and_compile_id_never_raise(raw: bytes) -> None:
    glog.parse_prefix(raw)
    CompileId.parse(raw.decode("utf-8", "replace"))


# torch 2.3/2.4 write a thread id there (15+ digits, up to 20 for a 64-bit value): 21 is not
@pytest.mark.parametrize("digits", [21, 400, 4400])
def test_huge_numbers_in_a_glog_prefix_are_not_glog_lines(digits: int) -> None:
    line = b"V1122 01:19:36.607000 " + b"9" * digits + b" torch/x.py:1] [0/0] eval x [guard added]"
    assert glog.parse_prefix(line) is None
    assert _text([line]).unrecognized == 1


# ------------------------------------------- issue 22: the opcode scan refuses no real state

_atoms = st.one_of(st.integers(0, 1 << 40), st.just("dyn"), st.just("stride"))


@st.composite
def _pgo_states(draw: st.DrawFn) -> bytes:
    import suggest_fake_pgo as fake

    def entry() -> object:
        sizes = [fake.DYN if a == "dyn" else (1 if a == "stride" else a)
                 for a in draw(st.lists(_atoms, max_size=6))]
        if draw(st.booleans()):
            return fake.scalar(fake.DYN if draw(st.booleans()) else draw(st.integers(-5, 1 << 40)))
        return fake.tensor(*sizes, excluded=draw(st.none() | st.just(tuple(sizes))))

    frames = {(draw(st.text(max_size=30)), draw(st.integers(0, 1 << 20)), draw(st.text(max_size=20))):
              {draw(st.text(max_size=30)): entry() for _ in range(draw(st.integers(0, 4)))}
              for _ in range(draw(st.integers(0, 4)))}
    return fake.dumps(frames, **({"closure_hash": draw(st.integers(-(1 << 63), 1 << 63))} if draw(st.booleans()) else {}))


@FAST
@given(_pgo_states())
def test_the_opcode_scan_passes_every_state_pickle_writes(data: bytes) -> None:
    """No false refusal: whatever torch-shaped state pickle.dumps writes reads back."""
    loads_state(data)

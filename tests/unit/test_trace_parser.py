"""The TORCH_TRACE record parser: envelope, intern table, payloads, compile ids, ranks."""

from __future__ import annotations

from pathlib import Path

import pytest
import trace_records as records
from trace_records import PREFIX

from dyncli.errors import InputError
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_format import format_compile_id, is_trace_line, peek_kind
from dyncli.logparse.trace_payload import decode_recompile_reasons

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def envelope(kind: str, meta: object, payload: str | None = None, **ctx: object) -> list[str]:
    """Lines torch would write for one record, each with its newline as read from a file."""
    return records.envelope(kind, meta, payload, end="\n", **ctx)


def parse(lines: list[str], **kw: object) -> tuple[TraceParser, list]:
    parser = TraceParser("t.log", **kw)  # type: ignore[arg-type]
    return parser, list(parser.feed(lines))


def test_envelope_context_and_compile_id() -> None:
    _, recs = parse(envelope("dynamo_start", {"stack": []}, frame_id=2, frame_compile_id=1,
                             attempt=1, rank=3))
    (rec,) = recs
    assert (rec.kind, rec.frame_id, rec.frame_compile_id, rec.attempt, rec.rank) == (
        "dynamo_start", 2, 1, 1, 3)
    assert rec.compile_id == "2/1_1"
    assert rec.emitter == "torch/_dynamo/guards.py:5625]"[:-1]
    assert rec.pid == 4440 and rec.timestamp == "1122 01:19:12.903000"


def test_compile_id_forms_match_torch() -> None:
    assert format_compile_id(0, 0) == "0/0"
    assert format_compile_id(0, 3, 2) == "0/3_2"
    assert format_compile_id(1, 0, 0, 4) == "!4/1/0"
    assert format_compile_id(None, None, 0, 4) == "!4"
    assert format_compile_id(None, None) is None


def test_intern_table_is_consumed_not_yielded() -> None:
    lines = [f'{PREFIX} {{"str": ["/home/u/train.py", 0]}}\n',
             *envelope("dynamo_start", {"stack": [{"line": 3, "name": "f", "filename": 0}]})]
    parser, recs = parse(lines)
    assert [r.kind for r in recs] == ["dynamo_start"]
    assert parser.filename(recs[0].meta["stack"][0]["filename"]) == "/home/u/train.py"
    assert parser.filename(99) is None


def test_payload_is_joined_and_verified() -> None:
    payload = "line one\n\tindented\nline three"
    parser, recs = parse(envelope("artifact", {"name": "dynamo_graph_break_reason",
                                               "encoding": "string"}, payload), verify=True)
    assert recs[0].payload == payload
    assert parser.stats.payload_mismatch == 0 and parser.stats.payload_lines == 3


def test_payload_hash_mismatch_counted_then_strict_error() -> None:
    lines = envelope("artifact", {"name": "recompile_reasons", "encoding": "json"}, "a")
    lines[1] = "\tb\n"
    parser, _ = parse(lines, verify=True)
    assert parser.stats.payload_mismatch == 1
    with pytest.raises(InputError, match=r"t\.log:1: payload does not match"):
        parse(lines, verify=True, strict=True)


def test_uninteresting_payloads_are_skipped_not_kept() -> None:
    lines = envelope("artifact", {"name": "inductor_output_code", "encoding": "string"}, "x\ny")
    lines += envelope("inductor_output_code", {"filename": "a.py"}, "code")
    parser, recs = parse(lines)
    assert recs[0].payload is None  # artifact of a name dyncli does not read
    assert len(recs) == 1  # inductor_output_code is known but not decoded
    assert parser.stats.malformed == 0 and parser.stats.unrecognized == 0


def test_unknown_kinds_counted_and_strict() -> None:
    lines = envelope("brand_new_event", {"x": 1}, "payload")
    parser, recs = parse(lines)
    assert recs == [] and parser.stats.unknown["brand_new_event"] == 1
    assert parser.stats.unrecognized == 1
    with pytest.raises(InputError, match="unknown trace event kind 'brand_new_event'"):
        parse(lines, strict=True)


def test_malformed_lines_counted() -> None:
    lines = ["garbage\n", "\torphan payload\n", f"{PREFIX} {{\"dynamo_start\": \n",
             *envelope("dynamo_start", {})]
    parser, recs = parse(lines)
    assert len(recs) == 1 and parser.stats.malformed == 3
    with pytest.raises(InputError, match=r"t\.log:1: not a trace line"):
        parse(lines, strict=True)


def test_crlf_bytes_and_truncated_last_record() -> None:
    raw = [ln.replace("\n", "\r\n").encode() for ln in envelope("dynamo_start", {"a": 1})]
    raw.append(f'{PREFIX} {{"compilation_metrics": {{"co_name": "f"'.encode())  # cut off
    parser, recs = parse(raw)  # type: ignore[arg-type]
    assert recs[0].meta == {"a": 1}
    assert parser.stats.malformed == 1


def test_recompile_reasons_single_is_raw_text_several_are_json() -> None:
    assert decode_recompile_reasons("0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3") == [
        "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3"]
    several = '[\n"0/1: n == 5",\n"0/0: tensor \'x\' size mismatch"\n]'
    assert decode_recompile_reasons(several) == ["0/1: n == 5", "0/0: tensor 'x' size mismatch"]
    assert decode_recompile_reasons("[not json") == ["[not json"]
    assert decode_recompile_reasons("") == []


def test_peek_and_sniff() -> None:
    line = envelope("chromium_event", {})[0]
    assert peek_kind(line.encode()) == "chromium_event"
    assert is_trace_line(line)
    assert not is_trace_line("I1122 01:19:12.903000 4440 torch/x.py:1] [0/0] create_symbol s0")


@pytest.mark.parametrize("case", sorted(p.name for p in TRACES.iterdir() if p.is_dir())
                         if TRACES.is_dir() else [])
def test_real_traces_parse_cleanly(case: str) -> None:
    """Every captured torch 2.14 trace: no malformed lines, no unknown kinds, hashes match."""
    for path in sorted((TRACES / case).glob("*.log")):
        parser = TraceParser(str(path), strict=True, verify=True)
        with path.open("rb") as fh:
            recs = list(parser.feed(fh))
        assert parser.stats.malformed == 0 and parser.stats.payload_mismatch == 0
        assert any(r.kind == "compilation_metrics" for r in recs)
        assert parser.stats.recognized == parser.stats.lines

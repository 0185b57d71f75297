"""Round 28's readings of diagnose: automatic dynamic's marking of a whole input (torch's
``[0/1] marking L['x'] as dynamic (from automatic dynamic/PGO)``, pgo.py) is one fact about
the input, so the mark-dynamic finding cites it once, not once per dim it made dynamic."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dyncli.diagnose.read import diagnose_inputs

_DATA = Path(__file__).parents[1] / "data"


def _mark_dynamic(path: Path):  # type: ignore[no-untyped-def]
    diag = diagnose_inputs([path])
    (a,) = [s for s in diag.suggestions if s.kind == "mark-dynamic"]
    return diag, a


@pytest.mark.parametrize(("log", "inputs"), [
    # torch 2.14 (tests/data/logs) and 2.15: a transformers model whose two inputs change in
    # batch and sequence length; automatic dynamic marks each whole input at [0/1]
    ("logs/hf_tiny_bert.log", ["L['kwargs']['input_ids']", "L['kwargs']['attention_mask']"]),
    ("2.15.0/logs/hf_tiny_bert.log", ["L['kwargs']['input_ids']",
                                      "L['kwargs']['attention_mask']"]),
    # one input x whose dim 0 then dim 1 change (torch 2.14.1 and 2.15.0)
    ("2.14.1/advice/batch_then_seq.full.log.gz", ["L['x']"]),
    ("2.15.0/advice/batch_then_seq.full.log.gz", ["L['x']"]),
    ("2.15.0/advice/maybe_mark_dynamic.full.log.gz", ["L['x']"]),
])
def test_a_whole_input_marking_is_cited_once(log: str, inputs: list[str]) -> None:
    diag, a = _mark_dynamic(_DATA / log)
    marked = [e for e in a.evidence if " marking " in e]
    assert [n for n in Counter(a.evidence).values() if n > 1] == []
    # each input is cited (once), though the finding lists each of its dims
    assert [next(i for i in inputs if f"marking {i} as dynamic" in e) for e in marked] == inputs
    for i in inputs:
        assert f"{i}:0" in a.entries and f"{i}:1" in a.entries
    # the causes' ranking carries the finding's evidence as it is
    (c,) = [c for c in diag.causes if any(f.kind == "mark-dynamic" for f in c.findings)]
    (f,) = [f for f in c.findings if f.kind == "mark-dynamic"]
    assert f.evidence == a.evidence


def test_each_frames_marking_of_the_same_input_is_still_cited() -> None:
    # torch 2.11 under CUDA graphs: L['x'] is marked whole in frames 0 and 1 (and 2, 4), each
    # its own compile and line; cited once each, the first two as before, L['y'] too
    _, a = _mark_dynamic(_DATA / "2.11.0/cudagraphs/trace.log.gz")
    marked = [e for e in a.evidence if " marking " in e]
    assert marked == [
        "line 4461: [0/1] marking L['x'] as dynamic (automatic dynamic/PGO)",
        "line 33004: [1/1] marking L['x'] as dynamic (automatic dynamic/PGO)",
        "line 37051: [2/1] marking L['y'] as dynamic (automatic dynamic/PGO)",
    ]

"""A graph break read without its reason (round 24): torch writes a reason in every record, so
the input cut it; diagnose says so and how to see it, never "move the untraceable call out",
which pretends to know what broke (pytorch#126722: the paste ends at the record's traceback,
before the exception line that is 2.3-2.5's reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import REASON_CUT
from dyncli.diagnose.read import diagnose_logs

PASTED = Path(__file__).parent.parent / "data" / "pasted"


@pytest.mark.parametrize("name", ["pytorch-126722.log",  # cut after: its exception line
                                  "pytorch-119309.log",  # 2.3's "Graph break: Traceback", cut
                                  "pytorch-119292.log",  # begun inside the traceback, cut
                                  "pytorch-126026.log"])  # basicConfig's stack, cut
def test_a_break_whose_reason_was_cut_says_so_and_how_to_see_it(name: str) -> None:
    diag = diagnose_logs([PASTED / name])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.message.endswith(REASON_CUT), a.message
    assert 'TORCH_LOGS="graph_breaks"' in a.fix and "untraceable call" not in a.fix, a.fix
    (c,) = [c for c in diag.causes if c.graph_breaks]
    assert c.title.endswith(REASON_CUT) and c.fix == a.fix


def test_a_cut_break_in_ddps_forward_keeps_ddps_answer() -> None:
    # (its call site names DDP's forward: what broke is known without the reason)
    (a,) = [s for s in diagnose_logs([PASTED / "pytorch-121386.log"]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert "DDP's own forward" in a.fix

"""torch._dynamo.explain()'s report, as users paste it (torchdynamo#1100, lightning-thunder#1810).

explain() is torch's own graph-break report: "Graph Count", "Break Reasons" with each reason and
its user stack. diagnose refused it as "not a torch log". It now reads each reason as a graph
break at the last frame of its stack; a branch on a tensor's value (``generic_jump``) gets the
torch.where / torch.cond fix, which is applied here: explain() then reports one graph, no break.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def branchy(x: Any) -> Any:
    if x.sum() > 0:  # a branch on a tensor's value: a graph break
        return x * 2
    return x - 1


def fixed(x: Any) -> Any:  # the fix: both outcomes, picked with torch.where
    return torch.where(x.sum() > 0, x * 2, x - 1)


def test_explains_report_is_read_and_the_branch_fix_leaves_one_graph(tmp_path: Path) -> None:
    torch._dynamo.reset()
    report = str(torch._dynamo.explain(branchy)(torch.randn(4)))
    log = tmp_path / "explain.txt"
    log.write_text(report)
    d = diagnose_inputs([log])
    line = inspect.getsourcelines(branchy)[1] + 1  # the `if`
    (b,) = d.graph_breaks
    assert (Path(b.file).name, b.user_line) == (Path(__file__).name, line), report
    assert b.reason.startswith(("generic_jump", "Data-dependent branching")), b.reason
    (a,) = [s for s in d.suggestions if s.kind == "graph-break"]
    assert "torch.where" in a.fix and "torch.cond" in a.fix
    torch._dynamo.reset()
    after = torch._dynamo.explain(fixed)(torch.randn(4))
    assert (after.graph_count, after.graph_break_count) == (1, 0)

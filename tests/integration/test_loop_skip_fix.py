"""A graph break inside a for/while loop makes torch skip the whole frame (torch 2.0-2.10 log
"Skipping frame because there is a graph break in a for/while loop"; 2.11-2.15 chain "graph
break in loop" to the break's record, "frame skipped: loop (file line N)"). diagnose reads it as
the frame running eagerly (loop-break-skip) and prints: remove the break, or move the loop's
loop's body into a function of its own, which torch compiles on each call while only the loop
runs eagerly. Applied on real torch.compile: the loop with a print in it compiles no graph; with
its body in a function, the body's ops are compiled, the result the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = COUNTING_BACKEND + """
import torch

def body(y, i):
    y = y * 2
    print("step", i)
    return y + 1

def loop(x):
    y = x + 1
    for i in range(3):
        if VARIANT == "body":
            y = body(y, i)
        else:
            y = y * 2
            print("step", i)
            y = y + 1
    return y - 1

out = torch.compile(loop, backend=backend)(torch.ones(4))
print(out.tolist(), len(graphs))
"""


def test_a_loop_body_in_a_function_of_its_own_is_compiled(tmp_path: Path) -> None:
    ran = run_variants({v: PROGRAM.replace("VARIANT", repr(v)) for v in ("as run", "body")},
                       tmp_path, logs="graph_breaks")
    diag = diagnose_logs([ran["as run"].log])
    (skip,) = diag.loop_skips
    assert skip.function == "loop"
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.LOOP_SKIP]
    assert "move the loop's body into a function of its own" in a.fix
    assert any(c.runs_eagerly for c in diag.causes)
    out = {v: r.stdout.split("\n")[-2].rsplit(" ", 1) for v, r in ran.items()}
    assert {result for result, _ in out.values()} == {"[22.0, 22.0, 22.0, 22.0]"}
    graphs = {v: int(n) for v, (_, n) in out.items()}
    # as run, nothing of the frame is compiled; with the body in body(), the body's ops are
    # (the loop around it still runs eagerly: said again)
    assert graphs["as run"] == 0 and graphs["body"] > 0
    assert [x.function for x in diagnose_logs([ran["body"].log]).loop_skips] == ["loop"]

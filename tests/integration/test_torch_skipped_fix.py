"""A graph break on a private function of torch's that dynamo's trace rules skip (GB0007,
"Attempted to call function marked as skipped"), pasted without its user stack (pytorch#155426:
a nightly's regression reached `torch.fx.immutable_collections._immutable_list_unflatten` from
pytree, and the user's code never named it). diagnose says the function is torch's own private
one: where the code calls it, avoid the call (torch's hint); where it does not, torch's code
broke (another release, a report). Applied on real torch.compile: a program that calls torch's
private `torch._utils._get_device_index` under fullgraph=True raises that break; its message
cut before "from user code:" is the paste; the whole message places the break at the program's
line; with the call avoided the function compiles whole, one graph.
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
import torch._utils

def step(x):
    CALL
    return x * 2

out = torch.compile(step, backend=backend, fullgraph=True)(torch.ones(4))
print(out.tolist(), len(graphs))
"""


def test_a_skipped_private_torch_function_is_said_as_torchs_and_avoiding_it_compiles(
        tmp_path: Path) -> None:
    ran = run_variants({"calls": PROGRAM.replace("CALL", "torch._utils._get_device_index(0)"),
                        "avoided": PROGRAM.replace("CALL", "pass")}, tmp_path)
    assert ran["calls"].raised and not ran["avoided"].raised
    text = ran["calls"].log.read_text()
    head = text.index("torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped")
    if "_get_device_index` in file `" not in text[head:]:
        pytest.skip("this torch's message does not name the skipped function's file")
    end = text.find("from user code:", head)
    cut = tmp_path / "cut.log"
    cut.write_text(text[head:end if end > 0 else len(text)])
    diag = diagnose_logs([cut])
    (b,) = diag.graph_breaks
    assert b.raised and not b.file
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "_get_device_index is torch's own private function" in a.fix
    assert "where your code calls it, avoid the call" in a.fix
    # the whole message: the break at the program's own line, which calls it
    (whole,) = diagnose_logs([ran["calls"].log]).graph_breaks
    call = next(i for i, t in enumerate(PROGRAM.splitlines(), 1) if "CALL" in t)
    assert (whole.file, whole.user_line) == ("<string>", call)
    # the advice applied (the call avoided): one graph, fullgraph=True holds
    result, graphs = ran["avoided"].stdout.split("\n")[-2].rsplit(" ", 1)
    assert result == "[2.0, 2.0, 2.0, 2.0]" and int(graphs) == 1

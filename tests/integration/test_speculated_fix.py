"""dynamo's speculate_subgraph record: an autograd.Function whose body dynamo could not trace
into one graph (flash-attention#596, torch 2.1: flash-attn's Function calling its CUDA extension;
torch 2.15 writes the record at INFO under TORCH_LOGS="dynamo"). diagnose reads it as a graph
break whose place the record does not have, and prints: make the call one operator dynamo keeps
whole, a custom operator with register_fake and register_autograd. Applied on real
torch.compile: a Function whose forward calls an extension's builtin (zlib.adler32, which dynamo
cannot trace) splits the graph; written as a custom operator, one graph, the same result and
gradient; and with the graph_breaks record beside it, one break, not two.
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
import torch, zlib

class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        zlib.adler32(b"a")  # an extension's builtin dynamo cannot trace
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

CALL = Doubled.apply
if FIX:
    @torch.library.custom_op("dyncli_test::doubled", mutates_args=())
    def doubled(x: torch.Tensor) -> torch.Tensor:
        zlib.adler32(b"a")
        return x * 2

    @doubled.register_fake
    def _(x):
        return torch.empty_like(x)

    doubled.register_autograd(lambda ctx, g: g * 2)
    CALL = doubled

def fn(x):
    return CALL(x + 1) - 1

x = torch.ones(4, requires_grad=True)
out = torch.compile(fn, backend=backend)(x)
out.sum().backward()
print(out.tolist(), x.grad.tolist(), len(graphs))
"""


def test_a_speculated_function_made_a_custom_op_compiles_in_one_graph(tmp_path: Path) -> None:
    ran = run_variants({"as run": PROGRAM.replace("FIX", "False"),
                        "fixed": PROGRAM.replace("FIX", "True")},
                       tmp_path, logs="dynamo")
    diag = diagnose_logs([ran["as run"].log])
    # (torch 2.15 also warns of the builtin, and names the functions it resumed in: breaks of
    # their own readings; the record read is the speculated one, placed where fn resumed: the
    # call, read once, not again as a resumed break of its own)
    (b,) = [b for b in diag.graph_breaks if b.reason.startswith("speculate_subgraph: ")]
    call = PROGRAM.splitlines().index("    return CALL(x + 1) - 1") + 1
    assert (b.function, b.user_line) == ("fn", call)
    assert not any(o.resumed_in and o.function == "fn" for o in diag.graph_breaks)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK
            and s.message.endswith(b.said_reason)]
    assert "torch.library.custom_op" in a.fix and "register_autograd" in a.fix
    before = ran["as run"].stdout.split("\n")[-2].rsplit(" ", 1)
    after = ran["fixed"].stdout.split("\n")[-2].rsplit(" ", 1)
    assert before[0] == after[0] == "[3.0, 3.0, 3.0, 3.0] [2.0, 2.0, 2.0, 2.0]"
    assert int(before[1]) > 1 and int(after[1]) == 1
    assert not diagnose_logs([ran["fixed"].log]).graph_breaks


def test_the_record_beside_its_graph_break_record_is_one_break(tmp_path: Path) -> None:
    ran = run_variants({"as run": PROGRAM.replace("FIX", "False")}, tmp_path,
                       logs="dynamo,graph_breaks")
    diag = diagnose_logs([ran["as run"].log])
    assert not any(b.reason.startswith("speculate_subgraph: ") for b in diag.graph_breaks)
    assert any(b.file and b.user_line for b in diag.graph_breaks)
    # the record's user stack reaches forward through torch's autograd_function.py from fn's
    # call: fn's resume function is that break, not one more (read twice before round 30)
    assert not any(b.resumed_in and b.function == "fn" for b in diag.graph_breaks)

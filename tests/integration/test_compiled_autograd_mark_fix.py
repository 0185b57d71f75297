"""A mark_dynamic on a forward input that autograd saves, under compiled autograd
(pytorch#133575): torch 2.4-2.5 traced the backward graph with the gradient's sizes fixed, so
its input L['inputs'][1] (the marked tensor, saved for sin's backward) was pinned and the
backward raised ConstraintViolationError. diagnose's fix for that reading, maybe_mark_dynamic on
the forward input (or a newer torch), is applied here: the backward compiles for three sizes.
Run by hand on 2.4.1 (round 23): mark_dynamic raised at the first backward, maybe_mark_dynamic ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch._dynamo
from torch._dynamo.utils import counters, maybe_enable_compiled_autograd

@torch.compile(backend="aot_eager_decomp_partition")
def f(x):
    return x.sin().sin()

with maybe_enable_compiled_autograd(True):
    for n in (2, 4, 6):
        x = torch.randn(n, 3, requires_grad=True)
        torch._dynamo.{mark}(x, 0)
        f(x).sum().backward()
        assert x.grad.shape == (n, 3)
print("captures", counters["compiled_autograd"]["captures"])
"""


def test_maybe_mark_dynamic_on_the_saved_input_lets_compiled_autograd_compile(
        tmp_path: Path) -> None:
    ran = run_variants({"marked": PROGRAM.format(mark="mark_dynamic"),
                        "fixed": PROGRAM.format(mark="maybe_mark_dynamic")}, tmp_path)
    assert not ran["fixed"].raised, ran["fixed"].log.read_text()[-2000:]
    assert ran["fixed"].stdout.strip().startswith("captures ")
    assert int(ran["fixed"].stdout.split()[-1]) >= 1  # (compiled autograd ran the backward)
    if ran["marked"].raised:  # a torch with the bug (2.4-2.5): diagnose reads its error so
        diag = diagnose_inputs([ran["marked"].log])
        (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
        assert "compiled autograd" in a.message and "maybe_mark_dynamic" in a.fix

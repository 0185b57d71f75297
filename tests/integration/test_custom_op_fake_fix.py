"""A torch.library.custom_op with no fake kernel (round 24): dynamo runs the call on fake
tensors, torch raises TorchRuntimeError "RuntimeError when making fake tensor call" whose
explanation says "There was no fake impl registered for <CustomOpDef(ns::op)> … Please use
`op.register_fake`", and the program stops. diagnose's one fix for the crash and its break is
torch's hint, the op named: before, the crash was told "if it runs uncompiled, report it to
PyTorch" and the break "in torch's own code". Applied: with ``@op.register_fake`` as printed,
the program compiles in one graph and runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
""" + COUNTING_BACKEND + """@torch.library.custom_op("dyncli_co{n}::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2
{fix}
def f(x):
    return scale(x + 1) - 1

out = torch.compile(f, backend=backend)(torch.ones(4))
print("graphs", len(graphs), out.tolist())
"""
# the fix as printed: @scale.register_fake on a function that returns empty tensors of the
# outputs' shapes
FIX = """
@scale.register_fake
def _(x):
    return torch.empty_like(x)
"""


@pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                    reason="torch.library.custom_op came in 2.4")
def test_the_printed_register_fake_lets_the_program_compile_and_run(tmp_path: Path) -> None:
    # (two namespaces: an op's namespace outlives dynamo's reset)
    runs = run_variants({"broken": PROGRAM.format(n=1, fix=""),
                         "fixed": PROGRAM.format(n=2, fix=FIX)}, tmp_path, logs="graph_breaks")
    text = runs["broken"].text
    if "There was no fake impl registered for <CustomOpDef(dyncli_co1::scale)>" not in text:
        pytest.skip(f"this torch says it otherwise: {text[-1500:]}")
    assert runs["broken"].raised and "graphs" not in runs["broken"].stdout
    diag = diagnose_logs([runs["broken"].log])
    fixes = [s.fix for s in diag.suggestions
             if s.kind in (AdviceKind.COMPILE_CRASH, AdviceKind.GRAPH_BREAK)]
    assert fixes, diag.suggestions
    for fix in fixes:  # the crash's and the break's: one answer, the op named
        assert "register a fake kernel for the custom op dyncli_co1::scale" in fix, fix
        assert "@scale.register_fake" in fix and "report it to PyTorch" not in fix, fix
    assert "@scale.register_fake" in diag.causes[0].fix, diag.causes[0]
    # applied: one graph, the op inside it, and the program's result
    assert not runs["fixed"].raised, runs["fixed"].text[-2000:]
    assert runs["fixed"].stdout.strip() == "graphs 1 [3.0, 3.0, 3.0, 3.0]", runs["fixed"].stdout

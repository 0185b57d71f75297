"""The fix for an operator with no fake kernel (GB0090 "Operator does not support running with
fake tensors", round 24): torch 2.7 on names the op only in the record's Developer debug context
("unsupported operator: dyncli_demo.scale.default"), and its hint is a doc link; diagnose keeps
that context and names the op in the fix: register a fake kernel for it with
torch.library.register_fake, or keep the call out of the compiled function.

Applied on real torch.compile: a torch.library.Library op with a CPU kernel only breaks f's
graph there (3 graphs: f's two around the break, and the op's Python kernel, run eagerly between
them, which dynamo compiles as a frame of its own); with the fake kernel registered as the fix
says, 1 graph (the op inside it) and no break.
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
""" + COUNTING_BACKEND + """lib = torch.library.Library("dyncli_fake{n}", "DEF")
lib.define("{op}(Tensor x) -> Tensor")
lib.impl("{op}", lambda x: x * 2, "CPU")
{fix}
def f(x):
    y = x.sin()
    z = torch.ops.dyncli_fake{n}.{op}(y)
    return z.cos()

out = torch.compile(f, backend=backend, fullgraph={fullgraph})(torch.randn(4))
print("graphs", len(graphs), tuple(out.shape))
"""
# the fix as printed: torch.library.register_fake("NS::scale") on a function that returns
# empty tensors of the outputs' shapes
FIX = """
@torch.library.register_fake("{qual}")
def _(x):
    return torch.empty_like(x)
"""


def _program(n: int, op: str = "scale", fix: str = "", fullgraph: bool = False) -> str:
    """The program in namespace dyncli_fake{n} (a Library's namespace and its fake kernel
    outlive dynamo's reset), its op named ``op``, with register_fake(``fix``) where given."""
    return PROGRAM.format(n=n, op=op, fix=FIX.format(qual=fix) if fix else "",
                          fullgraph=fullgraph)


@pytest.mark.skipif(tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 7),
                    reason="torch 2.7 on: the op only in the Developer debug context")
def test_the_printed_fake_kernel_fix_removes_the_break(tmp_path: Path) -> None:
    runs = run_variants({"broken": _program(1), "fixed": _program(2, fix="dyncli_fake2::scale")},
                        tmp_path, logs="graph_breaks")
    assert not any(v.raised for v in runs.values())
    assert "graphs 3 (4,)" in runs["broken"].stdout, runs["broken"].text[-2000:]
    text = runs["broken"].text
    assert "Operator does not support running with fake tensors" in text
    assert "Developer debug context: unsupported operator: dyncli_fake1.scale.default" in text
    diag = diagnose_logs([runs["broken"].log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert 'torch.library.register_fake("dyncli_fake1::scale")' in a.fix, a.fix
    (b,) = diag.graph_breaks
    assert b.debug == "unsupported operator: dyncli_fake1.scale.default"
    # applied: one graph, no break
    assert "graphs 1 (4,)" in runs["fixed"].stdout, runs["fixed"].text[-2000:]
    assert "Graph break" not in runs["fixed"].text


@pytest.mark.skipif(tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 7),
                    reason="torch 2.7 on: the op only in the Developer debug context")
def test_under_fullgraph_the_break_raised_is_said_to_stop_the_program_and_the_fix_holds(
        tmp_path: Path) -> None:
    # fullgraph=True raises the break as torch._dynamo.exc.Unsupported: the program's traceback
    # ends in it, with no graph-break record (TORCH_LOGS unset, torch's default)
    runs = run_variants({"raised": _program(3, fullgraph=True),
                         "fixed": _program(4, fix="dyncli_fake4::scale", fullgraph=True)},
                        tmp_path)
    assert runs["raised"].raised and "graphs" not in runs["raised"].stdout
    text = runs["raised"].text
    assert "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors" \
        in text, text[-3000:]
    diag = diagnose_logs([runs["raised"].log])
    (b,) = diag.graph_breaks
    assert b.raised and b.debug == "unsupported operator: dyncli_fake3.scale.default"
    cause = diag.causes[0]
    assert cause.stops and "raised as an error that stopped the program" in cause.title, \
        cause.title
    assert 'torch.library.register_fake("dyncli_fake3::scale")' in cause.fix, cause.fix
    # the same fix under fullgraph=True: it compiles in one graph and runs
    assert not runs["fixed"].raised, runs["fixed"].text[-2000:]
    assert "graphs 1 (4,)" in runs["fixed"].stdout


@pytest.mark.skipif(tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 7),
                    reason="torch 2.7 on: the op only in the Developer debug context")
def test_an_overloads_fix_names_the_overload_and_holds_where_the_bare_name_does_not(
        tmp_path: Path) -> None:
    # (round 25) torch finds a fake kernel by OpOverload.name(), "ns::scale.twice": round 24's
    # fix named "ns::scale", which registers a default overload the op does not have
    twice = "scale.twice"
    runs = run_variants({"broken": _program(5, twice),
                         "fixed": _program(6, twice, fix="dyncli_fake6::scale.twice"),
                         "bare": _program(7, twice, fix="dyncli_fake7::scale")},
                        tmp_path, logs="graph_breaks")
    assert "graphs 3 (4,)" in runs["broken"].stdout, runs["broken"].text[-2000:]
    diag = diagnose_logs([runs["broken"].log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert 'torch.library.register_fake("dyncli_fake5::scale.twice")' in a.fix, a.fix
    assert "graphs 1 (4,)" in runs["fixed"].stdout, runs["fixed"].text[-2000:]
    assert "Graph break" not in runs["fixed"].text
    # the name without its overload does not remove the break (or is refused)
    assert "graphs 1 (4,)" not in runs["bare"].stdout, runs["bare"].text[-2000:]

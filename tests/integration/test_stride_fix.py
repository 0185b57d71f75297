"""A stride recompile, read and fixed on this torch (torchtune#1402).

torchtune's ``input_pos`` was a slice of a position tensor whose length grew between two
prompts: ``tensor 'L['input_pos']' stride mismatch at index 0. expected 356, actual 357``.
Its sizes did not change; its strides did. diagnose calls it a stride recompile (not a size
one), says what automatic dynamic does with it (makes the strides dynamic at that recompile,
one recompile, as for a size: it is not a change dynamic shapes cannot cover), and prints the
fixes this test applies: the tensor contiguous, or marked dynamic up front. A change of layout
(a transposed view) compiles a graph per layout even with dynamic=True: only contiguous
removes that recompile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from logged import run_logged

from dyncli.diagnose.read import diagnose_inputs
from dyncli.diagnose.render import summary_line

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

# torchtune's case: a slice of the first 10 positions of bases 356, 357 and 358 wide
PROGRAM = """
import torch
def step(input_pos):
    return input_pos * 2 + 1
compiled = torch.compile(step, backend="eager")
for width in (356, 357, 358):
    compiled(torch.arange(2 * width, dtype=torch.float32).reshape(2, width)[:, :10])
"""


def step(input_pos: Any) -> Any:
    return input_pos * 2 + 1


def _sliced() -> Iterable[Any]:
    for width in (356, 357, 358):
        yield torch.arange(2 * width, dtype=torch.float32).reshape(2, width)[:, :10]


def _transposed() -> Iterable[Any]:
    yield torch.randn(4, 6)
    for n in (5, 7, 9):  # the same sizes, (4, 6), transposed: another layout
        yield torch.randn(6, n).t()[:4]


def _compiles(inputs: Iterable[Any], prepare: Callable[[Any], Any] = lambda t: t,
              dynamic: bool | None = None) -> int:
    """torch's own count of the graphs dynamo compiles for ``step`` over ``inputs``."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    compiled = torch.compile(step, backend="eager", dynamic=dynamic)
    for t in inputs:
        compiled(prepare(t))
    return int(counters["stats"]["unique_graphs"] - before)


def _marked(t: Any) -> Any:
    torch._dynamo.mark_dynamic(t, 0)
    return t


def test_a_stride_recompile_is_read_as_one_and_its_fixes_compile_once(tmp_path: Path) -> None:
    log = tmp_path / "stride.log"
    run_logged(PROGRAM, log, "recompiles", check=True)
    d = diagnose_inputs([log])
    assert [(r.compile_id, r.cause, r.kind) for r in d.recompiles] == [("0/1", "stride", "stride")]
    assert "size 0, stride 1, scalar 0, other 0" in summary_line(d)
    (finding,) = [s for s in d.suggestions if s.kind == "non-shape-recompile"]
    assert "strides changed, not its sizes" in finding.message
    assert "automatic dynamic makes the strides dynamic" in finding.message
    assert "will not fix" not in finding.message
    assert "input_pos.contiguous()" in finding.fix
    assert "mark_dynamic(input_pos, 0)" in finding.fix and "dynamic=True" in finding.fix

    # the program as it was: one recompile (automatic dynamic then covers the strides)
    assert _compiles(_sliced()) == 2
    # each fix the finding prints compiles once
    assert _compiles(_sliced(), lambda t: t.contiguous()) == 1
    assert _compiles(_sliced(), _marked) == 1
    assert _compiles(_sliced(), dynamic=True) == 1
    # a change of layout: a graph per layout even with dynamic=True; contiguous compiles once
    assert _compiles(_transposed()) == 2
    assert _compiles(_transposed(), dynamic=True) == 2
    assert _compiles(_transposed(), lambda t: t.contiguous()) == 1
    assert "each new layout (a transpose, channels-last) compiles again" in finding.message

"""Compiled autograd's backward recompiles (round 25): diagnose reads its cache misses
(TORCH_LOGS=compiled_autograd_verbose) and ranks them. The two fixes it prints are applied:
compiling with dynamic=True (compiled autograd then captures the backward's sizes dynamic
from the first backward) removes every capture after the first, and the forward's allow-list
entry removes the capture that followed the forward's recompile, not the one for changed sizes.
Counted by torch's own counter, counters["compiled_autograd"]["captures"].
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.autograd import DYNAMIC_FIX, OLD_DYNAMIC_FIX
from dyncli.diagnose.findings import AdviceKind, CauseKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
from torch._dynamo.utils import counters
torch._dynamo.config.compiled_autograd = True
{setup}
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))

def train_step(x):
    loss = model(x).sum()
    loss.backward()
    return loss

step = torch.compile(train_step, backend="aot_eager"{kwargs})
for batch in (4, 8, 8, 12):
    model.zero_grad()
    step(torch.randn(batch, 8))
print("captures", counters["compiled_autograd"]["captures"])
"""


# Round 26: torch reads torch._dynamo.config.compiled_autograd when torch.compile is called and
# turns compiled autograd on while the compiled fn runs (_dynamo/eval_frame.py's OptimizeContext):
# the flag set after torch.compile, or the backward run after fn returned, captures nothing, as
# DYNAMIC_FIX says
LATE = """
import torch
from torch._dynamo.utils import counters
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))

def train_step(x):
    loss = model(x).sum()
    {inside}
    return loss

{before}
step = torch.compile(train_step, backend="aot_eager", dynamic=True)
{after}
for batch in (4, 8, 8, 12):
    model.zero_grad()
    loss = step(torch.randn(batch, 8))
    {outside}
print("captures", counters["compiled_autograd"]["captures"])
"""
_FLAG = "torch._dynamo.config.compiled_autograd = True"


def test_the_flag_is_read_when_torch_compile_is_called_and_the_backward_runs_in_fn(
        tmp_path: Path) -> None:
    back = "loss.backward()"
    ran = run_variants({
        "as printed": LATE.format(inside=back, before=_FLAG, after="", outside=""),
        "flag after compile": LATE.format(inside=back, before="", after=_FLAG, outside=""),
        "backward outside": LATE.format(inside="", before=_FLAG, after="", outside=back),
    }, tmp_path)
    assert not any(v.raised for v in ran.values()), {k: v.stdout for k, v in ran.items()}
    assert ran["as printed"].stdout.split() == ["captures", "1"]
    assert ran["flag after compile"].stdout.split() == ["captures", "0"]
    assert ran["backward outside"].stdout.split() == ["captures", "0"]
    assert "set before that torch.compile call" in DYNAMIC_FIX
    assert "fn running the backward" in DYNAMIC_FIX


def test_the_backward_recompiles_and_their_fixes(tmp_path: Path) -> None:
    ran = run_variants({
        "run": PROGRAM.format(setup="", kwargs=""),
        "dynamic": PROGRAM.format(setup="", kwargs=", dynamic=True"),
        # (last: run_variants restores dynamo's config, not torch.compiler's)
        "sources": PROGRAM.format(setup="torch.compiler.config.dynamic_sources = \"L['x']:0\"",
                                  kwargs=""),
    }, tmp_path, logs="recompiles,compiled_autograd_verbose")
    assert not any(v.raised for v in ran.values())
    assert ran["run"].stdout.split() == ["captures", "3"]
    diag = diagnose_inputs([ran["run"].log])
    assert [(x.reason, x.first) for x in diag.autograd_misses] == [
        ("node", True), ("node", False), ("shapes", False)]
    shapes = next(c for c in diag.causes if c.kind is CauseKind.COMPILED_AUTOGRAD)
    # (dynamo's compile of the new capture is not in this log, which has no +dynamic: the
    # capture is counted, its compile is not)
    assert shapes.fix == DYNAMIC_FIX and shapes.recompiles == 1
    assert "1 backward capture(s)" in shapes.line()
    forward = next(c for c in diag.causes if c.kind is CauseKind.ALLOW_LIST)
    assert any(a.kind is AdviceKind.COMPILED_AUTOGRAD and a.key == "forward"
               for a in forward.findings)
    assert forward.recompiles == 2  # the forward's own and the backward's capture after it
    # dynamic=True: the first capture only; the forward's entry: the changed sizes' capture stays
    assert ran["dynamic"].stdout.split() == ["captures", "1"]
    # (2.4-2.6's form of the miss gets the same call on torch 2.7 or newer: this variant; that
    # older compiled autograd takes no dynamic, so the call alone would not help there)
    assert "torch 2.7 or newer" in OLD_DYNAMIC_FIX and "torch.compile(fn, dynamic=True)" in OLD_DYNAMIC_FIX
    assert ran["sources"].stdout.split() == ["captures", "2"]
    assert [x.reason for x in diagnose_inputs([ran["sources"].log]).autograd_misses] == [
        "node", "shapes"]

"""Two backend failures of paste hunt 32b, each read from a real run's traceback and its fix
applied on this torch.

torch.compile hands ``mode=`` to a backend other than inductor (``_TorchCompileWrapper``): a
backend function that takes no keyword raises TypeError, as the cudagraphs backend did before
pytorch#182989 (WanVideoWrapper#1041). diagnose says: drop ``mode=`` with that backend; applied,
the function compiles and runs.

A backend that runs the graph's ops on real tensors with the sizes the graph was traced with
(DeepSpeed DeepCompile's profiler, deepspeed#7229, #7311) hands a kernel a symbolic size under
dynamic shapes: c10's "SymIntArrayRef expected to contain only concrete integers". diagnose
says: keep the input static; applied (``dynamic=False``), the graph has no symbol and runs.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

MODE = """
import torch

def my_backend(gm, example_inputs):  # a backend function of (gm, example_inputs) alone
    return gm.forward

def f(x):
    return (x.sin() + 1).sum()

out = torch.compile(f, backend=my_backend, MODE)(torch.ones(4))
print(round(float(out), 3))
"""

# the profiler's way: real tensors of the example inputs' sizes (their hints), the symbolic
# sizes dynamo passes as graph inputs handed on as they are, the graph run node by node
PROFILER = """
import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily

def profiling_backend(gm, example_inputs):
    with unset_fake_temporarily():
        args = [torch.ones([s.node.hint if isinstance(s, torch.SymInt) else s for s in a.shape])
                if isinstance(a, torch.Tensor) else a for a in example_inputs]
        torch.fx.Interpreter(gm).run(*args)
    return gm.forward

def f(x):
    return x.reshape(x.shape[0] * x.shape[1]).cos().sum()

compiled = torch.compile(f, backend=profiling_backend, DYNAMIC)
print(round(float(compiled(torch.ones(3, 5))), 3))
"""


def _fix(log: Path) -> str:
    diag = diagnose_logs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    return a.fix


def test_a_backend_that_takes_no_mode_runs_without_it(tmp_path: Path) -> None:
    ran = run_variants({"as run": MODE.replace("MODE", 'mode="max-autotune"'),
                        "fixed": MODE.replace(", MODE", "")}, tmp_path)
    assert ran["as run"].raised
    assert "got an unexpected keyword argument 'mode'" in ran["as run"].log.read_text()
    fix = _fix(ran["as run"].log)
    assert fix.startswith("torch.compile passes its mode= to a backend other than inductor")
    assert "'my_backend' takes none" in fix
    assert not ran["fixed"].raised and ran["fixed"].stdout.strip() == "7.366"


def test_a_profiler_on_symbolic_sizes_runs_static(tmp_path: Path) -> None:
    ran = run_variants({"as run": PROFILER.replace("DYNAMIC", "dynamic=True"),
                        "fixed": PROFILER.replace("DYNAMIC", "dynamic=False")}, tmp_path)
    assert ran["as run"].raised
    text = ran["as run"].log.read_text()
    assert "SymIntArrayRef expected to contain only concrete integers" in text
    assert "While executing %" in text  # torch.fx's note on the node
    assert _fix(ran["as run"].log).startswith(
        "an op, kernel or backend without symbolic-shape support")
    assert not ran["fixed"].raised and ran["fixed"].stdout.strip() == str(round(15 * math.cos(1), 3))

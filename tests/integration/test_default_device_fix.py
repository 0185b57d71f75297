"""The default device set between two calls (torch.set_default_device, which pushes a
TorchFunctionMode from torch 2.3 on): dynamo's DEFAULT_DEVICE guard (``utils_device.
CURRENT_DEVICE == …``) or its mode-stack guard (``___check_torch_function_mode_stack()``)
fails. Before round 20 diagnose read it as "a Python value the code reads changed … move it out
of the compiled function" (deeplink.framework#607) or "keep the guarded property constant".
The printed fix, the default device set once before the first compiled call, is applied.
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
from torch._dynamo.utils import counters

@torch.compile(backend="eager")
def fn(x):
    return x + torch.ones(3)

x = torch.randn(3)
{before}
fn(x)
torch.set_default_device("cpu")
fn(x)
print("graphs", counters["stats"]["unique_graphs"])
"""


def test_the_default_device_set_between_calls_is_set_before_the_first(tmp_path: Path) -> None:
    # (the plain run first: it leaves the default device set, which the fixed run sets anyway)
    ran = run_variants({"run": PROGRAM.format(before=""),
                        "fixed": PROGRAM.format(before='torch.set_default_device("cpu")')},
                       tmp_path, logs="recompiles")
    assert not any(v.raised for v in ran.values())
    if ran["run"].stdout.strip() == "graphs 1":
        pytest.skip("this torch does not guard the default device")
    assert ran["run"].stdout.strip() == "graphs 2"
    diag = diagnose_inputs([ran["run"].log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert a.key == "default_device" and "default device" in a.message
    assert a.fix.startswith("set the default device once, before the first compiled call")
    assert "move it out" not in a.fix
    assert ran["fixed"].stdout.strip() == "graphs 1"

"""A compile whose guards fail on the frame they were made from (ComfyUI-SeedVR2#427).

torch checks a new compile's guards on the frame it traced; where they fail it raises
``AssertionError: Guard failed on the same frame it was created. This is a bug …`` with the
guard (SeedVR2's: a quantized weight's size, 2560 then 2720, under a block swap). diagnose
refused that paste as "not a torch log". Here a global weight is resized by code torch runs while
it traces (an ``assume_constant_result`` function): torch 2.15 raises exactly that; diagnose says
the compile raised and names the guard, and the fix it gives (resize before the compiled call)
is applied: the program runs, one graph.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
W = torch.ones(4)
@torch._dynamo.assume_constant_result
def grow():
    W.resize_(W.shape[0] + 1)  # the weight resized while torch traces
    return 1
def f(x):
    return x * W.sum() + {call}
compiled = torch.compile(f, backend="eager")
{before}
compiled(torch.ones(3))
from torch._dynamo.utils import counters
print(counters["stats"]["unique_graphs"])
"""




def test_guards_failing_on_their_own_frame_are_a_failed_compile_and_the_fix_runs(
        tmp_path: Path) -> None:
    # (and the fix: the weight resized before the compiled call)
    ran = run_variants({"selfcheck": PROGRAM.format(call="grow()", before=""),
                        "fixed": PROGRAM.format(call="1", before="grow()")}, tmp_path)
    log = ran["selfcheck"].log
    if not ran["selfcheck"].raised:  # (torch 2.11 traces it without the check failing)
        pytest.skip(f"torch {torch.__version__} does not raise for this program")
    assert "Guard failed on the same frame it was created" in log.read_text()
    d = diagnose_inputs([log])
    (a,) = [s for s in d.suggestions if s.kind == "guard-self-check"]
    assert a.message.startswith("compile [0/0] raised: its guards failed"), a.message
    assert "tensor 'G['W']' size mismatch at index 0. expected 4, actual 5" in a.message
    assert "force_parameter_static_shapes" not in a.fix
    assert a.fix.startswith("change what the guard names")
    assert d.causes[0].line().startswith("[1 failed compile(s)] compile [0/0] raised")
    # the fix: it compiles and runs, once
    fixed = ran["fixed"]
    assert not fixed.raised, fixed.text[-2000:]
    assert int(fixed.stdout.split()[-1]) == 1

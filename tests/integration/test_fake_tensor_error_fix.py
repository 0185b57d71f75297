"""The fix for torch's "Dynamo failed to run FX node with fake tensors" (TorchRuntimeError), as
ComfyUI prints it without its class (WanVideoWrapper#287, #1666; refused before round 20):
"run the same call without torch.compile; if it raises the same error, fix it in your code".

Applied to a program that makes #1666's error (q and the rope's freqs differ in tokens, after a
graph break, so the multiply runs in a resume function): without torch.compile the call raises
the same broadcast error (in ATen's words), so it is the code's; with the shapes made to match, the compiled call
runs. torch 2.15 prints the error as a graph-break message (GB4315) whose hint says the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"
PROGRAM = """
import sys
import torch
def f(q, freqs):
    print("step")  # a graph break: the multiply runs in torch_dynamo_resume_in_f_at_5
    return q * freqs
q, freqs = torch.randn(1, 6, 1, 4), torch.randn(1, {tokens}, 3, 4)
run = {run}
try:
    print("ran", tuple(run(q, freqs).shape))
except Exception as ex:  # ComfyUI's execution.py: the message without its class
    print(f"!!! Exception during processing !!! {{ex}}", file=sys.stderr)
"""


def test_the_fake_tensor_errors_fix_finds_the_codes_error_and_the_fixed_code_compiles(
        tmp_path: Path) -> None:
    diag = diagnose_logs([PASTED / "comfyui-wanvideowrapper-1666.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "run the same call without torch.compile; if it raises the same error, fix it in " \
        "your code" in a.fix
    compiled = 'torch.compile(f, backend="eager")'
    ran = run_variants({"compiled": PROGRAM.format(tokens=5, run=compiled),
                        "eager": PROGRAM.format(tokens=5, run="f"),
                        "fixed": PROGRAM.format(tokens=6, run=compiled)}, tmp_path)
    assert not any(v.raised for v in ran.values())
    assert "ran" not in ran["compiled"].stdout
    text = ran["compiled"].text
    assert "Dynamo failed to run FX node with fake tensors" in text
    assert "torch_dynamo_resume_in_f_at_5" in text and "Attempting to broadcast" in text
    # the fix: the same call without torch.compile raises the same error: the code's
    assert "ran" not in ran["eager"].stdout
    # (in ATen's words: "The size of tensor a (6) must match the size of tensor b (5) …")
    assert "must match the size of tensor b (5) at non-singleton dimension 1" in ran["eager"].text
    # so the code is fixed (freqs of q's tokens), and the compiled call runs
    assert "ran (1, 6, 3, 4)" in ran["fixed"].stdout

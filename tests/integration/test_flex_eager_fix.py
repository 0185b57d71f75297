"""flex_attention run unfused after its caller hit the recompile limit (paste hunt 33a,
vllm#27178), read from a real run's stderr and its fix applied on this torch.

A compiled function that calls flex_attention and recompiles at each new length hits the limit;
torch runs it uncompiled from then on, and flex_attention, called outside a compiled region,
warns that it runs its unfused implementation. diagnose says so as a note naming that limit
hit; applied (stop the frame's recompiles: the length dynamic), the frame stays compiled and
flex_attention never runs unfused. ``backend="eager"`` keeps the run short: dynamo traces
flex_attention as it would for inductor, and the warning is about the frame, not the backend.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

FLEX = """
import torch
import torch.nn.attention.flex_attention as fa
from torch.nn.attention.flex_attention import flex_attention

# (flex_attention warns once a process: its set cleared, so each variant says for itself)
getattr(fa, "_WARNINGS_SHOWN", set()).clear()
torch._dynamo.config.recompile_limit = 2

def attend(q, k, v):
    return flex_attention(q, k, v)

compiled = torch.compile(attend, backend="eager", DYNAMIC)
for n in (8, 16, 32, 64):
    q = torch.randn(1, 1, n, 16)
    out = compiled(q, q, q)
print(tuple(out.shape))
"""

_WARNING = "flex_attention called without torch.compile()"


def test_flex_attention_past_the_limit_runs_compiled_once_the_recompiles_stop(
        tmp_path: Path) -> None:
    if importlib.util.find_spec("torch.nn.attention.flex_attention") is None:
        pytest.skip("this torch has no flex_attention")
    ran = run_variants({"as run": FLEX.replace("DYNAMIC", "dynamic=False"),
                        "fixed": FLEX.replace("DYNAMIC", "dynamic=True")}, tmp_path)
    text = ran["as run"].log.read_text()
    if _WARNING not in text:
        pytest.skip("this torch's flex_attention does not warn so")
    assert not ran["as run"].raised and "hit config.recompile_limit" in text
    diag = diagnose_logs([ran["as run"].log])
    (note,) = [a for a in diag.notes if str(a.kind) == "flex-attention-eager"]
    assert "attend (line 1) comes before the warning" in note.message
    assert "stop its recompiles" in note.fix
    fixed = ran["fixed"].log.read_text()
    assert not ran["fixed"].raised and ran["fixed"].stdout.strip() == "(1, 1, 64, 16)"
    assert _WARNING not in fixed and "recompile_limit" not in fixed

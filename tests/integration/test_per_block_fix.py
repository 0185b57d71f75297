"""One forward shared by many blocks, each holding its own patch and key (ComfyUI's Wan with
LoRA: ComfyUI#14536, ComfyUI-TeaCache#150, paste hunt 9).

Each block is compiled on its own (``block.compile()``, as ComfyUI's compile node does), and its
patch reads a key that names the block (``diffusion_model.blocks.6.self_attn.k.weight``): torch
guards the one forward code object on that value, so every block compiles code of its own, on
the first pass already, and the ninth hits the limit. Before round 19 diagnose said "keep it
the same across calls … raising the limit only hides the recompiles": nothing changes across
calls. Now it says one compile per block, and both fixes it prints are applied: the limit set to
the number of blocks (each block keeps its code, no warning, and a second pass compiles
nothing), and the parent compiled once (one graph).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

BLOCKS = 12
PROGRAM = """
import torch
{limit}
class Patch:
    def __init__(self, key):
        self.key = key
    def __call__(self, w):
        return w * 2 if self.key.endswith("weight") else w

class Block(torch.nn.Module):
    def __init__(self, i):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))
        self.weight_function = [Patch(f"diffusion_model.blocks.{{i}}.self_attn.k.weight")]
    def forward(self, x):
        return x * self.weight_function[0](self.w)

class Model(torch.nn.Module):  # the model that calls its blocks, as Wan's forward does
    def __init__(self, n):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(i) for i in range(n))
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x

model = Model({n})
blocks = list(model.blocks)
{compile}
from torch._dynamo.utils import counters
with torch.no_grad():
    model(torch.ones(4))
    first = counters["stats"]["unique_graphs"]
    model(torch.ones(4))  # a second pass: the same blocks, the same patches
print(first, counters["stats"]["unique_graphs"])
"""
EACH = "for b in blocks:\n    b.compile(backend='eager')"


def _run(tmp_path: Path, **variants: dict[str, str]) -> dict[str, tuple[Path, list[int]]]:
    ran = run_variants({name: PROGRAM.format(**({"limit": "", "compile": EACH} | v), n=BLOCKS)
                        for name, v in variants.items()}, tmp_path)
    assert not any(v.raised for v in ran.values()), ran
    return {name: (v.log, [int(x) for x in v.stdout.split()]) for name, v in ran.items()}


def test_blocks_that_each_hold_their_key_compile_once_each(tmp_path: Path) -> None:
    # (and the fixes printed below: the limit, and the model compiled once)
    ran = _run(tmp_path, each={},
               limit={"limit": f"torch._dynamo.config.recompile_limit = {BLOCKS}"},
               parent={"compile": "model.compile(backend='eager')"})
    log, graphs = ran["each"]
    assert graphs == [8, 8]  # the ninth block and on ran eagerly, both passes
    diag = diagnose_inputs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "one forward shared by many instances" in a.message and "(block 7)" in a.message
    # (the recompiles the same run logs say it too: tests/unit/test_pasted_corpus.py)
    assert "only hides" not in a.fix
    # the fix as printed: the limit set to the number of blocks
    assert "set torch._dynamo.config.recompile_limit to at least the number of blocks" in a.fix
    log, graphs = ran["limit"]
    assert graphs == [BLOCKS, BLOCKS]  # every block compiled once, the second pass nothing
    assert "hit config.recompile_limit" not in log.read_text()
    # the other: the model that calls the blocks, compiled once
    assert "compile the model that calls the blocks, once" in a.fix
    log, graphs = ran["parent"]
    assert graphs == [1, 1]
    assert "hit config.recompile_limit" not in log.read_text()

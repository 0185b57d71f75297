"""A size pinned by broadcasting against a tensor of fixed size (pytorch#107200).

Under dynamic=True BERT's batch was specialized to 16 at ``embeddings = inputs_embeds +
token_type_embeddings``: the token-type ids came from a buffer expanded to the benchmark's batch,
and torch (``infer_size``) made the two sizes equal. diagnose said to rewrite "the branch" with
torch.where or torch.cond, for a line with no branch. It now says the op broadcasts the size
against a tensor fixed at 16 and to make that tensor follow the input; applied here: one graph
for batches 16, 24 and 32, where the program as it was cannot run another batch at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from logged import run_logged

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("tt", torch.zeros(16, 8))  # made for a batch of 16
    def forward(self, x):
        return x + self.tt
torch.compile(Embed(), backend="eager", dynamic=True)(torch.randn(16, 8))
"""


class Fixed(torch.nn.Module):  # the fix: the buffer follows the input's batch
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("tt", torch.zeros(1, 8))

    def forward(self, x: Any) -> Any:
        return x + self.tt.expand(x.shape[0], -1)


class AsItWas(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("tt", torch.zeros(16, 8))

    def forward(self, x: Any) -> Any:
        return x + self.tt


def test_a_size_pinned_by_a_broadcast_is_said_so_and_the_operand_following_the_input_compiles_once(
        tmp_path: Path) -> None:
    log = tmp_path / "broadcast.log"
    run_logged(PROGRAM, log, "+dynamic", check=True)
    d = diagnose_inputs([log])
    (a,) = [s for s in d.suggestions if "L['x'].size()[0] was specialized to 16" in s.message]
    assert "broadcasts it against a tensor whose size is fixed at 16" in a.message, a.message
    assert a.fix.startswith("no branch to rewrite: make the other operand follow")
    assert "torch.cond" not in a.fix

    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    fixed = torch.compile(Fixed(), backend="eager", dynamic=True)
    for batch in (16, 24, 32):
        assert fixed(torch.randn(batch, 8)).shape == (batch, 8)
    assert counters["stats"]["unique_graphs"] - before == 1
    with pytest.raises(Exception, match="size"):  # as it was: no other batch runs at all
        AsItWas()(torch.randn(24, 8))

"""A compiled ``optimizer.step`` whose scheduler changes a float hyperparameter (pytorch#107076).

AdamW's ``step`` hit the recompile limit on ``L['self'].param_groups[0]['lr'] == 0.0``: an LR
scheduler wrote a new float at every step. diagnose read the guard as "an int attribute of a
module" and said to compile the model once; ``self`` is the optimizer and the value a float. The
thread's fix, and PyTorch's recipe, is the LR as a tensor. A cycled beta1 (pytorch#133898,
OneCycleLR) is written as a new float whatever was passed in: there the fix is
``cycle_momentum=False``. Each fix is applied here, on the torch that made the log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

STEPS = 8
# {lr}: the optimizer's lr; {sched}: the scheduler; {limit}: the recompile limit set, or none
PROGRAM = """
import torch
import torch._dynamo.config as dynamo_config
if {limit}:  # the limit's name: cache_size_limit before 2.7, recompile_limit from 2.7
    setattr(dynamo_config, "recompile_limit" if hasattr(dynamo_config, "recompile_limit")
            else "cache_size_limit", {limit})
p = torch.nn.Parameter(torch.randn(4, 4))
opt = torch.optim.AdamW([p], lr={lr})
sched = {sched}
step = torch.compile(opt.step, backend="eager")
for _ in range({steps}):
    p.grad = torch.randn(4, 4)
    step()
    sched.step()
from torch._dynamo.utils import counters
print(counters["stats"]["unique_graphs"])
"""
LAMBDA = "torch.optim.lr_scheduler.LambdaLR(opt, lambda it: (it + 1) / 10)"
ONE_CYCLE = ("torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=100, "
             "cycle_momentum={cycle})")


def _run(tmp_path: Path, logs: str, **variants: dict[str, Any]) -> dict[str, tuple[Path, int]]:
    """Each variant of the program (its lr, sched, limit) in one process (TORCH_LOGS=logs; none:
    torch's default warnings): its log and its graphs."""
    ran = run_variants({name: PROGRAM.format(**({"lr": "0.01", "sched": LAMBDA, "limit": 0} | v),
                                             steps=STEPS)
                        for name, v in variants.items()}, tmp_path, logs)
    assert not any(v.raised for v in ran.values()), ran
    return {name: (v.log, int(v.stdout.split()[-1])) for name, v in ran.items()}


@pytest.mark.parametrize("logs,limit", [("recompiles", 0), ("", 1)],
                         ids=["recompile-record", "limit-warning"])
def test_a_float_lr_is_an_optimizer_hyperparameter_and_a_tensor_lr_compiles_once(
        tmp_path: Path, logs: str, limit: int) -> None:
    # (and the fix: the lr as a tensor, which the scheduler fills in place)
    ran = _run(tmp_path, logs, opt={"limit": limit}, fixed={"lr": "torch.tensor(0.01)"})
    log, graphs = ran["opt"]
    d = diagnose_inputs([log])
    said = [s for s in d.suggestions if "param_groups[0]['lr']" in s.message]
    assert said, [(s.kind, s.message) for s in d.suggestions]
    for s in said:
        assert "optimizer's float hyperparameter" in s.message, s.message
        assert "lr=torch.tensor(0.01)" in s.fix, s.fix
        assert "module" not in s.message + s.fix, (s.message, s.fix)
    if limit:  # (the limit stops the second compile)
        assert any(s.kind == "recompile-limit" for s in said)
        return
    assert graphs == 2
    assert ran["fixed"][1] == 1


def test_a_cycled_beta1_is_the_schedulers_and_cycle_momentum_false_compiles_once(
        tmp_path: Path) -> None:
    ran = _run(tmp_path, "recompiles",
               opt={"lr": "torch.tensor(0.001)", "sched": ONE_CYCLE.format(cycle=True)},
               fixed={"lr": "torch.tensor(0.001)", "sched": ONE_CYCLE.format(cycle=False)})
    log, graphs = ran["opt"]
    d = diagnose_inputs([log])
    (s,) = [s for s in d.suggestions if "param_groups[0]['betas'][0]" in s.message]
    assert "cycle_momentum=False" in s.fix, s.fix
    assert graphs == 2
    assert ran["fixed"][1] == 1

"""An op whose output size depends on the data (``torch.nonzero``) breaks the graph: torch's
"Dynamic shape operator" (gb0036). Round 22 (paste hunt 17: pytorch#114220, #165421) prints
torch's own answer, ``capture_dynamic_output_shape_ops = True``, where it printed "move the
untraceable call out". The printed setting is applied: the same program compiles without the
break.
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
import torch._dynamo
from torch._dynamo.utils import counters
{before}

@torch.compile(backend="eager")
def fn(x):
    idx = torch.nonzero(x > 0)
    return idx.sum() + x.sum()

fn(torch.randn(5))
print("breaks", sum(counters["graph_break"].values()))
"""
SETTING = "torch._dynamo.config.capture_dynamic_output_shape_ops = True"


def test_a_data_dependent_output_op_gets_torchs_setting_and_the_setting_removes_the_break(
        tmp_path: Path) -> None:
    ran = run_variants({"run": PROGRAM.format(before=""),
                        "fixed": PROGRAM.format(before=SETTING)},
                       tmp_path, logs="graph_breaks")
    assert not any(v.raised for v in ran.values())
    assert ran["run"].stdout.strip() == "breaks 1"
    diag = diagnose_inputs([ran["run"].log])
    (cause,) = [c for c in diag.causes if c.graph_breaks]
    # the op is named in the fix (2.11 on) or in torch's reason, the cause's key (2.4.1)
    assert "nonzero" in cause.fix + cause.key and SETTING in cause.fix
    assert not cause.fix.startswith("move the untraceable call out")
    assert ran["fixed"].stdout.strip() == "breaks 0"

"""A torch.func traceback is refused as a torch.func error, not read as torch.compile's
(pytorch#186301: vmap over a Python branch on a tensor's value, run eagerly; its traceback goes
through torch/_functorch/apis.py and vmap.py, beside AOTAutograd). The refusal's hint names
torch.func's own rule and its way out (torch.where for the branch). Applied on real torch:
the program's traceback is refused so, and the branch written with torch.where runs under
vmap and gives the loop's result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch

def scale(x):
    BODY

batch = torch.tensor([[1.0, -2.0], [-3.0, -4.0], [5.0, 6.0]])
print([round(v, 3) for v in torch.func.vmap(scale)(batch).flatten().tolist()])
"""
BRANCH = "if x.sum() > 0:\n        return x * 2\n    return x - 1"
WHERE = "return torch.where(x.sum() > 0, x * 2, x - 1)"


def test_a_vmap_branch_is_refused_as_torch_funcs_and_torch_where_runs(tmp_path: Path) -> None:
    ran = run_variants({"branch": PROGRAM.replace("BODY", BRANCH),
                        "where": PROGRAM.replace("BODY", WHERE)}, tmp_path)
    assert ran["branch"].raised and not ran["where"].raised
    text = ran["branch"].log.read_text()
    assert "data-dependent control flow" in text and "_functorch" in text
    with pytest.raises(InputError) as err:
        diagnose_logs([ran["branch"].log])
    assert "torch.func's transforms" in str(err.value)
    assert "torch.where" in (err.value.hint or "")
    # the hint applied: the branch as torch.where runs under vmap, as the loop would compute it
    expect = [round(v, 3) for row in ([1.0, -2.0], [-3.0, -4.0], [5.0, 6.0])
              for v in ([2 * t for t in row] if sum(row) > 0 else [t - 1 for t in row])]
    assert ran["where"].stdout.strip().splitlines()[-1] == str(expect)

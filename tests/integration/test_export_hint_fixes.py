"""export's Dim.DYNAMIC on a dim whose example has size 1, and the fixes diagnose prints, applied.

torch.export raises ``ValueError: Found the following conflicts between user-specified ranges
and inferred ranges from model tracing: - Received user-specified dim hint Dim.DYNAMIC(…), but
export 0/1 specialized due to hint of 1 for dimension inputs['x'].shape[0].`` (2.11 on: torch/
_export/non_strict_utils.py). Before round 20 diagnose called it a compiler crash ("report it",
"suppress_errors", which does nothing for export; paste hunt 13, problem 3). Here it raises, and
both printed fixes (an example of size 2 or more along that dim; Dim.AUTO) let export run.
"Specializations unexpectedly required" (export's forced specializations) is read from the 2.3
paste only (tests/data/pasted/pytorch-126127.log): 2.11 and 2.15 export such relations with
runtime asserts instead (paste hunt 13 tried; round 20 tried ``x.view(b*c // 16, 16)`` and
``x.reshape(-1) + y.reshape(-1)``), so its Dim.STATIC fix has no program to apply it to here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_logged, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

EXPORT = """
import torch
from torch.export import Dim, export

class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2

ep = export(Double(), (torch.randn({n}, 3),), dynamic_shapes={{"x": {{0: {dim}}}}})
print("exported", ep.module()(torch.randn({run}, 3)).shape)
"""


def test_dim_dynamic_on_a_size_one_example_gets_the_example_and_auto_fixes(tmp_path: Path) -> None:
    ran = run_variants({"raised": EXPORT.format(n=1, run=1, dim="Dim.DYNAMIC"),
                        "two": EXPORT.format(n=2, run=1, dim="Dim.DYNAMIC"),
                        "auto": EXPORT.format(n=1, run=1, dim="Dim.AUTO")}, tmp_path)
    assert ran["raised"].raised and "0/1 specialized due to hint of 1" in ran["raised"].text
    diag = diagnose_inputs([ran["raised"].log])
    assert not diag.compile_crashes
    (a,) = diag.suggestions
    assert a.kind is AdviceKind.CONSTRAINT_VIOLATION and "inputs['x'].shape[0]" in a.message
    assert "suppress_errors" not in a.fix and "report it" not in a.fix
    # the example printed: size 2 along that dim, the Dim kept dynamic
    assert "example input of size 2 or more" in a.fix
    # (and, as the fix says, the exported program still takes a size of 1)
    assert not ran["two"].raised, ran["two"].text
    assert ran["two"].stdout.startswith("exported torch.Size([1, 3])"), ran["two"].stdout
    # the other printed: Dim.AUTO keeps the size-1 example and exports without raising
    assert "Dim.AUTO" in a.fix
    assert not ran["auto"].raised, ran["auto"].text
    assert ran["auto"].stdout.startswith("exported torch.Size([1, 3])"), ran["auto"].stdout


CHECKED = """
import torch
torch._dynamo.config.capture_scalar_outputs = True

@torch.compile(backend="eager", fullgraph=True)
def f(t, x):
    n = t.item()
    {check}
    return x[:n].sum() + torch.zeros(n).sum()

print("ran", f(torch.tensor(3), torch.randn(8)).shape)
"""


def test_the_data_dependent_fix_names_a_check_this_torch_traces(tmp_path: Path) -> None:
    # diagnose's fix for a size read from data is torch._check(n >= 0) (torch stopped suggesting
    # torch._check_is_size, pytorch#164664): it traces under fullgraph on this torch
    run = run_logged(CHECKED.format(check="torch._check(n >= 0)"), tmp_path / "checked.log",
                     check=True)
    assert run.stdout.startswith("ran"), run.stdout


NAMED = EXPORT.replace("from torch.export import Dim, export",
                       "from torch.export import Dim, export\nbatch = Dim('batch', min=1, max=32)")


def test_a_named_dim_on_a_size_one_example_gets_the_example_and_auto_fixes(
        tmp_path: Path) -> None:
    # a named Dim (min=1) and an example of size 1 (pytorch#176349, 2026; #121038 on 2.3):
    # 2.15 raises "You marked batch as dynamic but your code specialized it to be a constant
    # (1)", and export's own suggestion is "batch = 1". Before round 23 diagnose said "the
    # model specialized it … change the line that pins it": no line does, the example does
    ran = run_variants({"raised": NAMED.format(n=1, run=1, dim="batch"),
                        "two": NAMED.format(n=2, run=1, dim="batch"),
                        "auto": NAMED.format(n=1, run=1, dim="Dim.AUTO")}, tmp_path)
    assert ran["raised"].raised and "constant (1)" in ran["raised"].text
    diag = diagnose_inputs([ran["raised"].log])
    assert not diag.compile_crashes  # (the chained traceback re-raises the violation)
    (a,) = diag.suggestions
    assert a.kind is AdviceKind.CONSTRAINT_VIOLATION and "example input has size 1" in a.message
    assert "change the line" not in a.fix and "example input of size 2 or more" in a.fix
    assert not ran["two"].raised, ran["two"].text
    assert ran["two"].stdout.startswith("exported torch.Size([1, 3])"), ran["two"].stdout
    assert "Dim.AUTO" in a.fix
    assert not ran["auto"].raised, ran["auto"].text
    assert ran["auto"].stdout.startswith("exported torch.Size([1, 3])"), ran["auto"].stdout

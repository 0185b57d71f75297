"""A replacement whose guard the paste left out, and the fix diagnose prints for it, applied.

torch logs ``set_replacement s77 = 8`` and, next to it, the ``eval Eq(s77, 8) [guard added]``
line that names the code (2.15: before it). A paste that keeps the replacement and not
the guard (pytorch#121080, paste hunt 18) was told "inside framework code" and to run with
TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL, which shows where the symbol was made, not where it
was pinned. Here: the replacement alone says the paste does not show where, and the fix's two
steps hold on a real run: the +dynamic log has the eval line on that symbol, naming the user's
line, and TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED with that guard prints its stack.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from logged import run_logged

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PINNED = """
import torch

@torch.compile(backend="eager", dynamic=True)
def f(x):
    if x.size(0) == 8:
        return x * 2
    return x + 1

print(f(torch.randn(8)).shape)
"""


def test_a_replacement_without_its_guard_names_the_eval_line_to_paste(tmp_path: Path) -> None:
    log = tmp_path / "full.log"
    run_logged(PINNED, log, logs="+dynamic", check=True)
    text = log.read_text()
    rep = re.search(r"set_replacement (s\d+) = 8\b", text)
    assert rep is not None, text[-3000:]
    sym = rep[1]
    guard = re.search(rf"eval (Eq\({sym}, 8\)) \[guard added\].*<string>:6", text)
    assert guard is not None, text[-3000:]  # the line the fix says to paste: the user's line
    cut = tmp_path / "cut.log"
    cut.write_text("".join(t for t in text.splitlines(keepends=True) if "[guard added]" not in t))
    (a,) = [x for x in diagnose_inputs([cut]).suggestions
            if x.kind is AdviceKind.FRAMEWORK_SPECIALIZATION]
    assert "the paste does not show" in a.message and "inside framework code" not in a.message
    assert f"line on {sym}" in a.fix and "CREATE_SYMBOL" not in a.fix
    # the fix's other step: the guard's whole stack, asked for by its text
    stacked = tmp_path / "stack.log"
    run_logged(PINNED, stacked, logs="+dynamic", check=True,
               env={"TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED": guard[1]})
    assert "User Stack (most recent call last)" in stacked.read_text()
    # the full log reads the user's line, as before
    full = diagnose_inputs([log])
    assert any(x.kind is AdviceKind.USER_SPECIALIZATION for x in full.suggestions)

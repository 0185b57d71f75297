"""A setting torch 2.7 renamed, set on an older torch (paste hunt 23: ComfyUI-WanVideoWrapper#366
and triton-windows#105, torch 2.5.1 raising ``AttributeError: torch._dynamo.config.recompile_limit
does not exist``). diagnose's fix: set ``torch._dynamo.config.cache_size_limit`` instead, which
every release reads. Applied on real torch.compile: the paste's line gets the fix, and a program
that sets cache_size_limit as the fix says runs without raising and its compiles stop at that
limit (2.7 on keep the old name as an alias of recompile_limit; the older torch itself is not
installed here).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

FIXED = """
import torch
torch._dynamo.config.cache_size_limit = 2
print("limit", torch._dynamo.config.recompile_limit)

@torch.compile(backend="eager", dynamic=False)
def f(x, n):
    return x * n

for n in range(5):
    f(torch.ones(2), n)
"""


def test_the_old_name_the_fix_sets_is_the_limit_torch_applies(tmp_path: Path) -> None:
    paste = tmp_path / "paste.log"
    paste.write_text("AttributeError: torch._dynamo.config.recompile_limit does not exist\n")
    (a,) = diagnose_logs([paste]).suggestions
    assert "torch._dynamo.config.cache_size_limit" in a.fix
    fixed = run_variants({"fixed": FIXED}, tmp_path, logs="recompiles")["fixed"]
    assert not fixed.raised and "limit 2" in fixed.stdout
    (hit,) = diagnose_logs([fixed.log]).recompile_limits
    assert hit.limit == "2"

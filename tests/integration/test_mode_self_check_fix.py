"""A guard self-check on a TorchFunctionMode's state (paste hunt 34d: pytorch#172088, a Jan 2026
nightly's ``AssertionError: Guard failed on the same frame it was created … Guard fail reason:
0/0: ___get_torch_function_mode_stack_at(0).count == 5``; pytorch#165012's DebugMode). diagnose's
fix: torch's bug (pytorch#177095), a newer torch, or the call uncompiled under the mode. Applied
on the installed torch: the issue's program (a mode counting its calls around a compiled
function) compiles and runs without raising, and so does the call under torch.compiler.disable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

MODE = """
import torch
from torch.overrides import TorchFunctionMode

class CounterMode(TorchFunctionMode):
    def __init__(self):
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))

def f(x):
    return x.sin()
"""
NEWER = MODE + """
g = torch.compile(f, backend="eager")
with CounterMode() as m:
    g(torch.randn(3))
    g(torch.randn(3))
print("counted", m.count > 0)
"""
UNCOMPILED = MODE + """
g = torch.compiler.disable(torch.compile(f, backend="eager"))
with CounterMode() as m:
    g(torch.randn(3))
print("counted", m.count > 0)
"""


def test_the_mode_program_compiles_on_this_torch(tmp_path: Path) -> None:
    paste = tmp_path / "paste.log"
    paste.write_text("  AssertionError: Guard failed on the same frame it was created. This is a "
                     "bug - please create an issue.\n  Guard fail reason: 0/0: "
                     "___get_torch_function_mode_stack_at(0).count == 5\n")
    (a,) = diagnose_logs([paste]).suggestions
    assert "pytorch#177095" in a.fix and "torch.compiler.disable" in a.fix
    ran = run_variants({"newer": NEWER, "uncompiled": UNCOMPILED}, tmp_path)
    for name, variant in ran.items():
        assert not variant.raised and "counted True" in variant.stdout, (name, variant.stdout)
        assert "Guard failed on the same frame" not in variant.log.read_text(), name

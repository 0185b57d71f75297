"""An AOT-compiled function (torch.compile(...).aot_compile, 2.10 on) checks its guards on every
call and cannot recompile: a call they reject raises "RuntimeError: GuardManager check failed,
reason: GuardDebugInfo(… verbose_code_parts=[…])" (vLLM's AOT compile on torch's thread count,
vllm#27286; vLLM turned the check off, vllm#27288). diagnose read it as "an error in torch's
compiler … report it"; it now says the function refused the call, the guards it names, and how
to compile for the inputs it gets (dynamic=True, or mark_dynamic on the example) or, for a guard
on something the program does not need, disable_guard_check(). Applied on real torch: a size the
compile pinned (raises; compiled with it dynamic, or marked, the call runs) and a changed thread
count (raises; with the check off, the call runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
if not hasattr(torch.compile(lambda x: x), "aot_compile"):
    pytest.skip("this torch has no aot_compile", allow_module_level=True)

HEAD = """
import torch

def f(x):
    return x + 1

ex = torch.ones(3)
"""
PROGRAMS = {
    "pinned": HEAD + """
aot = torch.compile(f, backend="eager", fullgraph=True).aot_compile(((ex,), {}))
print(aot(torch.ones(4)).tolist())
""",
    "dynamic": HEAD + """
aot = torch.compile(f, backend="eager", dynamic=True, fullgraph=True).aot_compile(((ex,), {}))
print(aot(torch.ones(4)).tolist())
""",
    "marked": HEAD + """
torch._dynamo.mark_dynamic(ex, 0)
aot = torch.compile(f, backend="eager", fullgraph=True).aot_compile(((ex,), {}))
print(aot(torch.ones(4)).tolist())
""",
    "threads": HEAD + """
aot = torch.compile(f, backend="eager", fullgraph=True).aot_compile(((ex,), {}))
torch.set_num_threads(torch.get_num_threads() + 1)
print(aot(torch.ones(3)).tolist())
""",
    "unchecked": HEAD + """
aot = torch.compile(f, backend="eager", fullgraph=True).aot_compile(((ex,), {}))
aot.disable_guard_check()
torch.set_num_threads(torch.get_num_threads() + 1)
print(aot(torch.ones(3)).tolist())
""",
}


def _fix(log: Path) -> str:
    diag = diagnose_logs([log])
    (crash,) = diag.compile_crashes
    assert "GuardManager check failed" in crash.error
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "report it" not in a.fix
    return a.fix


def test_an_aot_compiled_functions_refused_call_is_fixed_as_said(tmp_path: Path) -> None:
    ran = run_variants(PROGRAMS, tmp_path)
    assert ran["pinned"].raised and ran["threads"].raised
    pinned = _fix(ran["pinned"].log)
    assert "size mismatch at index 0. expected 3, actual 4" in pinned
    assert "dynamic=True" in pinned and "mark_dynamic" in pinned
    threads = _fix(ran["threads"].log)
    assert "GLOBAL_STATE changed: num_threads" in threads and "disable_guard_check()" in threads
    # the advice applied: each runs
    for name, out in (("dynamic", "[2.0, 2.0, 2.0, 2.0]"), ("marked", "[2.0, 2.0, 2.0, 2.0]"),
                      ("unchecked", "[2.0, 2.0, 2.0]")):
        assert not ran[name].raised, name
        assert ran[name].stdout.strip().splitlines()[-1] == out, (name, ran[name].stdout)

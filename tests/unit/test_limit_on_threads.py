"""How diagnose's limit fix raises the limit so that every thread sees it (TensorRT-LLM#18492).

From torch 2.12 an assignment to ``torch._dynamo.config`` holds only on the thread that makes it
(``torch/utils/_config_module.py``: a ContextVar per entry, and ``config.patch`` too), and
``torch.compile(…, recompile_limit=N)`` holds on every thread (2.12 on). A fix that advises
raising recompile_limit names the argument; a warning of cache_size_limit is torch before 2.7
(a process-wide assignment), so nothing is added there; a fix that only says raising it hides
the recompiles says no more. Applied on a thread: tests/integration/test_limit_thread_fix.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textbuiltins import ON_CALLING_THREAD

_PREFIX = "W0101 12:00:00.000000 123 torch/_dynamo/convert_frame.py:1000] [0/8] "
_WARNING = """torch._dynamo hit config.{name} ({limit})
   function: 'f' (/app/serve.py:3)
   last reason: 0/7: {reason}
To log all recompilation reasons, use TORCH_LOGS="recompiles".
"""
_KWARG = "pass it to torch.compile: torch.compile(…, recompile_limit=N) (torch 2.12 on)"
_THREAD = "holds only on the thread that makes it"


def _fix(tmp_path: Path, name: str, limit: int, reason: str) -> str:
    log = tmp_path / "run.log"
    log.write_text("".join(_PREFIX + line + "\n" for line in _WARNING.format(
        name=name, limit=limit, reason=reason).splitlines()))
    (a,) = [s for s in diagnose_logs([log]).suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    return a.fix


def test_a_fix_that_raises_recompile_limit_names_the_argument(tmp_path: Path) -> None:
    fix = _fix(tmp_path, "recompile_limit", 8, "n == 7")  # an int under dynamic=False
    assert "raise torch._dynamo.config.recompile_limit if these values are expected" in fix
    assert _KWARG in fix and _THREAD in fix
    assert fix.count(_THREAD) == 1


def test_the_accumulated_limit_is_set_on_the_compiling_thread(tmp_path: Path) -> None:
    fix = _fix(tmp_path, "accumulated_recompile_limit", 256, "n == 7")
    assert f"set it {ON_CALLING_THREAD}: from torch 2.12" in fix and _KWARG not in fix


@pytest.mark.parametrize("name", ["cache_size_limit", "accumulated_cache_size_limit"])
def test_before_2_7_an_assignment_is_process_wide(tmp_path: Path, name: str) -> None:
    fix = _fix(tmp_path, name, 8, "n == 7")
    assert f"raise torch._dynamo.config.{name} if these values are expected" in fix
    assert _THREAD not in fix


def test_a_fix_that_does_not_raise_the_limit_says_nothing_of_threads(tmp_path: Path) -> None:
    # a size pinned by a compile after the first: raising only hides the recompiles
    fix = _fix(tmp_path, "recompile_limit", 8,
               "tensor 'x' size mismatch at index 0. expected 8, actual 9")
    assert "only hides the recompiles" in fix and _THREAD not in fix


# (round 25) every text that advises raising the limit says how to raise it on every thread,
# once, from one place (guard_kinds.on_every_thread): the limit's own finding, the INSTANCE and
# INSTANCE_TYPE rows, the per-instance row and the int attribute's allow-list fix
@pytest.mark.parametrize("reason", ["___check_obj_id(L['self'], 140234)",
                                    "___check_type_id(L['self'], 943)",
                                    "L['self'].blocks.3.key == 'a'",
                                    "L['self'].layer_idx == 7"])
def test_each_fix_that_raises_the_limit_says_it_once(tmp_path: Path, reason: str) -> None:
    fix = _fix(tmp_path, "recompile_limit", 8, reason)
    assert fix.count(_THREAD) == 1 and fix.count(_KWARG) == 1, fix
    assert _THREAD not in _fix(tmp_path, "cache_size_limit", 8, reason)


_RECOMPILE = ("V0101 12:00:00.000000 123 torch/_dynamo/guards.py:3000] [0/{n}] [__recompiles] "
              "Recompiling function forward in /app/model.py:10\n"
              "V0101 12:00:00.000000 123 torch/_dynamo/guards.py:3000] [0/{n}] [__recompiles] "
              "    triggered by the following guard failure(s):\n"
              "V0101 12:00:00.000000 123 torch/_dynamo/guards.py:3000] [0/{n}] [__recompiles] "
              "    - 0/{p}: {reason}\n")


@pytest.mark.parametrize(("reason", "kind"), [
    ("___check_obj_id(L['self'], 140234)", AdviceKind.NON_SHAPE),
    ("L['self'].k == {p}", AdviceKind.SCALAR_RECOMPILE)])
def test_a_recompile_finding_that_raises_the_limit_says_it_once(
        tmp_path: Path, reason: str, kind: AdviceKind) -> None:
    log = tmp_path / "recompiles.log"
    log.write_text("".join(_RECOMPILE.format(n=n, p=n - 1, reason=reason.format(p=n - 1))
                           for n in (1, 2, 3)))
    found = [s for s in diagnose_logs([log]).suggestions if s.kind is kind]
    assert found, [s.kind for s in diagnose_logs([log]).suggestions]
    for a in found:
        assert "raise the" in a.fix and a.fix.count(_THREAD) == 1, a.fix

"""Guards on a class defined inside a function: its identity (comfy-aimdo#13) or an object's type.

comfy_aimdo's ``get_tensor_from_raw_ptr`` defined a ``Holder`` class in its body: every call made a
new class, torch guarded the identity of the one it compiled for, and the function hit the
recompile limit (64). diagnose used to say "pass the same object on every call", which the caller
cannot do. It now names the class and says to define it at module level; applied here, the
compiles fall from two per call to the two frames of the one graph break.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from logged import run_logged

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

CALLS = 5
# the shape of comfy_aimdo/torch.py: a class statement in the function, a graph break, an object
PROGRAM = f"""
import torch
import torch._dynamo.config as dynamo_config
def get_tensor(x):
    class Holder:
        pass
    y = x + 1
    torch._dynamo.graph_break()
    holder = Holder()
    holder.t = y
    return holder.t * 2
# the limit's name: cache_size_limit before 2.7, recompile_limit from 2.7
setattr(dynamo_config, "recompile_limit" if hasattr(dynamo_config, "recompile_limit")
        else "cache_size_limit", 3)
compiled = torch.compile(get_tensor, backend="eager")
for _ in range({CALLS}):
    compiled(torch.randn(3))
"""


class Holder:
    pass


def local_class(x: Any) -> Any:
    class Holder:
        pass
    y = x + 1
    torch._dynamo.graph_break()
    holder = Holder()
    holder.t = y  # type: ignore[attr-defined]
    return holder.t * 2  # type: ignore[attr-defined]


def module_class(x: Any) -> Any:  # the fix: Holder defined once, at module level
    y = x + 1
    torch._dynamo.graph_break()
    holder = Holder()
    holder.t = y  # type: ignore[attr-defined]
    return holder.t * 2  # type: ignore[attr-defined]


def _compiles(fn: Callable[[Any], Any]) -> int:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    compiled = torch.compile(fn, backend="eager")
    for _ in range(CALLS):
        compiled(torch.randn(3))
    return int(counters["stats"]["unique_graphs"] - before)


@pytest.mark.parametrize("logs", ["recompiles", ""])  # every recompile; the limit's warning only
def test_a_class_defined_in_the_function_is_named_and_moving_it_out_compiles_once(
        tmp_path: Path, logs: str) -> None:
    log = tmp_path / "local.log"
    # (no TORCH_LOGS at all for torch's default warnings: torch 2.15 fails to import under an
    # empty TORCH_LOGS, 'dict' object has no attribute 'get_log_level_pairs')
    run_logged(PROGRAM, log, logs, check=True)
    d = diagnose_inputs([log])
    said = [(s.message, s.fix) for s in d.suggestions
            if "<locals>.Holder" in s.message]
    assert said, [(s.kind, s.message) for s in d.suggestions]
    for message, fix in said:
        assert "get_tensor.<locals>.Holder, a class or function defined inside get_tensor" in message
        assert fix.startswith("define Holder at module level, once, outside get_tensor")
        assert "same object" not in fix
    assert not any("pass the same object" in s.fix for s in d.suggestions)

    # the program as it was: a new class per call, two graphs per call
    assert _compiles(local_class) == 2 * CALLS
    # the fix: the two frames of its one graph break, once
    assert _compiles(module_class) == 2


# An object of a class defined inside a function, passed in: each call of the function makes a
# new class, so the object's type guard fails on every call (___check_type_id(cfg, …),
# type=<class '….make.<locals>.Cfg'>). diagnose said "pass objects of one class at that place"
TYPE_PROGRAM = f"""
import torch
def make():
    class Cfg:
        scale = 2
    return Cfg()
def scaled(x, cfg):
    return x * cfg.scale
compiled = torch.compile(scaled, backend="eager")
for _ in range({CALLS}):
    compiled(torch.randn(3), make())
"""


class Cfg:
    scale = 2


def make_local() -> Any:
    class Cfg:
        scale = 2
    return Cfg()


def make_module() -> Any:  # the fix: Cfg defined once, at module level
    return Cfg()


def scaled(x: Any, cfg: Any) -> Any:
    return x * cfg.scale


def test_an_object_of_a_class_made_per_call_is_named_and_moving_the_class_out_compiles_once(
        tmp_path: Path) -> None:
    log = tmp_path / "type.log"
    run_logged(TYPE_PROGRAM, log, "recompiles", check=True)
    d = diagnose_inputs([log])
    (a,) = [s for s in d.suggestions if "<locals>.Cfg" in s.message]
    assert "the input's class is make.<locals>.Cfg, defined inside make" in a.message, a.message
    assert a.fix.startswith("define Cfg at module level, once, outside make"), a.fix
    assert not any(s.fix == "pass objects of one class at that place" for s in d.suggestions)

    from torch._dynamo.utils import counters

    def compiles(make: Callable[[], Any]) -> int:
        torch._dynamo.reset()
        before = counters["stats"]["unique_graphs"]
        compiled = torch.compile(scaled, backend="eager")
        for _ in range(CALLS):
            compiled(torch.randn(3), make())
        return int(counters["stats"]["unique_graphs"] - before)

    assert compiles(make_local) == CALLS  # a new type per call, a compile per call
    assert compiles(make_module) == 1  # the fix

"""A backend mismatch, read and fixed on this torch (pytorch#154707, #168373).

``tests/data/compat_backend.py`` compiles one function with a new backend callable each call.
torch 2.4 to 2.9 log it as an empty reason, 2.10 on as "BACKEND_MATCH failure";
diagnose reads either as a backend mismatch, and its fix, applied here, compiles once. A
backend made anew for each call (a lambda, or a new functools.partial, which torch's own message
names) is no fix: the fix's text must not suggest it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from logged import Script, run_logged

from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "compat_backend.py"


def shift(x: Any) -> Any:
    return x.sin() + 1


def backend(gm: Any, example_inputs: Any) -> Any:
    return gm.forward


def _compiles(call: Callable[[Any], Any]) -> int:
    """torch's own count of the graphs compiled over four calls of ``call``."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    x = torch.randn(3)
    for _ in range(4):
        call(x)
    return int(counters["stats"]["unique_graphs"] - before)


def test_a_backend_mismatch_is_read_and_its_fix_compiles_once(tmp_path: Path) -> None:
    log = tmp_path / "backend.log"
    run_logged(Script(PROGRAM), log, "recompiles", check=True)
    d = diagnose_inputs([log])
    assert [r.compile_id for r in d.recompiles] == ["0/1", "0/2"]
    assert {r.kind for r in d.recompiles} <= {"backend", "no_guard"}
    (finding,) = [s for s in d.suggestions if s.kind == "non-shape-recompile"]
    assert "another backend or another torch.compile call" in finding.message
    assert finding.fix.startswith("compile the function once and call that")

    # the program as it was: a new backend per call compiles on every call
    assert _compiles(lambda x: torch.compile(shift, backend=lambda gm, ex: gm.forward)(x)) == 4
    # the fix, both ways it says it: compiled once; one backend object for every compile
    compiled = torch.compile(shift, backend=backend)
    assert _compiles(compiled) == 1
    assert _compiles(lambda x: torch.compile(shift, backend=backend)(x)) == 1
    # not a fix: a new functools.partial per call is a new backend too
    assert _compiles(lambda x: torch.compile(shift, backend=functools.partial(backend))(x)) == 4
    assert "made per call" in finding.fix and "functools.partial" in finding.fix

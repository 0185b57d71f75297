"""The dynamic-sources list as each torch reads it: a per-dim entry (``L['x']:1``) from torch
2.13 on; before it (2.11, the release current CUDA images ship, and 2.12) the entry is matched
against the whole input's name, so ``:1`` matches nothing and the printed list did nothing.

diagnose prints the per-dim list and, beside it, the form torch before 2.13 reads (the input's
name alone: every dim of it dynamic). Both are applied here on the torch that runs the test: the
form for this release compiles once where the plain run compiled twice; on a torch before 2.13
the per-dim form is also run, to show it does nothing there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from logged import run_logged

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # minutes on 2 cores: CI's long step (round 33)
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
def f(x):
    return x.sum(1) * 2
compiled = torch.compile(f, backend="eager")
for n in (8, 9, 10, 11):
    compiled(torch.ones(4, n))
from torch._dynamo.utils import counters
print(counters["stats"]["unique_graphs"])
"""
_LIST_RE = re.compile(r'TORCH_COMPILE_DYNAMIC_SOURCES="([^"]*)"')


def _graphs(tmp_path: Path, name: str, sources: str | None = None) -> int:
    env = {"TORCH_COMPILE_DYNAMIC_SOURCES": sources} if sources is not None else {}
    run = run_logged(PROGRAM, tmp_path / f"{name}.log", logs="recompiles", env=env, check=True)
    return int(run.stdout.split()[-1])


def _before_2_13() -> bool:
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    return (major, minor) < (2, 13)


def test_the_list_printed_for_each_torch_compiles_once(tmp_path: Path) -> None:
    assert _graphs(tmp_path, "plain") == 2  # static, then automatic dynamic
    diag = diagnose_inputs([tmp_path / "plain.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.MARK_DYNAMIC]
    per_dim, whole = _LIST_RE.findall(a.fix)
    # (a recompiles log names only the first guard that failed: the list is of every input)
    assert (per_dim, whole) in ((".*:1", ".*"), ("L['x']:1", "L['x']"))
    assert "needs torch 2.13" in a.fix
    if _before_2_13():
        assert _graphs(tmp_path, "per_dim", per_dim) == 2  # ':1' matches nothing here
        assert _graphs(tmp_path, "whole", whole) == 1
    else:
        assert _graphs(tmp_path, "per_dim", per_dim) == 1
        assert _graphs(tmp_path, "whole", whole) == 1

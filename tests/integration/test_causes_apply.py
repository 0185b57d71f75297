"""Issue 21, applied: ``suggest -f python`` on the four-frame PGO state marks ``x`` under EVERY
frame, and running those lines before each call removes every recompile (8 compiles → 4).

The PGO state was recorded by ``tests/data/make_causes.py four_frames`` (torch 2.15.0 and
2.14.1); the functions below are the recorded program's, compiled with a counting backend.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from dyncli.suggest.api import run as suggest
from dyncli.suggest.render import render_fix

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

DATA = Path(__file__).resolve().parents[1] / "data"


def first(x: Any) -> Any:
    return x.relu() + 1


def second(x: Any) -> Any:
    return x.sigmoid() * 2


def third(x: Any) -> Any:
    return x.tanh() - 1


def fourth(x: Any) -> Any:
    return x.abs() / 2


def _marks(text: str) -> dict[str, list[str]]:
    """``{function: [python lines to run before calling it]}`` from suggest's python form."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^# \S+:\d+ (\w+): before calling it", line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None and line.startswith("torch."):
            current.append(line)
    return out


def _compiles(marks: dict[str, list[str]]) -> int:
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    counter = CompileCounter()
    fns = {fn.__name__: (fn, torch.compile(fn, backend=counter))
           for fn in (first, second, third, fourth)}
    for batch in (2, 3, 4):
        for name, (fn, compiled) in fns.items():
            x = torch.randn(batch, 5)
            for line in marks.get(name, ()):
                exec(line, {"torch": torch, "x": x})  # suggest's own output, under test
            assert torch.equal(compiled(x), fn(x))
    return counter.frame_count


def test_python_form_marks_every_frame_and_removes_recompiles() -> None:
    version = torch.__version__.split("+")[0]
    pgo = DATA / version / "causes" / "four_frames" / "pgo"
    if not pgo.exists():
        pgo = sorted(DATA.glob("2.*/causes/four_frames/pgo"))[-1]
    # source_root: the recorded frames name a checkout that may exist (and differ) here; the
    # stale check must not depend on that (it finds no file under the data folder).
    marks = _marks(render_fix(suggest(pgo_dir=str(pgo), source_root=str(pgo)), "python"))
    assert sorted(marks) == ["first", "fourth", "second", "third"]
    assert _compiles({}) == 8
    assert _compiles(marks) == 4

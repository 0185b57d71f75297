"""bench's single-run path, traced: from ``commands/bench.py`` to the recommendation, each module
is passed through once.

A real ``dyncli bench`` on a request stream (real torch.compile, the tiny MLP) runs under
``sys.setprofile``. At every call into dyncli the stack of dyncli modules is read (consecutive
frames of one module are one step; what runs while a dyncli module is being imported is not
on the path): a module that appears twice on one stack was called back
into from a module it called — the "returns to earlier ones" this layout removes. The front end
(the command, its renderers, the output object) is reached from the engine only through the
``Hooks`` callbacks; a call into it ends the engine's part of the stack, and what the front end
then does is its own.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

pytest.importorskip("torch")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DYNCLI = str(ROOT / "dyncli") + os.sep
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
FRONT = ("dyncli.commands.", "dyncli.bench.render", "dyncli.output", "dyncli.cli",
         "dyncli.termfit")


# rich's rendering protocol: a console calls a renderable back (through its render hooks:
# dyncli.textsafe's sanitizer), so a table class printed by a console of its own module
# (dyncli.termfit's FitConsole and FitTable) is re-entered by design, not by a layer calling
# back into the one that called it
RICH_CALLBACKS = ("__rich_console__", "__rich_measure__")


def _called(code: CodeType) -> bool:
    """A function's code (not a module or class body running as it is imported)."""
    return bool(code.co_flags & inspect.CO_NEWLOCALS)


class Trace:
    """The dyncli module stacks seen at every call into dyncli, and the first-entry order."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.order: list[str] = []
        self.repeats: dict[tuple[str, ...], int] = {}

    def module(self, filename: str) -> str:
        name = self.names.get(filename)
        if name is None:
            parts = list(Path(filename[len(DYNCLI) - len("dyncli") - 1:]).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = self.names[filename] = ".".join(parts)
        return name

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(DYNCLI) or not _called(code):
            return
        mods: list[str] = []
        f: FrameType | None = frame
        while f is not None:
            if f.f_code.co_filename.startswith(DYNCLI):
                if not _called(f.f_code):
                    return  # a module being imported: what its body runs is not the path
                name = self.module(f.f_code.co_filename)
                if not mods or mods[-1] != name:
                    mods.append(name)
                if f.f_code.co_name in RICH_CALLBACKS:
                    break  # rich called this renderable back: what printed it is rich's caller
            f = f.f_back
        mods.reverse()  # outermost first
        engine = next((i for i, m in enumerate(mods) if m.startswith("dyncli.bench.api")), None)
        if engine is not None:  # a hook into the front end ends the engine's stack
            cut = next((i for i in range(engine, len(mods)) if mods[i].startswith(FRONT)),
                       len(mods))
            mods = mods[:cut]
        if mods and mods[-1] not in self.order:
            self.order.append(mods[-1])
        if len(set(mods)) < len(mods):
            key = tuple(mods)
            self.repeats[key] = self.repeats.get(key, 0) + 1


def test_the_single_run_path_passes_through_each_module_once(tmp_path: Path) -> None:
    trace = Trace()
    out = tmp_path / "r.json"
    argv = ["bench", MODEL, "--device", "cpu", "--strategy", "static,pad", "--sizes", "2,5,2",
            "--buckets", "4,8", "--repeat", "2", "--warmup", "0", "--warm-cache",
            "--json", str(out)]
    sys.setprofile(trace)
    try:
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "120", "NO_COLOR": "1"})
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.output
    assert "recommendation:" in result.stdout
    assert not trace.repeats, "\n".join(" > ".join(k) for k in trace.repeats)
    # the path went command -> api -> runner -> driver -> measure -> recommendation
    order = trace.order
    for earlier, later in (("dyncli.commands.bench", "dyncli.bench.api"),
                           ("dyncli.bench.api", "dyncli.bench.runner"),
                           ("dyncli.bench.runner", "dyncli.bench.drivers"),
                           ("dyncli.bench.drivers", "dyncli.bench.measure"),
                           ("dyncli.bench.measure", "dyncli.bench.served"),
                           ("dyncli.bench.measure", "dyncli.bench.core.recommend")):
        assert order.index(earlier) < order.index(later), order

"""A plan applied as a user applies it: the module ``--emit python`` writes, imported from a file,
serving inputs (outputs checked against eager), its compiles counted."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from dyncli.bench.core.apply import Plan
from dyncli.bench.core.emit import emit


def serve_emitted(plan: Plan, model: Any, inputs: list[Any], tmp_path: Path,
                  around: Callable[[], AbstractContextManager[Any]] | None = None) -> int:
    """Serve each of ``inputs`` through the emitted module; the graphs it compiled.

    ``around`` (e.g. a GraphWatch) is entered after the ``torch._dynamo.reset()`` that starts
    the serving: a reset clears the callbacks a watch entered before it had registered.
    """
    import torch

    path = tmp_path / f"emitted_{plan.strategy.replace('-', '_')}.py"
    path.write_text(emit(plan, "python"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    graphs = [0]

    def counting(gm: Any, example_inputs: Any) -> Any:
        graphs[0] += 1
        return gm.forward

    # a mode cannot reach a backend function (torch hands it on as a keyword): a plan with one
    # compiles with its own inductor, counted by torch's unique_graphs
    moded = "mode" in mod.PLAN["torch_compile"]
    if mod.PLAN["torch_compile"] and not moded:  # eager's is empty: nothing to compile
        mod.PLAN["torch_compile"]["backend"] = counting  # the plan's own is inductor
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    serve = mod.compile_for_traffic(model)
    try:
        with torch.no_grad(), around() if around is not None else contextlib.nullcontext():
            for x in inputs:
                torch.testing.assert_close(serve(x), model(x))
    finally:
        torch._dynamo.reset()
    return counters["stats"]["unique_graphs"] - before if moded else graphs[0]

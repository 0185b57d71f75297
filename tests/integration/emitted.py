"""A plan applied as a user applies it: the module ``--emit python`` writes, imported from a file,
serving inputs (outputs checked against eager), its compiles counted."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from dyncli.bench.core.apply import Plan
from dyncli.bench.core.emit import emit


def serve_emitted(plan: Plan, model: Any, inputs: list[Any], tmp_path: Path) -> int:
    """Serve each of ``inputs`` through the emitted module; the graphs it compiled."""
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

    if mod.PLAN["torch_compile"]:  # eager's is empty: nothing to compile
        mod.PLAN["torch_compile"]["backend"] = counting  # the plan's own is inductor
    torch._dynamo.reset()
    serve = mod.compile_for_traffic(model)
    try:
        with torch.no_grad():
            for x in inputs:
                torch.testing.assert_close(serve(x), model(x))
    finally:
        torch._dynamo.reset()
    return graphs[0]

"""Plain torch in a fresh process: an emitted plan serving a request stream, its graphs counted.

``python plain_torch.py EMITTED.py FILE.py:FUNCTION SIZE...`` builds the model, serves one
request per size through the emitted module's ``compile_for_traffic`` (inductor, behind a
wrapper that counts the graphs it returns, as bench's backend does) and prints
``{"graphs": N, "torch": VERSION}``. Each example input is resized along dim 0 (its rows
repeated), so the values are the model's own.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(emitted: str, model: str, sizes: list[int]) -> dict[str, Any]:
    import torch

    mod = _load(emitted, Path(emitted).stem)
    inductor = torch._dynamo.lookup_backend("inductor")
    graphs = [0]

    def counting(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        out = inductor(gm, example_inputs, **kwargs)  # an attempt that raises is no graph
        graphs[0] += 1
        return out

    if mod.PLAN["torch_compile"]:  # eager's is empty: nothing to compile
        mod.PLAN["torch_compile"]["backend"] = counting
    path, function = model.rsplit(":", 1)
    net, example = getattr(_load(path, "plain_model"), function)()
    net.eval()
    serve = mod.compile_for_traffic(net)

    def resized(t: torch.Tensor, b: int) -> torch.Tensor:
        return t.repeat(-(-b // t.shape[0]), *([1] * (t.dim() - 1)))[:b].clone()

    with torch.no_grad():
        for b in sizes:
            if isinstance(example, dict):
                serve(**{k: resized(v, b) for k, v in example.items()})
            else:
                serve(*(resized(v, b) for v in example))
    return {"graphs": graphs[0], "torch": torch.__version__}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]])))

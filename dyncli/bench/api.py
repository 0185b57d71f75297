"""``dyncli.bench.run``: a model in, a :class:`BenchResult` out (the command's one core call)."""

from __future__ import annotations

from typing import Any

from dyncli.bench.result import BenchResult, Hooks
from dyncli.config import BenchConfig, config_or_options


def run(model: str, *, config: BenchConfig | None = None, hooks: Hooks | None = None,
        **options: Any) -> BenchResult:
    """Benchmark ``model`` eager and compiled on varied shapes, one run per strategy.

    ``model``: a torchvision name, ``timm:NAME``, ``hf:CLASS`` or ``FILE.py:FUNCTION``
    returning ``(model, example_inputs)``. ``options`` are the ``[bench]`` config keys
    (``strategy=["static", "automatic"]``, ``variations=5``, ``device="cpu"``, …), with the
    same defaults and validation as ``autodyn.toml``; or pass ``config``. ``hooks`` receive
    progress, warnings, each finished strategy (write partial results there) and every model
    call.

    torch is imported here, when called. A model that fails to build, run or compile is a
    status in the result, not an exception; ``ModelError`` (unknown model), ``UsageError`` and
    ``ConfigError`` (bad options) are raised before any work.
    """
    cfg: BenchConfig = config_or_options("bench", config, options, where="dyncli.bench.run")
    from dyncli.bench.runner import run_bench

    return run_bench(model, cfg, hooks)

"""``dyncli.bench.run``: a model in, a :class:`BenchResult` out (the command's one core call)."""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import Any

from dyncli.bench.core import settings
from dyncli.bench.core.result import BenchResult, Hooks
from dyncli.bench.device import quiet_torch_noise
from dyncli.config import BenchConfig, config_or_options
from dyncli.errors import UsageError
from dyncli.quoting import shell_quote

quiet_torch_noise()  # before anything this API runs imports torch

# What running a benchmark needs beyond dyncli's own dependencies (the ``bench`` extra).
NEEDS = ("torch", "numpy", "scipy")


def _importable(name: str) -> bool:
    try:
        return find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, a broken install
        return False


def check_extra() -> None:
    """``UsageError`` (exit 2) naming what is missing when the ``bench`` extra is not installed."""
    missing = [name for name in NEEDS if not _importable(name)]
    if missing:
        from dyncli.install import pip_extra

        raise UsageError(f"dyncli bench needs {', '.join(missing)}, which this environment lacks",
                         hint=f"Install the bench extra: {pip_extra('bench')}  "
                              "(diagnose and suggest work without it)")


def check_torch_imports() -> None:
    """``UsageError`` (exit 2) when ``import torch`` raises here, in one line with torch's own.

    torch parses ``TORCH_LOGS`` as it is imported, and raises for a value it refuses
    (``help``, a name it does not know) and, in 2.11 and 2.15 at least, for one set but empty
    (``_parse_log_settings("")`` returns a dict where a LogState is used: 'dict' object has no
    attribute 'get_log_level_pairs'): bench printed torch's traceback."""
    try:
        import torch  # noqa: F401
    except Exception as e:  # whatever torch raised as it was imported: said, never a traceback
        text = str(e).strip()
        said = f"{type(e).__name__}: {text.splitlines()[0][:300]}" if text else type(e).__name__
        logs = os.environ.get("TORCH_LOGS")
        if logs is not None:
            raise UsageError(
                f"torch failed to import with TORCH_LOGS={shell_quote(logs)}: {said}",
                hint="unset TORCH_LOGS" + (" (set but empty, it fails torch's import: "
                                            "torch 2.11 and 2.15 measured)" if not logs else "")
                     + ", or give it names torch knows (TORCH_LOGS=recompiles)") from None
        raise UsageError(f"torch failed to import: {said}",
                         hint="python -c 'import torch' shows torch's whole error") from None


def run(model: str, *, config: BenchConfig | None = None, hooks: Hooks | None = None,
        process_each: bool | None = None, **options: Any) -> BenchResult:
    """Benchmark ``model`` eager and compiled on varied shapes, one run per strategy.

    ``model``: a torchvision name, ``timm:NAME``, ``hf:CLASS`` or ``FILE.py:FUNCTION``
    returning ``(model, example_inputs)``. ``options`` are the ``[bench]`` config keys
    (``strategy=["static", "automatic"]``, ``variations=5``, ``device="cpu"``, …), with the
    same defaults and validation as ``autodyn.toml``; or pass ``config``. ``hooks`` receive
    progress, warnings, each finished strategy (write partial results there) and every model
    call. ``process_each``: measure each strategy in a fresh process of its own (None: bench
    decides, :func:`dyncli.bench.drivers.process_each_by_default`).

    torch is imported here, when called. A model that fails to build, run or compile is a
    status in the result, not an exception; ``ModelError`` (unknown model), ``UsageError`` and
    ``ConfigError`` (bad options, or the ``bench`` extra missing) are raised before any work.
    """
    cfg: BenchConfig = config_or_options("bench", config, options, where="dyncli.bench.run")
    settings.check(cfg)
    check_extra()
    check_torch_imports()
    from dyncli.bench.runner import run_bench

    return run_bench(model, cfg, hooks, process_each=process_each)

"""dyncli bench: eager vs compiled on actually varied shapes, strategies side by side.

``dyncli.bench.run(model, **options)`` returns a :class:`BenchResult` whose ``to_dict()`` is
the command's ``--json`` document, and ``BenchResult.from_dict`` reads one back. Importing
this package imports nothing: ``dyncli.config`` reads the strategy table
(:mod:`dyncli.bench.core.strategy`) on every command's path, so ``run`` and the result types
are reached lazily. The torch-free core (:mod:`dyncli.bench.core`) is what compare, suites and
``--resume`` read results with. Running a benchmark needs the ``bench`` extra (torch, numpy,
scipy, …); ``run`` says so with a ``UsageError`` when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dyncli.bench.api import run
    from dyncli.bench.core.result import BenchResult, Hooks
    from dyncli.bench.core.status import Status

__all__ = ["BenchResult", "Hooks", "Status", "run"]

_LAZY = {"run": "dyncli.bench.api", "BenchResult": "dyncli.bench.core.result",
         "Hooks": "dyncli.bench.core.result", "Status": "dyncli.bench.core.status"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'dyncli.bench' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)

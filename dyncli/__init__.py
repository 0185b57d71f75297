"""dyncli: a toolkit for PyTorch 2 dynamic shapes — measure, diagnose and fix recompilation.

The three features are reachable from here, each loaded on first use (``import dyncli``
imports neither torch nor numpy)::

    import dyncli
    diagnosis = dyncli.diagnose.run("run.log")          # a Diagnosis
    allow_list = dyncli.suggest.run(pgo_dir="cache/")   # an AllowList
    result = dyncli.bench.run("resnet18", device="cpu") # a BenchResult (imports torch)

Each result's ``to_dict()`` is exactly the command's ``--json`` document. Errors are
``dyncli.errors.DyncliError`` subclasses.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv[:1] == ["-m"] or _sys.argv[0].endswith("dyncli") if _sys.argv else False:
    # the command line starting: Ctrl-C / SIGTERM during the imports below are one line
    from dyncli import startup as _startup

    _startup.install()

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:
    from dyncli import bench, diagnose, suggest

__all__ = ["__version__", "bench", "diagnose", "suggest"]

_FEATURES = ("bench", "diagnose", "suggest", "compare")


def __getattr__(name: str) -> Any:
    if name in _FEATURES:
        return importlib.import_module(f"dyncli.{name}")
    raise AttributeError(f"module 'dyncli' has no attribute {name!r}")

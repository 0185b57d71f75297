"""torch 2.15.0's graph-break registry as recorded in tests/data (see its RECIPE.md).

What tests pass to the pipeline (``registry=recorded``) so that their documents are the same
whether torch is installed or not; ``dyncli.diagnose.api.run`` passes the installed torch's.
"""

from __future__ import annotations

import functools
from pathlib import Path

from dyncli.diagnose.graph_breaks import Registry, load_registry

PATH = Path(__file__).resolve().parents[1] / "data" / "2.15.0" / "registry" / \
    "graph_break_registry.json.gz"


@functools.lru_cache(maxsize=1)
def recorded() -> Registry | None:
    """The recorded registry (torch 2.15.0: 592 codes)."""
    return load_registry(PATH, "2.15.0")

"""dyncli bench: eager vs compiled on actually varied shapes, strategies side by side.

``dyncli.bench.run(model, **options)`` returns a :class:`BenchResult` whose ``to_dict()`` is
the command's ``--json`` document. Importing this package does not import torch; ``run``
does.
"""

from dyncli.bench.api import run
from dyncli.bench.result import BenchResult, Hooks

__all__ = ["BenchResult", "Hooks", "run"]

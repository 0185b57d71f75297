"""dyncli diagnose: TORCH_LOGS text logs and TORCH_TRACE traces → what recompiled, and why.

``dyncli.diagnose.run(path)`` returns a :class:`Diagnosis` whose ``to_dict()`` is the
command's ``--json`` document. Importing this package imports neither torch nor numpy, nor
the analysis (``Diagnosis`` is loaded on first use): ``run`` forks a big trace's parsing
child before it imports the analysis (``dyncli.diagnose.children``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dyncli.diagnose.api import run

if TYPE_CHECKING:
    from dyncli.diagnose.model import Diagnosis

__all__ = ["Diagnosis", "run"]


def __getattr__(name: str) -> Any:
    if name == "Diagnosis":
        from dyncli.diagnose.model import Diagnosis

        return Diagnosis
    raise AttributeError(f"module 'dyncli.diagnose' has no attribute {name!r}")

"""dyncli suggest: PGO state → a precise ``TORCH_COMPILE_DYNAMIC_SOURCES`` allow-list.

``dyncli.suggest.run(pgo_dir=…)`` returns an :class:`AllowList` whose ``to_dict()`` is the
command's ``--json`` document. Importing this package imports neither torch nor numpy.
"""

from dyncli.suggest.api import run
from dyncli.suggest.result import AllowList

__all__ = ["AllowList", "run"]

"""dyncli compare: join two benchmark runs, test the changes, find regressions.

``dyncli.compare.run(base, new, **options)`` returns a :class:`Comparison` whose ``to_dict()``
is the command's ``--json`` document. Importing this package imports neither torch nor numpy;
the p-values need scipy.
"""

from dyncli.compare.api import Comparison, Pair, run

__all__ = ["Comparison", "Pair", "run"]

"""dyncli diagnose: TORCH_LOGS text logs and TORCH_TRACE traces → what recompiled, and why.

``dyncli.diagnose.run(path)`` returns a :class:`Diagnosis` whose ``to_dict()`` is the
command's ``--json`` document. Importing this package imports neither torch nor numpy.
"""

from dyncli.diagnose.api import run
from dyncli.diagnose.model import Diagnosis

__all__ = ["Diagnosis", "run"]

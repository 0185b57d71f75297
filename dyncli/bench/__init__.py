"""dyncli bench: eager vs compiled on actually varied shapes, strategies side by side.

``dyncli.bench.run(model, **options)`` returns a :class:`BenchResult` whose ``to_dict()`` is
the command's ``--json`` document. Importing this package does not import torch; ``run``
does. It needs the ``bench`` extra (torch, numpy, scipy, …): without it, importing this
package raises a ``dyncli.errors.UsageError`` that says how to install it.
"""

from importlib.util import find_spec

from dyncli.errors import UsageError

_MISSING = [name for name in ("torch", "numpy", "scipy") if find_spec(name) is None]
if _MISSING:
    from dyncli.install import pip_extra

    raise UsageError(f"dyncli bench needs {', '.join(_MISSING)}, which this environment lacks",
                     hint=f"Install the bench extra: {pip_extra('bench')}  "
                          "(diagnose and suggest work without it)")


def _quiet_cuda_home_warning() -> None:
    """torch warns "No CUDA runtime is found, using CUDA_HOME=…" when it finds a CUDA toolkit
    on a machine without a GPU: noise on every CPU bench (which says once that it runs on CPU).
    Filtered on torch's logger before torch is imported, in this and every child process."""
    import logging

    logging.getLogger("torch.utils.cpp_extension").addFilter(
        lambda record: "No CUDA runtime is found" not in str(record.msg))


_quiet_cuda_home_warning()

from dyncli.bench.api import run  # noqa: E402
from dyncli.bench.result import BenchResult, Hooks  # noqa: E402

__all__ = ["BenchResult", "Hooks", "run"]

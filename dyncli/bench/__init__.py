"""dyncli bench: eager vs compiled on actually varied shapes, strategies side by side.

``dyncli.bench.run(model, **options)`` returns a :class:`BenchResult` whose ``to_dict()`` is
the command's ``--json`` document, and ``BenchResult.from_dict`` reads one back. Importing
this package (and its torch-free core, :mod:`dyncli.bench.core`) does not need torch: compare,
suites and ``--resume`` read results without it. Running a benchmark needs the ``bench``
extra (torch, numpy, scipy, …); ``run`` says so with a ``UsageError`` when it is missing.
"""

from dyncli.bench.api import run
from dyncli.bench.core.result import BenchResult, Hooks
from dyncli.bench.core.status import Status

__all__ = ["BenchResult", "Hooks", "Status", "run"]


def _quiet_cuda_home_warning() -> None:
    """torch warns "No CUDA runtime is found, using CUDA_HOME=…" when it finds a CUDA toolkit
    on a machine without a GPU: noise on every CPU bench (which says once that it runs on CPU).
    Filtered on torch's logger before torch is imported, in this and every child process."""
    import logging

    logging.getLogger("torch.utils.cpp_extension").addFilter(
        lambda record: "No CUDA runtime is found" not in str(record.msg))


_quiet_cuda_home_warning()

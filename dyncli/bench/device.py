"""The device under a benchmark: which one, what it is, its memory, and torch's counters.

Each function imports torch when called, so that importing this module costs nothing.
"""

from __future__ import annotations

import logging
import platform
import resource
import sys
from collections.abc import Callable

from dyncli import __version__
from dyncli.bench.core.result import Environment
from dyncli.bench.core.status import Status
from dyncli.errors import UsageError


class _CudaHomeFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "No CUDA runtime is found" not in str(record.msg)


def quiet_torch_noise() -> None:
    """Filter torch's "No CUDA runtime is found, using CUDA_HOME=…" before torch is imported.

    torch logs it when it finds a CUDA toolkit on a machine without a GPU: noise on every CPU
    bench (which says once that it runs on CPU). Called where bench's engine is imported (the
    API, the harness: every process that benchmarks); idempotent.
    """
    logger = logging.getLogger("torch.utils.cpp_extension")
    if not any(isinstance(f, _CudaHomeFilter) for f in logger.filters):
        logger.addFilter(_CudaHomeFilter())


def resolve_device(requested: str, warn: Callable[[str], None]) -> str:
    """``auto`` → cuda when available, else cpu (with one warning); ``cuda`` needs a GPU."""
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available",
                         hint="Use --device cpu (or auto)")
    if requested == "auto":
        if torch.cuda.is_available():
            return "cuda"
        warn("no CUDA device found; benchmarking on CPU (--device cpu silences this)")
        return "cpu"
    return requested


def environment(device: str, dtype: str) -> Environment:
    import torch

    name = torch.cuda.get_device_name() if device == "cuda" else cpu_name()
    return Environment(__version__, torch.__version__, platform.python_version(), device, name,
                       dtype, torch.get_num_threads(), torch.get_float32_matmul_precision())


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def is_oom(err: BaseException) -> bool:
    import torch

    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


def failure_status(err: BaseException, default: Status) -> Status:
    """``OOM`` for an out-of-memory error (the CUDA cache emptied for what follows), else ``default``."""
    if not is_oom(err):
        return default
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()  # give the next variation the memory back
    return Status.OOM


def peak_memory(device: str) -> int:
    import torch

    if device == "cuda":
        return int(torch.cuda.max_memory_allocated())
    # ru_maxrss is KiB on Linux, bytes on macOS; the process peak (it cannot be reset).
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def torch_counts() -> tuple[int, int]:
    """torch's own ``unique_graphs`` and inductor FX-graph-cache-hit counters, now."""
    from torch._dynamo.utils import counters

    return (int(counters["stats"]["unique_graphs"]),
            int(counters["inductor"]["fxgraph_cache_hit"]))


def break_counts() -> dict[str, int]:
    """torch's graph-break and unsupported messages counted so far (message -> count)."""
    from torch._dynamo.utils import counters

    out: dict[str, int] = {}
    for key in ("graph_break", "unimplemented"):
        for msg, n in counters[key].items():
            out[str(msg)] = out.get(str(msg), 0) + int(n)
    return out


def memory_bytes(device: str) -> int | None:
    """The device's memory: the GPU's total on CUDA, physical memory on CPU (None: unknown)."""
    import os

    if device == "cuda":
        import torch

        return int(torch.cuda.mem_get_info()[1])
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None

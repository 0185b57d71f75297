"""Project-wide pytest setup: the `gpu` marker skips cleanly on machines without CUDA, and
every test under tests/integration/ carries the `torch` marker (`-m torch` selects what runs
torch)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

_INTEGRATION = Path(__file__).resolve().parent / "integration"


@functools.cache
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


# bench's compiles in tests start from torch's own cache directories (warm), not from empty
# directories of bench's own per strategy (bench's default, `--fresh-cache`): the tiny models
# recur in hundreds of bench runs, and a cold compile builds every C++ kernel again (examples/
# model.py, three strategies: 45 CPU-s cold, 19 warm). What the tests assert (compile counts,
# statuses, plans, output) is the same from either state; the tests of the cache states set
# fresh_cache themselves (test_bench_isolation.py, test_bench_start_warm.py), as do the ones
# whose measurement and replay must start alike (the 15 % replay test, test_bench_decision.py).
# CLI runs read it from the environment (DYNCLI_BENCH_<KEY>, docs/bench.md "Options"); API
# runs are given fresh_cache=False where they build their BenchConfig. setdefault: a
# developer's own value wins.
WARM_CACHE_ENV = "DYNCLI_BENCH_FRESH_CACHE"


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(WARM_CACHE_ENV, "false")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Marked here (not in each module) so a new integration test cannot miss the second run.
    for item in items:
        if _INTEGRATION in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.torch)
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    # torch is imported only when a gpu test was collected: unit runs stay torch-free.
    if gpu_items and not _cuda_available():
        skip = pytest.mark.skip(reason="needs a CUDA device")
        for item in gpu_items:
            item.add_marker(skip)

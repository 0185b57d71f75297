"""Project-wide pytest setup: the `gpu` marker skips cleanly on machines without CUDA, and
every test under tests/integration/ carries the `torch` marker (`-m torch` selects what runs
torch)."""

from __future__ import annotations

import functools
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

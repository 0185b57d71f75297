"""Shared bits of the log-capture programs: the backend and a seeded RNG.

aot_eager runs Dynamo and AOTAutograd (where shape guards and specializations come from)
without Inductor's C++ codegen, so each capture takes seconds on a CPU-only machine.
"""

import os

import torch

BACKEND = os.environ.get("DYNCLI_LOG_BACKEND", "aot_eager")
torch.manual_seed(0)


def compile_fn(fn):
    """torch.compile with the capture backend."""
    return torch.compile(fn, backend=BACKEND)

"""Inductor's CPU kernels made parallel over a size it could not see. No torch.

An unbacked size has no hint, and inductor's C++ code generation decides whether a loop is worth
OpenMP threads from the sizes' hints: ``CppKernel.decide_parallel_depth`` takes an unbacked size
as 8192 (``optimization_hint(expr, fallback=8192)`` in ``torch/_inductor/codegen/cpp.py``, torch
2.15). A loop of 64 x u0 elements, 64 to 512 at batch sizes 1-8, gets ``#pragma omp parallel``
and starts the thread team on every call; ``dynamic=True`` keeps the size's hint (the first
example's) and the same loop runs serially. Measured on the development machine (2 cores, load
average 5, torch 2.15, a linear-relu-graph-break-linear model, batch 1-8): ``unbacked`` 10-24 ms a
call against 0.5-0.9 ms for ``dynamic``; with ``torch.set_num_threads(1)`` ``unbacked`` took
0.2-0.8 ms. The team's start costs microseconds on an idle machine and milliseconds on a busy one,
where a thread waits for a core. This module reads inductor's generated Python (the text of its
output-code modules) and counts such kernels, so the run can say so.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

BINDING = "async_compile.cpp_pybinding("
PARALLEL = "#pragma omp parallel"
_UNBACKED = re.compile(r"\bu\d+\b")  # torch names unbacked sizes u0, u1, ...


def _kernels(source: str) -> dict[str, str]:
    """The C++ kernels a module defines: name -> its source text."""
    out: dict[str, str] = {}
    parts = source.split(BINDING)
    for before, body in itertools.pairwise(parts):
        name, sep, rest = before.rsplit("\n", 1)[-1].partition(" = ")
        if sep and not rest and name.isidentifier():
            out[name] = body.split("''')", 1)[0]
    return out


def unbacked_parallel(source: str) -> list[str]:
    """The kernels of one output-code module that run OpenMP-parallel and are called with an
    unbacked size, in definition order."""
    kernels = {k: v for k, v in _kernels(source).items() if PARALLEL in v}
    found: list[str] = []
    for line in source.splitlines():
        name, sep, args = line.strip().partition("(")
        if sep and name in kernels and name not in found and _UNBACKED.search(args):
            found.append(name)
    return found


def note(label: str, sources: Iterable[str], threads: int) -> str | None:
    """One line for the run when ``threads`` > 1 and some kernel is parallel over an unbacked
    size; else None."""
    if threads <= 1:
        return None
    n = sum(len(unbacked_parallel(s)) for s in sources)
    if not n:
        return None
    return (f"{label}: inductor made {n} CPU kernel(s) OpenMP-parallel over an unbacked size, "
            f"which it takes as 8192 when deciding: each call starts {threads} threads however "
            "small the batch, and on a busy machine that start dominates the compiled times "
            "(dynamic keeps the size's hint and runs them serially; torch.set_num_threads(1) "
            "avoids it)")

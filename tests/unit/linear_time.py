"""Linear time, told without a clock's bound: what reading one hostile line of ``n`` units costs
against reading ``k`` lines of ``n / k`` units, the same amount of text.

A linear reading costs about the same both ways; a quadratic one (a backtracking pattern that
retries at each start) costs ``k`` times more on the long line. The test asserts the long line
costs less than ``sqrt(k)`` times the short ones (``k`` = 32: under 5.7x, where quadratic is
32x), so neither a fixed cost per call nor the cache (a long line is past L2) can fail it, and
no quadratic reading passes.

Costs are the CPU time of the calling thread (``time.thread_time``), the long line and the
short ones measured in turn, best of up to three (a round under the bound ends it): other
processes on a busy machine do not add to it, as they add to a wall clock (a fixed bound of 3 s
of ``perf_counter`` failed at 5.6 s beside six busy loops on this 2-core machine, load 9.5). A
speed target for these lines is ``benchmarks/regex_linearity.py``'s, not a test's.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def growth(read: Callable[[T], object], make: Callable[[int], T], n: int, k: int = 32,
           repeat: int = 3, enough: float = 0.0) -> float:
    """CPU time of ``read(make(n))`` over that of ``k`` calls of ``read(make(n // k))``, best
    of ``repeat`` (or of fewer, once it is under ``enough``)."""
    short, long = make(n // k), make(n)
    best_short = best_long = float("inf")
    enabled = gc.isenabled()
    gc.disable()  # (a collection inside one of the two would be charged to it alone)
    try:
        for _ in range(repeat):
            start = time.thread_time()
            for _ in range(k):
                read(short)
            middle = time.thread_time()
            read(long)
            end = time.thread_time()
            best_short, best_long = min(best_short, middle - start), min(best_long, end - middle)
            if best_long < enough * best_short:
                break
    finally:
        if enabled:
            gc.enable()
    return best_long / max(best_short, 1e-9)


def assert_linear(read: Callable[[T], object], make: Callable[[int], T], n: int,
                  k: int = 32) -> None:
    """``read`` costs no more on one line of ``n`` units than (about) on ``k`` of ``n / k``."""
    ratio = growth(read, make, n, k, enough=k ** 0.5)
    assert ratio < k ** 0.5, (f"one line of {n} units cost {ratio:.1f}x the CPU time of {k} "
                              f"lines of {n // k} (linear: ~1x, quadratic: {k}x)")

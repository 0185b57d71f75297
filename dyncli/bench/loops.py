"""Enough calls per sample, and round-robin windows. Torch-free: callables and a Clock.

A call of a small model takes microseconds; timed one call per sample on a loaded machine it
measures the scheduler (a tiny MLP's medians landed on 8, 16 and 24 ms, multiples of the
tick). As ``timeit``'s autorange and pyperf's calibration do, :func:`calibrate` finds the
number of calls (``loops``, 1, 2, 5, 10, 20, 50 …) whose total reaches :data:`TARGET_MS`, and
a sample is then ``loops`` calls between one synchronized start and stop, reported per call.
TARGET_MS is 20 ms: five ticks of a 250 Hz kernel (the quantum a preempted call waits), and
far above ``perf_counter``'s and CUDA events' resolution (µs).

:func:`round_robin` times several callables in one window: in each round every callable gives
one sample, in an order rotated from round to round, so no callable always runs right after
the same neighbour (warm caches, a thermal step) and load common to a round touches all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dyncli.bench.timing import Clock

TARGET_MS = 20.0
MAX_LOOPS = 10_000


def timed_loops(clock: Clock, fn: Callable[[], Any], loops: int) -> float:
    """Milliseconds per call: ``loops`` calls between one synchronized start and stop."""
    clock.synchronize()
    token = clock.start()
    for _ in range(loops):
        fn()
    return clock.stop(token) / loops


def _steps() -> list[int]:
    out, base = [], 1
    while base <= MAX_LOOPS:
        out += [n * base for n in (1, 2, 5) if n * base <= MAX_LOOPS]
        base *= 10
    return out


def calibrate(clock: Clock, fn: Callable[[], Any], target_ms: float = TARGET_MS,
              max_loops: int = MAX_LOOPS) -> int:
    """The smallest of 1, 2, 5, 10, 20, … calls whose total reaches ``target_ms`` (timeit's).

    A call that alone reaches the target gives 1 (no change for big models). Uses the first
    calibration sample's per-call time to jump ahead, so a 30 µs call costs a few probes, not
    twelve.
    """
    steps = [n for n in _steps() if n <= max_loops]
    i = 0
    while i < len(steps):
        n = steps[i]
        total = timed_loops(clock, fn, n) * n
        if total >= target_ms:
            return n
        if total > 0:  # skip ahead to the step that should reach the target, minus one
            want = target_ms / (total / n)
            j = next((k for k, s in enumerate(steps) if s >= want), len(steps) - 1)
            i = max(i + 1, j - 1)
        else:
            i += 1
    return steps[-1] if steps else 1


class Raised(Exception):
    """A callable of :func:`round_robin` raised (``error``, under its ``name``)."""

    def __init__(self, name: str, error: Exception) -> None:
        super().__init__(name)
        self.name, self.error = name, error


def round_robin(clock: Clock, fns: Mapping[str, Callable[[], Any]], loops: Mapping[str, int],
                rounds: int, after: Callable[[int], None] | None = None
                ) -> dict[str, list[float]]:
    """``rounds`` rounds over every callable, order rotated each round; per-call ms each.

    ``after(r)`` runs between rounds (e.g. a load reading), outside every timed region. A
    callable that raises ends the rounds with :class:`Raised` naming it (the caller may go on
    without it: round 34's ViT under unbacked, inductor's stride assertion at one shape).
    """
    names: Sequence[str] = list(fns)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names) if names else 0
        for name in list(names[k:]) + list(names[:k]):
            try:
                out[name].append(timed_loops(clock, fns[name], loops.get(name, 1)))
            except Exception as e:
                raise Raised(name, e) from e
        if after is not None:
            after(r)
    return out

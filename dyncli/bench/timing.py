"""Timed calls: a clock per device, synchronized before every start and stop.

A :class:`Clock` hides the device. :class:`CpuClock` reads ``time.perf_counter``.
:class:`CudaClock` synchronizes the device, records a start CUDA event, runs the call,
records an end event and waits for it, then reads ``start.elapsed_time(end)`` — so queued
kernels of the previous call never leak into this one and the call's own kernels are all
counted. The torch module is passed in, so tests drive the CUDA path with a fake one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    """Measures one call in milliseconds."""

    def synchronize(self) -> None:
        """Wait until the device has finished all queued work."""

    def start(self) -> Any:
        """Begin a measurement (after synchronizing); returns a token for :meth:`stop`."""

    def stop(self, token: Any) -> float:
        """End a measurement (synchronizing first) and return elapsed milliseconds."""


class CpuClock:
    """``time.perf_counter`` around the call; CPU ops are synchronous."""

    def __init__(self, counter: Callable[[], float] = time.perf_counter) -> None:
        self._counter = counter

    def synchronize(self) -> None:
        """Nothing to wait for on CPU."""

    def start(self) -> float:
        """The counter now."""
        return self._counter()

    def stop(self, token: float) -> float:
        """Milliseconds since ``token``."""
        return (self._counter() - token) * 1000.0


class CudaClock:
    """CUDA events around the call, with ``torch.cuda.synchronize`` before start and stop."""

    def __init__(self, torch_module: Any, device: Any = None) -> None:
        self._cuda = torch_module.cuda
        self._device = device

    def synchronize(self) -> None:
        """Wait for every queued kernel on the device."""
        self._cuda.synchronize(self._device)

    def start(self) -> Any:
        """Synchronize, then record a start event on the current stream."""
        self.synchronize()
        event = self._cuda.Event(enable_timing=True)
        event.record()
        return event

    def stop(self, token: Any) -> float:
        """Record the end event, wait for it and the device, return the event time in ms."""
        end = self._cuda.Event(enable_timing=True)
        end.record()
        end.synchronize()
        self.synchronize()
        return float(token.elapsed_time(end))


def timed(clock: Clock, fn: Callable[[], T]) -> tuple[T, float]:
    """Run ``fn`` once between a synchronized start and stop; (result, milliseconds)."""
    clock.synchronize()
    token = clock.start()
    out = fn()
    return out, clock.stop(token)


@dataclass
class Samples:
    """Raw timed samples of one variation, in the order they were taken."""

    eager_ms: list[float] = field(default_factory=list)
    compiled_ms: list[float] = field(default_factory=list)
    model_ms: float = 0.0  # wall time inside the model calls (for the overhead benchmark)


def interleaved(
    clock: Clock,
    eager: Callable[[], Any],
    compiled: Callable[[], Any],
    repeat: int,
    wall: Callable[[], float] = time.perf_counter,
) -> Samples:
    """``repeat`` rounds of one eager and one compiled call, each call timed on its own.

    Interleaving spreads slow drifts (thermal, other processes) evenly over both sides, and the
    order alternates from round to round (eager first, then compiled first: A B, B A, ...), as
    the shared window's rotates (:func:`dyncli.bench.loops.round_robin`), so neither side is
    always the one that runs right after the other (benchmarks/order_bias.py). Both callables
    must close over the SAME inputs.
    """
    samples = Samples()
    for r in range(repeat):
        t0 = wall()
        if r % 2 == 0:
            _, e = timed(clock, eager)
            _, c = timed(clock, compiled)
        else:
            _, c = timed(clock, compiled)
            _, e = timed(clock, eager)
        samples.model_ms += (wall() - t0) * 1000.0
        samples.eager_ms.append(e)
        samples.compiled_ms.append(c)
    return samples

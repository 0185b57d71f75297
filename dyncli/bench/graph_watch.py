"""CUDA graphs watched at the source while bench measures a CUDA-graph mode. Needs torch.

What torch lets a caller read without reaching into its CUDA-graph trees' private state (read
from torch's ``_inductor/cudagraph_trees.py``, ``_dynamo/callback.py``, ``cuda/graphs.py``,
``cuda/memory.py``; the releases named are the ones read):

* **recordings and their seconds**: ``CUDAGraphTreeManager.record_function`` runs inside
  ``torch._dynamo.callback.callback_handler.install_callbacks(CallbackTrigger.CUDAGRAPH_RECORDING,
  …)`` and synchronizes the device at its start and end, so the time between the start and end
  callbacks is the recording's (2.11, 2.13, 2.15; 2.6 has callbacks without triggers: there
  recordings read as unknown);
* **replays**: every replay is ``torch.cuda.CUDAGraph.replay``, a Python method on every release
  from 2.4 to 2.15; bench wraps it only around the untimed calls it observes (never a timed one),
  and puts it back in ``finally``;
* **the graphs' memory pool**: ``torch.cuda.memory_snapshot()`` segments whose
  ``segment_pool_id`` is not ``(0, 0)`` belong to a private pool — the CUDA-graph trees' (2.4+);
* **torch's own counters**: ``counters["inductor"]["cudagraph_skips"]`` and
  ``["cudagraph_recorded_non_static_inputs"]``.

``torch._dynamo.reset()`` clears every registered callback (``callback_handler.clear()``, 2.11
and 2.15): a watch entered before a reset counts nothing after it. On an H200 (torch 2.11) a
watch entered around code that reset first read 0 recordings where torch recorded 1; a watch
whose callbacks are gone when it ends now reads ``recordings`` None (unknown) and ``lost``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from dyncli.bench.core.graphs import NO_GRAPH, RECORDED, REPLAYED, ShapeGraphs

if TYPE_CHECKING:
    from dyncli.bench.harness import Harness

SETTLE_CALLS = 3  # untimed calls after a shape's first, until one replays (warm-up, record)


class GraphWatch:
    """Counts CUDA-graph recordings (with their seconds) while entered, and replays inside
    :meth:`counting`. ``recordings`` is None where torch has no recording callback."""

    def __init__(self) -> None:
        self.recordings: int | None = None
        self.record_s = 0.0
        self.replays = 0
        self._t0: float | None = None
        self._trigger: Any = None
        self.lost = False  # torch dropped the callbacks while entered (torch._dynamo.reset())

    def __enter__(self) -> GraphWatch:
        try:
            from torch._dynamo.callback import CallbackTrigger, callback_handler
        except ImportError:
            return self
        self._trigger = getattr(CallbackTrigger, "CUDAGRAPH_RECORDING", None)
        if self._trigger is not None:
            self.recordings = 0
            callback_handler.register_start_callback(self._start)
            callback_handler.register_end_callback(self._end)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._trigger is None:
            return
        from torch._dynamo.callback import callback_handler

        starts = getattr(callback_handler, "start_callbacks", None)
        if isinstance(starts, list) and self._start not in starts:
            self.lost, self.recordings = True, None  # a count that stopped is no count
            return
        for remove, fn in ((callback_handler.remove_start_callback, self._start),
                           (callback_handler.remove_end_callback, self._end)):
            with contextlib.suppress(ValueError):
                remove(fn)

    def _start(self, args: Any) -> None:
        if getattr(args, "callback_trigger", None) == self._trigger:
            self._t0 = time.perf_counter()

    def _end(self, args: Any) -> None:
        if getattr(args, "callback_trigger", None) == self._trigger and self._t0 is not None:
            self.record_s += time.perf_counter() - self._t0
            self.recordings = (self.recordings or 0) + 1
            self._t0 = None

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Replays counted in ``replays`` while inside (``CUDAGraph.replay`` wrapped)."""
        import torch

        cls = torch.cuda.CUDAGraph
        original = cls.replay

        def replay(graph: Any, *args: Any, **kwargs: Any) -> Any:
            self.replays += 1
            return original(graph, *args, **kwargs)

        cls.replay = replay  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            cls.replay = original  # type: ignore[method-assign]

    def state(self) -> tuple[int, float, int]:
        """(recordings, record seconds, replays) now, to tell what a call did."""
        return self.recordings or 0, self.record_s, self.replays

    @staticmethod
    def kind(before: tuple[int, float, int], after: tuple[int, float, int]) -> str:
        """How a call between two :meth:`state` readings was served."""
        if after[0] > before[0]:
            return RECORDED
        return REPLAYED if after[2] > before[2] else NO_GRAPH


def pool_bytes() -> int:
    """Bytes reserved in private memory pools (the CUDA-graph trees' pool) on every device."""
    import torch

    total = 0
    for seg in torch.cuda.memory_snapshot():
        pool = seg.get("segment_pool_id")
        if pool is not None and tuple(pool) != (0, 0):
            total += int(seg.get("total_size") or 0)
    return total


def counters() -> tuple[int, int]:
    """torch's ``cudagraph_skips`` and ``cudagraph_recorded_non_static_inputs`` now."""
    from torch._dynamo.utils import counters as c

    return (int(c["inductor"]["cudagraph_skips"]),
            int(c["inductor"]["cudagraph_recorded_non_static_inputs"]))


def settle(h: Harness, gw: GraphWatch, comp_step: Callable[[], Any],
           before: tuple[int, float, int], first_s: float, pool0: int) -> ShapeGraphs:
    """A shape's first calls under CUDA graphs: the first (already made, since ``before``),
    then untimed synchronized calls until one replays (the first runs a warm-up, the second
    records): how each was served, its seconds, the recordings and the pool's growth."""
    after = gw.state()
    g = ShapeGraphs([gw.kind(before, after)], [first_s], after[0] - before[0],
                    after[1] - before[1])
    for _ in range(SETTLE_CALLS):
        if g.calls[-1] == REPLAYED:
            break
        before = gw.state()
        with gw.counting():
            _, seconds = h.first_call(comp_step)
        after = gw.state()
        g.calls.append(gw.kind(before, after))
        g.call_s.append(seconds)
        g.recordings += after[0] - before[0]
        g.record_s += after[1] - before[1]
    g.pool_growth_bytes = pool_bytes() - pool0
    return g

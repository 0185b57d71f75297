"""Python's full garbage collections, counted and timed while a replay's requests run.

A compile leaves hundreds of thousands of objects behind (dynamo's and inductor's, many in
reference cycles), and Python's collector frees them in a *full* collection (generation 2),
which CPython (3.11-3.13) runs only when the objects that outlived younger collections have
grown by a quarter since the last one. So the collection lands inside some later request, where a server pays
it too: in round 30 a GPT-2 replay's slowest request (681 ms) held one of 673 ms that freed
90,329 objects (docs/bench.md, "Round 30 split the replay's seconds"). The cost model prices
steady states, compiles and first calls, not that collection, and forcing one after each
compile charged small compiles far more than the collector would (tried and reverted in round
30). What bench does instead is say it: each replay counts the full collections inside its own
requests and their seconds (``replay.gc_full``, ``replay.gc_full_s``), so a replay that ran
past its prediction by a collection says so.

:class:`FullCollections` hooks ``gc.callbacks`` (CPython calls each callback with ``"start"``
and ``"stop"`` around every collection, with the generation collected); only generation 2 is
counted. While a :meth:`FullCollections.watch` block is open, a collection is the block's; a
collection outside every block (the slot switch between players, bench's own work) is no
one's. No torch: the replay loop is its only user.

Only where the collector is generational: CPython 3.11-3.13 and 3.15 on (gh-142516 put the
generational collector back). 3.14's collector is incremental: it scans the old generation a
slice at a time inside its young collections, so no one collection is the pause, and a
free-threaded build's collector has no generations; there a replay's ``gc_full`` is not
counted (None), not 0.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

FULL = 2  # the generation a full collection collects


def generational() -> bool:
    """Whether this Python's collector runs full collections of generation 2 (see above)."""
    return sys.version_info[:2] != (3, 14) and not sysconfig.get_config_var("Py_GIL_DISABLED")


@dataclass
class Tally:
    """Full collections inside one owner's requests: how many, and their wall seconds."""

    count: int = 0
    seconds: float = 0.0

    def replay_fields(self) -> dict[str, Any]:
        """``gc_full`` and ``gc_full_s`` of a :class:`~dyncli.bench.core.run_parts.Replay`:
        none where this Python's collector has no full collections to count."""
        if not generational():
            return {}
        return {"gc_full": self.count, "gc_full_s": self.seconds}


class FullCollections:
    """Counts full collections inside :meth:`watch` blocks, per tally; installed as a context.

    ``with FullCollections() as fc: ... with fc.watch(tally): run()`` — the callback is
    removed when the outer block ends, even if it raises. ``counter`` is the clock (tests pass
    a fake one).
    """

    def __init__(self, counter: Callable[[], float] = time.perf_counter) -> None:
        self._counter = counter
        self._current: Tally | None = None
        self._started: float | None = None

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ValueError):  # someone cleared gc.callbacks: nothing to remove
            gc.callbacks.remove(self._callback)
        self._current = None
        self._started = None

    @contextmanager
    def watch(self, tally: Tally) -> Iterator[Tally]:
        """Full collections that start and end inside the block are added to ``tally``."""
        outer = self._current
        self._current = tally
        try:
            yield tally
        finally:
            self._current = outer
            self._started = None  # a collection open at the block's end is no one's

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != FULL or self._current is None:
            return
        if phase == "start":
            self._started = self._counter()
        elif phase == "stop" and self._started is not None:
            self._current.count += 1
            self._current.seconds += max(0.0, self._counter() - self._started)
            self._started = None

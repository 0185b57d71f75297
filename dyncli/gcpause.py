"""Pausing the cyclic GC around bulk building of acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small acyclic objects.

    Unpickling a 10,000-frame PGO state, or turning its result into a JSON document, allocates
    ~10^5 objects; the generational collector then re-scans the long-lived ones again and
    again, which measured 2-4x the time of the work itself (benchmarks/suggest_read.py).
    Nothing built under it forms cycles, so nothing is leaked; the GC's previous state is
    restored on exit.

    On exit the objects built are handed to the oldest generation in one step (``freeze``
    then ``unfreeze``) rather than left in the youngest, whose next collection would walk all
    of them at once (~0.1 s after a 10,000-frame state). A process that froze objects itself
    keeps its frozen set: then the GC is only enabled again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.enable()
                gc.unfreeze()
            else:
                gc.enable()

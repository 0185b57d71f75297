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
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

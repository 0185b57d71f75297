"""Check a PGO pickle's opcode stream before any unpickler sees it: bounded, and PGO-shaped.

The C unpickler trusts the stream: a 9-byte pickle whose ``LONG_BINPUT`` names memo slot 2**26
makes it allocate a 1 GB memo; 30 MB of ``DUP`` grows its stack by 240 MB; a tuple key of
shared pairs costs 2**40 steps to hash inside one C call. None of that runs code, and none of
it is in a real PGO state. :func:`check` walks the opcodes once, in Python, without creating
any object of the file, and refuses the stream unless

- every opcode is one a ``pickle.dumps`` of torch's state uses (protocol 2 to 5);
- every global is one of ``ALLOWED`` (checked here too, so a refused name costs no unpickling);
- memo slots are used in order (slot ``n`` is set only after slots ``0 … n-1``), every read
  slot exists, and the stack and the ``MARK`` nesting stay under bounds far above torch's;
- every dict key is a string or one of the PGO objects (never a tuple: hashing is where the
  unbounded time hides), ``BUILD`` targets a PGO object, ``APPEND`` a list, ``SETITEM`` a dict;
- lengths fit in the file, and the memory the unpickler will need, estimated from each
  opcode's worst case on 64-bit CPython, stays under ``MAX_HEAP``.

The walk itself (:mod:`dyncli.suggest.pgo_walk`) simulates the stack with one small int per
item and the memo with one byte a slot. What passes cannot make the unpickler allocate more
than ``MAX_HEAP`` plus the file, nor take more than linear time: afterwards the fast C
unpickler runs in this process, with no child and no timeout. One budget of opcodes bounds a
whole directory or Redis scan (:func:`one_budget`), and small files already walked are
remembered by their bytes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from dyncli.suggest.pgo_walk import (
    MAX_HEAP,
    MAX_MARKS,
    MAX_OPS,
    MAX_STACK,
    ScanError,
    walk,
    walked,
)

__all__ = ["MAX_HEAP", "MAX_MARKS", "MAX_OPS", "MAX_STACK", "MAX_TOTAL_OPS", "Budget", "ScanError",
           "check", "one_budget"]

# One budget for a whole directory or Redis scan (see ``one_budget``): ~11 real 10,000-frame
# states; past it the remaining files are skipped with a message, so that many large hostile
# files cost one bound, not one each.
MAX_TOTAL_OPS = 16_000_000


def check(data: bytes, allowed: dict[tuple[str, str], Any], classes: tuple[Any, ...],
          dict_factories: tuple[Any, ...]) -> int:
    """Raise :class:`ScanError` unless ``data`` is a bounded, PGO-shaped pickle.

    ``allowed`` maps ``(module, name)`` to what the unpickler will resolve it to; those in
    ``classes`` make PGO objects, those in ``dict_factories`` make dicts, the rest tokens.
    Returns the estimated heap bytes the unpickler will use. A small file whose bytes were
    already checked (the same state written by every rank of a job) is not walked again.
    """
    budget = _current.get()
    if budget is not None and budget.left <= 0:
        raise ScanError(f"not read: this scan's budget of {MAX_TOTAL_OPS:,} opcodes over all "
                        "files is spent (pick fewer files, e.g. with --job-id)")
    if len(data) <= _CACHE_FILE_BYTES:
        seen = _passed.get(data)
        if seen is not None:  # walked before: charged as if walked again (same budget, less time)
            if budget is not None:
                budget.left -= seen[1]
                if budget.left < 0:
                    raise ScanError(f"not read: this scan's budget of {MAX_TOTAL_OPS:,} opcodes "
                                    "over all files is spent (pick fewer files, e.g. with --job-id)")
            return seen[0]
        heap = _check(data, allowed, classes, dict_factories)
        if len(_passed) < _CACHE_FILES:
            _passed[data] = (heap, walked[0])
        return heap
    return _check(data, allowed, classes, dict_factories)


class Budget:
    """Opcodes a scan of many files may still walk."""

    def __init__(self, ops: int) -> None:
        self.left = ops


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("pgo_scan_budget",
                                                                        default=None)


@contextlib.contextmanager
def one_budget(ops: int | None = None) -> Iterator[Budget]:
    """Within this block every :func:`check` spends from one budget of ``ops`` opcodes
    (default ``MAX_TOTAL_OPS``)."""
    budget = Budget(MAX_TOTAL_OPS if ops is None else ops)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


# Small files that passed, by their bytes: at most 4,096 of 4 KB (16 MB).
_CACHE_FILE_BYTES = 4096
_CACHE_FILES = 4096
_passed: dict[bytes, tuple[int, int]] = {}  # bytes -> (estimated heap, opcodes)


def _check(data: bytes, allowed: dict[tuple[str, str], Any], classes: tuple[Any, ...],
           dict_factories: tuple[Any, ...]) -> int:
    budget = _current.get()
    limit = MAX_OPS if budget is None else min(MAX_OPS, budget.left)
    try:
        return walk(data, allowed, classes, dict_factories, limit, MAX_TOTAL_OPS)
    finally:
        if budget is not None:
            budget.left -= walked[0]

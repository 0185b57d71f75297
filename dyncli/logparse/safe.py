"""Bounded conversions for untrusted log text: numbers, JSON, and the one guard around a record.

Logs and traces are copied off clusters: truncated, corrupted, written by other torch
versions, sometimes hostile. Python's ``int()`` refuses more than 4,300 digits with a
``ValueError``, a float of 400 digits overflows when a caller does arithmetic on it, and
``json.loads`` of 100,000 ``[`` raises ``RecursionError``. Every number a parser takes from a
line goes through here first, so that what a parser hands on is small and finite, and what
does not fit is a counted skip (``ParseStats.reasons``), never an exception.
"""

from __future__ import annotations

import json
import math
from typing import Any

# What a record's parser may raise on a record that does not fit its shape. Anything in this
# tuple, raised while one record is parsed, is counted as a malformed record and the record is
# skipped (``--strict`` turns the count into an error). MemoryError is deliberately absent.
RECORD_ERRORS: tuple[type[Exception], ...] = (
    ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
    UnicodeError, ArithmeticError,
)

# Bigger than any line number, pid, rank, size or byte count a real run produces.
MAX_INT = 1 << 62
MAX_DIGITS = 18


def small_int(text: str | bytes | None) -> int | None:
    """``int(text)`` for an optionally signed run of at most 18 ASCII digits, else None."""
    if text is None:
        return None
    raw = text.strip()
    body = raw[1:] if raw[:1] in ("-", "+", b"-", b"+") else raw
    if not body or len(body) > MAX_DIGITS or not body.isascii() or not body.isdigit():
        return None
    return int(raw)


def need_int(text: str | bytes | None, what: str = "number") -> int:
    """``small_int`` or a ``ValueError`` naming ``what`` (a malformed record)."""
    value = small_int(text)
    if value is None:
        raise ValueError(f"bad {what}")
    return value


def json_int(value: Any) -> int | None:
    """A JSON value as an int when it is one of sane size (not a bool), else None."""
    if type(value) is int and -MAX_INT <= value <= MAX_INT:
        return value
    return None


def json_num(value: Any) -> int | float | None:
    """A JSON int of sane size or a finite float, else None (400-digit numbers, NaN, inf)."""
    if type(value) is float:
        return value if math.isfinite(value) and abs(value) < 1e300 else None
    return json_int(value)


def json_str(value: Any) -> str | None:
    """A JSON value when it is a string, else None."""
    return value if isinstance(value, str) else None


def loads(text: str | bytes) -> Any:
    """``json.loads`` that raises only ``ValueError``: for bad JSON, deep nesting, huge ints.

    The C decoder counts its nesting against the interpreter's recursion limit, so 100,000
    ``[`` end in a ``RecursionError`` at depth ~1,000 rather than a crash; it becomes a
    ``ValueError`` here like any other JSON that is not a record.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def reason(exc: BaseException) -> str:
    """A short, data-free reason for a parse-stats count: our own messages, else the type."""
    text = str(exc)
    if isinstance(exc, ValueError) and text.startswith(("unparsable ", "bad ", "JSON ")):
        return text[:60]
    return type(exc).__name__


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, with "…" when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short(value: object, limit: int = 80) -> str:
    """A bounded ``repr`` of ``value`` for messages: never the 235 MB line of a hostile value."""
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxstring, r.maxother, r.maxlong = 3, limit, limit, 40
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 6
    text = r.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Counts in words: ``1 compile``, ``2 compiles``. Pure: no torch, no rich.

The counts bench and diagnose print beside a noun go through :func:`counted` (or
:func:`noun`, for a noun whose count is said elsewhere), so a count of one never reads
"1 compiles" (round 35: bench's buckets line) and no line carries an if-chain of its own.
"""

from __future__ import annotations


def noun(n: int, word: str, plural: str | None = None) -> str:
    """``word`` for one, its plural for any other count (``plural``: an irregular one)."""
    return word if n == 1 else plural or word + "s"


def counted(n: int, word: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """``n`` and ``word``, plural unless ``n`` is one (``counted(2, "entry", "entries")``);
    ``grouped``: thousands separated (``1,200 requests``)."""
    return (f"{n:,}" if grouped else str(n)) + " " + noun(n, word, plural)

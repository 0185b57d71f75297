"""Typed reads of JSON values for ``from_dict``: a value of the wrong type reads as absent.

A bench document may come from another dyncli, an edited file or a hostile one: every reader
here returns the type it names or the default, never raises, and bounds what it keeps.
"""

from __future__ import annotations

import math
from typing import Any

# An int beyond this is no count or size any run produced; it reads as absent.
MAX_INT = 1 << 62


def num(x: Any, default: float = math.nan) -> float:
    """A JSON number as a float; null, anything else or an int too large for a float: default."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return default
    try:
        return float(x)
    except OverflowError:
        return default


def opt_num(x: Any) -> float | None:
    """A finite number as a float, else None (an optional field)."""
    f = num(x)
    return f if math.isfinite(f) else None


def integer(x: Any, default: int = 0) -> int:
    """A JSON int in ``[-MAX_INT, MAX_INT)``, else default."""
    if isinstance(x, int) and not isinstance(x, bool) and -MAX_INT <= x < MAX_INT:
        return x
    return default


def opt_int(x: Any) -> int | None:
    """A JSON int (bounded) or None."""
    return integer(x) if isinstance(x, int) and not isinstance(x, bool) \
        and -MAX_INT <= x < MAX_INT else None


def text(x: Any, default: str = "") -> str:
    """A JSON string, else default (``null`` reads as the default too)."""
    return x if isinstance(x, str) else default


def opt_text(x: Any) -> str | None:
    """A JSON string or None."""
    return x if isinstance(x, str) else None


def flag(x: Any, default: bool = False) -> bool:
    """A JSON boolean, else default."""
    return x if isinstance(x, bool) else default


def opt_flag(x: Any) -> bool | None:
    """A JSON boolean or None."""
    return x if isinstance(x, bool) else None


def floats(xs: Any) -> list[float]:
    """The numbers of a JSON list (samples), null entries as NaN; not a list: none."""
    return [num(x) for x in xs if x is None or isinstance(x, (int, float))] \
        if isinstance(xs, list) else []


def ints(xs: Any) -> tuple[int, ...]:
    """The integers of a JSON list (booleans are not integers); not a list: none."""
    return tuple(x for x in xs if isinstance(x, int) and not isinstance(x, bool)
                 and abs(x) <= MAX_INT) if isinstance(xs, list) else ()


def texts(xs: Any) -> list[str]:
    """The strings of a JSON list; not a list: none."""
    return [x for x in xs if isinstance(x, str)] if isinstance(xs, list) else []


def obj(x: Any) -> dict[str, Any]:
    """A JSON object, else an empty one."""
    return x if isinstance(x, dict) else {}


def opt_obj(x: Any) -> dict[str, Any] | None:
    """A JSON object or None."""
    return x if isinstance(x, dict) else None


def objs(xs: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list; not a list: none."""
    return [x for x in xs if isinstance(x, dict)] if isinstance(xs, list) else []

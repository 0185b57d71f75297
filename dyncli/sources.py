"""Dynamo source names (``L['x']``, ``L['kwargs']['ids']``) and the user's names for them.

Shared by ``diagnose`` (its mark_dynamic fix lines) and ``suggest`` (its ``--format python``):
both turn a source of a frame's own inputs into the expression a user would write.
"""

from __future__ import annotations

import re

# Inputs of the frame itself: a local, optionally indexed (args tuples, kwargs dicts).
INPUT_RE = re.compile(r"^L\['[^']*'\](?:\[(?:\d+|'[^']*')\])*$")
_LOCAL_RE = re.compile(r"^L\['([A-Za-z_][A-Za-z0-9_]*)'\](.*)$")


def is_input(source: str) -> bool:
    """Whether ``source`` is one of the frame's own inputs (not a parameter, attribute, global)."""
    return INPUT_RE.match(source) is not None


def local_expr(source: str) -> str | None:
    """``L['x']`` → ``x``, ``L['kwargs']['ids']`` → ``kwargs['ids']``; None for other sources."""
    m = _LOCAL_RE.match(source)
    return m.group(1) + m.group(2) if m and is_input(source) else None

"""Dynamo source names (``L['x']``, ``L['kwargs']['ids']``) and the user's names for them.

Shared by ``diagnose`` (its mark_dynamic fix lines) and ``suggest`` (its ``--format python``):
both turn a source of a frame's own inputs into the expression a user would write.
"""

from __future__ import annotations

import keyword
import re

# Inputs of the frame itself: a local, optionally indexed (args tuples, kwargs dicts).
INPUT_RE = re.compile(r"^L\['[^']*'\](?:\[(?:\d+|'[^']*')\])*$")
_LOCAL_RE = re.compile(r"^L\['([A-Za-z_][A-Za-z0-9_]*)'\](.*)\Z")
# Index keys that are written into generated code as they are: digits, or a quoted key of
# plain characters. A key with a backslash or a control character could end the literal and
# make the rest of the name a statement (``L['x']['\']['+os.system(…)+']``): no expression.
_PLAIN_INDEX_RE = re.compile(r"(?:\[(?:\d+|'[A-Za-z0-9_ .:/-]*')\])*\Z")


def is_input(source: str) -> bool:
    """Whether ``source`` is one of the frame's own inputs (not a parameter, attribute, global)."""
    return INPUT_RE.match(source) is not None


def local_expr(source: str) -> str | None:
    """``L['x']`` → ``x``, ``L['kwargs']['ids']`` → ``kwargs['ids']``; None for other sources."""
    m = _LOCAL_RE.match(source)
    if not m or not is_input(source) or keyword.iskeyword(m.group(1)) \
            or not _PLAIN_INDEX_RE.match(m.group(2)):
        return None
    return m.group(1) + m.group(2)

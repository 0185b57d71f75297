"""TORCH_TRACE lines as torch writes them (torch/_logging/_internal.py), for the trace tests."""

from __future__ import annotations

import hashlib
import json

PREFIX = "V1122 01:19:12.903000 4440 torch/_dynamo/guards.py:5625]"


def envelope(kind: str, meta: object, payload: str | None = None, *, end: str = "",
             **ctx: object) -> list[str]:
    """The lines of one record: the JSON envelope, then tab-prefixed payload lines.

    ``end`` is appended to every line ("\\n" for lines as read from a file).
    """
    record: dict[str, object] = {kind: meta, **ctx}
    if payload is not None:
        record["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    lines = [f"{PREFIX} {json.dumps(record)}{end}"]
    if payload is not None:
        lines += [f"\t{part}{end}" for part in payload.split("\n")]
    return lines


def intern(path: str, idx: int, *, end: str = "") -> list[str]:
    """The ``{"str": [path, idx]}`` line that adds ``path`` to the intern table."""
    return [f'{PREFIX} {{"str": [{json.dumps(path)}, {idx}]}}{end}']

"""Allow-list entries as torch reads them: ``L['x']`` (a whole source), ``L['x']:0`` (one dim of
it), ``.*:0`` (a regex: dim 0 of every source).

torch (``torch/_dynamo/variables/builder.py``, 2.6+) matches each entry of
``TORCH_COMPILE_DYNAMIC_SOURCES`` against a source name with ``re.match``, the ``:N`` suffix
naming one dim. Shared by the root causes (which entries are one fix) and the rules.
"""

from __future__ import annotations

import re

from dyncli.sources import size_source, source_regex

_DIM_RE = re.compile(r"^(.*\])(?::\d{1,9})?$")  # L['x']:0 -> L['x']
_PATTERN_DIM_RE = re.compile(r":\d{1,9}$")
_ENTRY_DIM_RE = re.compile(r"\]:\d{1,9}$")


def base(entry: str) -> str:
    """The source of a per-dim entry (``L['x']`` of ``L['x']:0``); other entries as they are."""
    m = _DIM_RE.match(entry)
    return m.group(1) if m else entry


def whole_source(name: str) -> str:
    """``L['x']`` of a per-dim name ``L['x']:0`` (a ``:`` inside the brackets is the source's)."""
    src, sep, tail = name.rpartition(":")
    return src if sep and tail.isdigit() and "]" not in tail else name


def source_of(name: str) -> str:
    """The source a name is about: of an entry (``L['x']:0``) or a size (``L['x'].size()[0]``)."""
    sized = size_source(name)
    return sized[0] if sized is not None else whole_source(name)


def covers(pattern: str, entry: str) -> bool:
    """Whether a regex entry (``.*:0``: dim 0 of every source) matches a concrete entry, as
    torch's ``re.match`` on the source name and its ``:N`` dim would."""
    if not pattern.startswith(".*") or entry.startswith(".*"):
        return False
    pat, _, pdim = pattern.rpartition(":") if _PATTERN_DIM_RE.search(pattern) else (pattern, "", "")
    src, _, dim = entry.rpartition(":") if _ENTRY_DIM_RE.search(entry) else (entry, "", "")
    try:
        return source_regex(pat).match(src) is not None and (not pdim or pdim == dim)
    except (re.error, RecursionError, OverflowError):
        return False


def same_fix(a: str, b: str) -> bool:
    """Whether two entries are one fix: a whole source and a dim of it, or a regex entry and an
    entry it matches."""
    return ((base(a) == base(b) and (a == base(a) or b == base(b)))
            or covers(a, b) or covers(b, a))

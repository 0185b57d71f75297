"""The text of one allow-list entry: a source name raw where that is safe, else an anchored regex.

How torch reads the list (``torch/_dynamo/variables/builder.py``, torch 2.14): the string has
every space removed, is split on commas, an entry ending in ``:N`` applies to dim ``N`` only,
and an entry matches a source when ``pattern == name or re.match(pattern, name)``. So an entry
must have no comma or space, must compile as a regex (``re.match`` raises otherwise, during
compilation), and should match only the names meant: ``[`` starts a character class, so the
raw name ``L['x']`` as a regex means "``L`` then one of ``'``/``x``". Raw names are emitted
(exact equality matches them) unless the regex would also match another recorded source, or
the name cannot be written raw; those get an escaped, ``$``-anchored form and a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dyncli.sources import python_warns_about, source_regex


def _escaped(name: str) -> str:
    """An anchored regex matching exactly ``name``, with no comma or space in it."""
    return re.escape(name).replace("\\ ", "\\x20").replace(",", "\\x2c") + "$"


_SPECIAL = frozenset("\\.^$*+?{}[]()|")
_QUANTIFIER_RE = re.compile(r"[|*+?{]")


def _first_two(pattern: str) -> set[str] | None:
    """The possible first two characters of a string ``pattern`` can ``re.match``, or None.

    Only for the plain shapes source names have (``L['x']…``: one literal, then a simple
    character class, no quantifier or alternation anywhere); anything else means "unknown".
    """
    if len(pattern) < 2 or _QUANTIFIER_RE.search(pattern):
        return None
    if pattern[0] in _SPECIAL:
        return None
    if pattern[1] not in _SPECIAL:
        return {pattern[:2]}
    if pattern[1] != "[":
        return None
    end = pattern.find("]", 2)
    members = pattern[2:end] if end > 2 else ""
    if not members or members[0] == "^" or "\\" in members or "-" in members or "[" in members:
        return None
    return {pattern[0] + c for c in members}


class NameIndex:
    """Recorded source names by their first two characters, to test entries against."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.by_prefix: dict[str, list[str]] = {}
        for name in names:
            self.by_prefix.setdefault(name[:2], []).append(name)

    def pool(self, pattern: str) -> Iterable[str]:
        """The names ``pattern`` could match, by the prefix index when its shape allows."""
        keys = _first_two(pattern)
        return self.names if keys is None else [n for k in keys for n in self.by_prefix.get(k, ())]


# Names of this shape are always valid regexes (one literal, then bracket "classes").
_SIMPLE_RE = re.compile(r"^L\['\w*'\](?:\[(?:\d+|'\w*')\])*$")


def pattern_for(name: str, others: NameIndex, warnings: list[str]) -> tuple[str, bool]:
    """The entry text naming ``name``: raw when that is safe, else escaped (and why)."""
    problem = None
    if re.search(r"[\s,]", name):
        problem = "contains a comma or space, which torch strips or splits on"
    elif re.search(r":\d+$", name):
        problem = "ends in ':N', which torch would read as a dim"
    elif len(name) > 1000 or _QUANTIFIER_RE.search(name):
        # Never compiled nor matched: "((((…" of 5,000 characters overflows the regex
        # compiler's recursion, and a name such as "(a*)*b" would backtrack on the others.
        problem = "holds regex operators (| * + ? {) or is very long"
    else:
        pool = [n for n in others.pool(name) if n != name]
        if _SIMPLE_RE.match(name) and not pool:
            return name, False  # fast path: valid, and nothing else it could match
        try:
            # Python warns (FutureWarning) where a class holds "[[", "--", "&&", "~~" or "||":
            # later versions may read them as set operations, so torch's reading of the name
            # is not fixed
            warns = python_warns_about(name)
            rx = source_regex(name)
        except (re.error, RecursionError, OverflowError):
            problem = "is not a valid regex (torch would raise on it while compiling)"
        else:
            if warns:
                problem = ("holds '[[', '--', '&&', '~~' or '||' inside [...], which Python's re "
                           "may read as set operations")
            elif hits := sorted(n for n in pool if rx.match(n)):
                problem = f"as a regex also matches {', '.join(hits[:3])}" + (" …" if len(hits) > 3 else "")
    if problem is None:
        return name, False
    warnings.append(f"{name} {problem}; emitted as the anchored regex {_escaped(name)}")
    return _escaped(name), True

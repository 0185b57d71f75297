"""What every advice rule shares: a reason's size mismatch as a source, where specializations
pin a size, the evidence lines the rules cite.

The text of a guard failure is read by ``dyncli.logparse.guardtext`` (the one grammar of guard
text, which the log readers use too); this module puts it in diagnose's terms: sources as
torch matches them, compile numbers, user locations. The rules are in
``dyncli.diagnose.advice``, ``size_changes`` and ``branches``.
"""

from __future__ import annotations

import re

from dyncli.diagnose.model import Diagnosis, SpecializationReport
from dyncli.logparse import guardtext
from dyncli.logparse.events import CompileId
from dyncli.sources import from_reason, size_source

_RESUME = "torch_dynamo_resume_in_"


def mismatch(reason: str) -> tuple[str, int, int, int] | None:
    """(source, dim, expected, actual) of a ``size mismatch`` reason, source spelled as torch's."""
    m = guardtext.mismatch(guardtext.guard_of(reason))
    if m is None or m.what != "size":
        return None
    return from_reason(m.name), m.dim, m.expected, m.actual


def failed_entry(reason: str) -> int | None:
    """The compile number of the cache entry a reason failed on (``0/1: …`` → 1)."""
    failed, _ = guardtext.split_failed(reason)
    cid = CompileId.parse(failed.lstrip("!")) if failed else None
    return cid.compile if cid is not None else None


# (2.3's nightlies of early 2024 wrote "resume_in_f_at_217" before the prefix came:
# float8_experimental#192)
_NEW_RESUME = re.compile(r"^(?:torch_dynamo_)?resume_in_(?P<fn>.{1,400})_at_(?P<line>\d{1,9})$")
# (torch 2.0 named it "<graph break in f>": resume_execution.py 2.0.1; Lightning#17214)
_OLD_RESUME = re.compile(r"^(?:<(?:resume|graph break) in (?P<fn>[^<>]{1,400})>"
                         r"|resume_in_(?P<fn2>\w{1,400}))$")
_MAX_DEPTH = 16  # nested names: a resume function of a resume function…


def is_resume(function: str) -> bool:
    """Whether a frame is torch's resume function after a graph break (no user call to mark):
    ``torch_dynamo_resume_in_f_at_12`` (torch 2.3 on), ``resume_in_f`` (2.2), ``<resume in f>``
    (2.1), ``<graph break in f>`` (2.0)."""
    return function.startswith(_RESUME) or _OLD_RESUME.match(function) is not None


def broke_at(name: str, first_line: int | None = None) -> list[tuple[str, int]]:
    """``(function, line)`` of each graph break a resume function's name proves, the first
    break first (dyncli.diagnose.resumed); [] for another name, or an old-style one (torch
    2.0-2.2) whose first line is not known: that alone holds the line there."""
    out: list[tuple[str, int]] = []
    for _ in range(_MAX_DEPTH):
        m = _NEW_RESUME.match(name)
        if m is None:
            break
        name = m["fn"]
        out.append((name, int(m["line"])))
    if out:
        return [(name, line) for _, line in reversed(out)]
    m = _OLD_RESUME.match(name)
    if m is None or first_line is None or first_line <= 0:
        return []
    return [(m["fn"] or m["fn2"], first_line)]


def resume_line(function: str, first_line: int | None = None) -> int | None:
    """The line a resume function resumes at (``torch_dynamo_resume_in_f_at_12`` → 12)."""
    found = broke_at(function, first_line)
    return found[-1][1] if found else None


def size_pins(diag: Diagnosis) -> dict[tuple[int | None, str, int], list[SpecializationReport]]:
    """Specializations of size symbols, by (rank, tensor source, dim)."""
    out: dict[tuple[int | None, str, int], list[SpecializationReport]] = {}
    for s in diag.specializations:
        for src in s.sources:
            ss = size_source(src)
            if ss is not None:
                out.setdefault((s.rank, ss[0], ss[1]), []).append(s)
    return out


def pinned_always(specs: list[SpecializationReport]) -> bool:
    """Specialized in two compiles or more, or by the guard limit: every value compiles."""
    return len({s.compile_id for s in specs}) >= 2 or any(s.reason == "forcing_spec" for s in specs)


def location(user: object) -> str:
    """``file:line`` of a user-code location (a ``UserLoc``), or "an unknown location"."""
    file, line = getattr(user, "file", ""), getattr(user, "line", 0)
    return f"{file}:{line}" if file else "an unknown location"


def cite(line: int, cid: str, text: str) -> str:
    """One evidence line of a suggestion: ``line 12: [0/1] text`` (the log line, the compile)."""
    return f"line {line}: [{cid}] {text}" if cid else f"line {line}: {text}"

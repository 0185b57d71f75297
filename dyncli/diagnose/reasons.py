"""What every advice rule shares: a reason's size mismatch as a source, where specializations
pin a size, the evidence lines the rules cite.

The text of a guard failure is read by ``dyncli.logparse.guardtext`` (the one grammar of guard
text, which the log readers use too); this module puts it in diagnose's terms: sources as
torch matches them, compile numbers, user locations. The rules are in
``dyncli.diagnose.advice``, ``size_changes`` and ``branches``.
"""

from __future__ import annotations

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


def is_resume(function: str) -> bool:
    """Whether a frame is torch's resume function after a graph break (no user call to mark)."""
    return function.startswith(_RESUME)


def resume_line(function: str) -> int | None:
    """The line a resume function resumes at (``torch_dynamo_resume_in_f_at_12`` → 12)."""
    if not is_resume(function):
        return None
    head, sep, line = function.rpartition("_at_")
    ok = sep and len(head) > len(_RESUME) and line.isdigit() and line.isascii() and len(line) <= 9
    return int(line) if ok else None


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

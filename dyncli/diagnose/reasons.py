"""Reading torch's guard-failure reasons and specializations: what every advice rule shares.

The cause of a recompile from its reason text (``classify``), the parts of a ``size mismatch``
reason and of its compile id, where specializations pin a size, and the evidence lines the
rules cite. The rules are in ``dyncli.diagnose.advice`` and ``dyncli.diagnose.size_changes``.
"""

from __future__ import annotations

import re

from dyncli.diagnose.model import Diagnosis, SpecializationReport
from dyncli.logparse.events import CompileId
from dyncli.sources import from_reason, size_source

# A guard on a tensor's geometry: torch's TENSOR_MATCH message or a shape guard on a size symbol.
_SIZE_RE = re.compile(r"size mismatch|stride mismatch|storage_offset|\.size\(\)|\.stride\(\)"
                      r"|\.shape\b|numel\(\)|_dynamo_dynamic_indices")
# ``tensor 'x' size mismatch at index 0. expected 2, actual 3`` (torch/_dynamo/guards.py): the
# name as strip_local_scope prints it (dyncli.sources.from_reason turns it back into a source).
_MISMATCH_RE = re.compile(r"^tensor '(?P<name>.+)' size mismatch at index (?P<dim>\d+)\. "
                          r"expected (?P<exp>\d+), actual (?P<act>\d+)")
# ``_dynamo_dynamic_indices not a subset: runtime {0, 1} is not a subset of compiled {0}``
INDICES_RE = re.compile(r"_dynamo_dynamic_indices not a subset: runtime \{(?P<rt>[\d, ]*)\} "
                        r"is not a subset of compiled \{(?P<c>[\d, ]*)\}")
# A guard on a Python number: ``n == 31``, ``self.k != 4``, ``2 <= n`` (torch strips L[...]).
_NAME = r"[A-Za-z_][\w.]*(?:\[[^\]]+\][\w.]*)*"
_NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_SCALAR_RE = re.compile(rf"^(?:not \()?\(?\s*(?:{_NAME}\s*(?:==|!=|<=|>=|<|>)\s*{_NUM}"
                        rf"|{_NUM}\s*(?:==|!=|<=|>=|<|>)\s*{_NAME}"
                        rf"(?:\s*(?:and|<=|<)\s*{_NAME}?\s*(?:<=|<)?\s*{_NUM}?)?)\s*\)?$")
CID_RE = re.compile(r"^!?\d+(?:/\d+)*(?:_\d+)?: ")  # the failed cache entry's "0/1: "
PARAM_RE = re.compile(r"_parameters\[|_buffers\[|force_parameter_static_shapes")


def guard_text(reason: str) -> str:
    """The guard text without torch's ``# user code`` annotation."""
    return reason.split("  #", 1)[0].split(" # ", 1)[0].strip()


def classify(reason: str) -> str:
    """``size``, ``scalar`` or ``other`` for one guard-failure reason (text after ``0/0: ``)."""
    text = guard_text(reason)
    if _SIZE_RE.search(text):
        return "size"
    if _SCALAR_RE.match(text) and not re.search(r"\b(True|False|None)\b", text):
        return "scalar"
    return "other"


def mismatch(reason: str) -> tuple[str, int, int, int] | None:
    """(source, dim, expected, actual) of a ``size mismatch`` reason, source spelled as torch's."""
    m = _MISMATCH_RE.match(guard_text(CID_RE.sub("", reason)))
    if m is None:
        return None
    return from_reason(m["name"]), int(m["dim"]), int(m["exp"]), int(m["act"])


def failed_entry(reason: str) -> int | None:
    """The compile number of the cache entry a reason failed on (``0/1: …`` → 1)."""
    m = CID_RE.match(reason)
    cid = CompileId.parse(m.group(0)[:-2].lstrip("!")) if m else None
    return cid.compile if cid is not None else None


def is_resume(function: str) -> bool:
    """Whether a frame is torch's resume function after a graph break (no user call to mark)."""
    return function.startswith("torch_dynamo_resume_in_")


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

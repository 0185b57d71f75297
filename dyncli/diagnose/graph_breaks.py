"""Distinct graph breaks, named by torch's own codes (``GB0025``…) and explained by torch.

Since torch 2.7 every graph break has a type and, since 2.14, a code in
``torch/_dynamo/graph_break_registry.json`` (561 codes in 2.14.1, 592 in 2.15.0) with an
explanation and hints; torch prints the type and a documentation link that carries the code
(``…/gb/gb0025.html``). A break is one (code, user file:line): the same break reached from
two call sites is ONE break with two call sites; one inside a loop is one break however
often the loop hit it.

The pipeline (``dyncli.diagnose.api.run``) passes the registry in: :func:`installed_registry`
reads the installed torch's WITHOUT importing torch (the CLI path stays torch-free):
``importlib.util.find_spec("torch")`` finds the package directory, and the JSON is read only
when the diagnosis has graph breaks; :func:`load_registry` reads a registry file (tests read
a recorded one, whatever torch is installed). Where the log carries the concrete
explanation and hints (they name the user's function and types) those are shown; the
registry fills what the log lacks (older torch printed no explanation) and maps a type to
its code when the log has no link. A code the registry does not know (a newer torch wrote
the log) is shown as found, with ``known: false``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dyncli.diagnose.findings import DistinctBreak
from dyncli.diagnose.model import Diagnosis, rank_key

_MAX_REGISTRY_BYTES = 16 << 20


@dataclass(frozen=True)
class Registry:
    """torch's graph-break registry: code -> (type, explanation, hints), and type -> code."""

    version: str
    by_code: dict[str, tuple[str, str, tuple[str, ...]]]
    by_type: dict[str, str]


@functools.lru_cache(maxsize=1)
def installed_registry() -> Registry | None:
    """The installed torch's registry, or None (no torch, an older torch, a damaged file)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    dirs = list(spec.submodule_search_locations or ()) if spec is not None else []
    for d in dirs:
        found = load_registry(Path(d) / "_dynamo" / "graph_break_registry.json", _version(Path(d)))
        if found is not None:
            return found
    return None


def load_registry(path: Path, version: str) -> Registry | None:
    """A registry file (``graph_break_registry.json`` of torch ``version``; ``.gz`` too), or
    None when it is absent, too big or damaged."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_REGISTRY_BYTES:
            return None
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":  # gzip, bounded as the file itself is
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, _MAX_REGISTRY_BYTES)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, zlib.error):
        return None
    return _build(data, version)


_VERSION_RE = re.compile(r"^__version__\s*=\s*['\"]([^'\"]{1,64})['\"]", re.M)


def _version(package: Path) -> str:
    """torch's version from ``torch/version.py``, read as text: importing it imports torch,
    and importlib.metadata scans every installed distribution (0.1 s)."""
    try:
        m = _VERSION_RE.search((package / "version.py").read_text(encoding="utf-8")[:65536])
    except OSError:
        return "unknown"
    return m.group(1) if m else "unknown"


def _build(data: Any, version: str) -> Registry | None:
    if not isinstance(data, dict):
        return None
    by_code: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    by_type: dict[str, str] = {}
    for code, entries in data.items():
        if not isinstance(code, str) or not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("Gb_type"), str):
                continue
            hints = entry.get("Hints")
            if i == 0:  # the first entry is the current wording; later ones are history
                by_code[code] = (entry["Gb_type"], str(entry.get("Explanation") or ""),
                                 tuple(h for h in hints if isinstance(h, str))
                                 if isinstance(hints, list) else ())
            by_type.setdefault(entry["Gb_type"], code)
    return Registry(version=version, by_code=by_code, by_type=by_type)


def distinct_breaks(diag: Diagnosis, reg: Registry | None) -> tuple[DistinctBreak, ...]:
    """The graph breaks of ``diag``, one per (code or type, file, line), most frequent first;
    ``reg``: the registry that names and explains the codes (None: the log's words only)."""
    if not diag.graph_breaks:
        return ()
    groups: dict[tuple[str, str, int, str], list[Any]] = defaultdict(list)
    for b in diag.graph_breaks:
        gb_type = b.gb_type or b.reason
        code = b.gb_code or (reg.by_type.get(gb_type, "") if reg else "")
        groups[(code or gb_type, b.file, b.user_line, b.function)].append((b, code, gb_type))
    names = {(f.rank, f.frame_id): f.function for f in diag.frames}
    out = []
    for (_, file, line, function), members in groups.items():
        first, code, gb_type = members[0]
        known = bool(reg and code in reg.by_code)
        reg_type, reg_expl, reg_hints = reg.by_code[code] if reg and known else ("", "", ())
        frames: dict[str, None] = {}
        for b, _, _ in members:
            for cid in b.compile_ids:
                frame = cid.rsplit("/", 1)[0]
                frames[f"{names.get((b.rank, frame)) or '?'} ({frame})"] = None
        out.append(DistinctBreak(
            code=code, known=known, gb_type=gb_type or reg_type,
            explanation=first.explanation or reg_expl or (
                f"the log proves it by the name of the code torch resumed after it "
                f"({first.resumed_in}), not its reason" if first.resumed_in else ""),
            hints=first.hints or reg_hints, file=file, line=line, function=function, user_code=first.code, count=sum(b.count for b, _, _ in members),
            call_sites=tuple(dict.fromkeys(s for b, _, _ in members for s in b.call_sites)),
            frames=tuple(frames), debug=first.debug, raised=any(b.raised for b, _, _ in members),
            compile_ids=tuple(dict.fromkeys(c for b, _, _ in members for c in b.compile_ids)),
            ranks=tuple(sorted({b.rank for b, _, _ in members}, key=rank_key))))
    return tuple(sorted(out, key=lambda d: (-d.count, d.file, d.line)))

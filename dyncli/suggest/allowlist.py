"""PGO state → :class:`AllowList`: the inputs to allow-list in TORCH_COMPILE_DYNAMIC_SOURCES.

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
from dataclasses import dataclass, field
from typing import Any

from dyncli.config import SuggestConfig
from dyncli.errors import UsageError
from dyncli.gcpause import gc_paused
from dyncli.output import envelope
from dyncli.sources import left_out as is_left_out
from dyncli.sources import local_expr
from dyncli.suggest.pgo_state import Entry, PgoState

ENV_VAR = "TORCH_COMPILE_DYNAMIC_SOURCES"
# The ``:N`` per-dim suffix landed in pytorch/pytorch#184120 (merged 2026-05-18); torch 2.14.1
# is the oldest release it was verified in here, so older targets get whole-source entries.
DIM_SUFFIX_SINCE = (2, 14)

_RESUME_PREFIX = "torch_dynamo_resume_in_"


@dataclass(frozen=True)
class FrameRef:
    """Where a compiled frame's code lives."""

    function: str
    file: str
    line: int

    def label(self) -> str:
        """``file:line:function``, the string ``--frame`` matches."""
        return f"{self.file}:{self.line}:{self.function}"


@dataclass(frozen=True)
class InputRow:
    """One recorded input of a frame, as torch renders it, and what dyncli did with it.

    ``status``: ``suggested`` (in the output), ``static`` (never varied), ``param``
    (parameter / module attribute / global, left out by default), ``excluded`` (``--exclude``).
    ``param`` says whether the source is such an attribute rather than an input of the frame.
    """

    source: str
    entry: Entry = field(repr=False, compare=False)
    kind: str
    dynamic_dims: tuple[int, ...] | None
    status: str
    param: bool = False

    @property
    def render(self) -> str:
        """The input as torch's ``FrameStateSizeEntry.render()`` writes it."""
        return self.entry.render()


@dataclass(frozen=True)
class FrameInputs:
    """A frame and its recorded inputs."""

    frame: FrameRef
    inputs: tuple[InputRow, ...]


@dataclass(frozen=True)
class SourceSuggestion:
    """One source to mark dynamic and the allow-list entries that do it.

    ``dims`` is ``None`` for scalars and for whole-source entries. ``maybe_dims`` are dims once
    seen with size 0 or 1 (torch specializes those: use ``maybe_mark_dynamic``). ``local`` is
    the Python expression of the tensor in its frame when ``mark_dynamic`` can reach it;
    ``dynamic_dims`` are all dims torch found dynamic, whatever form the entries take.
    """

    source: str
    kind: str
    dims: tuple[int, ...] | None
    entries: tuple[str, ...]
    frames: tuple[FrameRef, ...]
    maybe_dims: tuple[int, ...] = ()
    escaped: bool = False
    local: str | None = None
    dynamic_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class AllowList:
    """The result of ``dyncli suggest``: the allow-list, per-frame inputs and what was read."""

    frames: tuple[FrameInputs, ...]
    sources: tuple[SourceSuggestion, ...]
    inputs: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    jobs: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    left_out: tuple[str, ...]
    torch_hint: str
    per_dim: bool

    @property
    def entries(self) -> tuple[str, ...]:
        """Every allow-list entry, in order."""
        return tuple(e for s in self.sources for e in s.entries)

    @property
    def value(self) -> str:
        """The TORCH_COMPILE_DYNAMIC_SOURCES value."""
        return ",".join(self.entries)

    @property
    def env(self) -> str:
        """The full ``TORCH_COMPILE_DYNAMIC_SOURCES=…`` assignment, shell-quoted."""
        return f"{ENV_VAR}={shell_quote(self.value)}"

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document of ``dyncli suggest`` (schema_version 1; docs/suggest.md)."""
        with gc_paused():  # a 10,000-frame state builds ~10^6 objects: no GC passes meanwhile
            return self._document()

    def _document(self) -> dict[str, Any]:
        return envelope("suggest", {
            "env": self.env,
            "value": self.value,
            "entries": list(self.entries),
            "torch_hint": self.torch_hint,
            "per_dim": self.per_dim,
            "sources": [{
                "source": src.source, "kind": src.kind,
                "dims": list(src.dims) if src.dims is not None else None,
                "entries": list(src.entries), "maybe_dims": list(src.maybe_dims), "escaped": src.escaped,
                "frames": [{"function": f.function, "file": f.file, "line": f.line} for f in src.frames],
            } for src in self.sources],
            "frames": [{
                "function": fr.frame.function, "file": fr.frame.file, "line": fr.frame.line,
                "inputs": [{"source": r.source, "render": r.render, "kind": r.kind,
                            "dynamic_dims": list(r.dynamic_dims) if r.dynamic_dims is not None else None,
                            "status": r.status, "param": r.param} for r in fr.inputs],
            } for fr in self.frames],
            "left_out": list(self.left_out),
            "inputs": list(self.inputs),
            "skipped": [{"file": f, "error": e} for f, e in self.skipped],
            "jobs": list(self.jobs),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        })


def shell_quote(value: str) -> str:
    """Double quotes as torch's own hint writes them, single quotes where ``$ \\ ` "`` occur."""
    if not re.search(r'[$`"\\]', value):
        return f'"{value}"'
    return "'" + value.replace("'", "'\\''") + "'"


def parse_torch_version(text: str) -> tuple[int, int]:
    """``2.5.1+cu124`` → ``(2, 5)``; a ``UsageError`` for anything else."""
    m = re.match(r"^\s*v?(\d+)\.(\d+)", text)
    if not m:
        raise UsageError(f"--torch-version: expected a version such as 2.5 or 2.14.1, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _compile(pattern: str | None, option: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        raise UsageError(f"{option}: not a valid regex {pattern[:80]!r}: "
                         f"{e if isinstance(e, re.error) else 'nested too deeply'}") from None


def _kind(entry: Entry) -> str:
    return "tensor" if entry.is_tensor else "scalar"


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


class _NameIndex:
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


def _pattern_for(name: str, others: _NameIndex, warnings: list[str]) -> tuple[str, bool]:
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
            rx = re.compile(name)
        except (re.error, RecursionError, OverflowError):
            problem = "is not a valid regex (torch would raise on it while compiling)"
        else:
            hits = sorted(n for n in pool if rx.match(n))
            if hits:
                problem = f"as a regex also matches {', '.join(hits[:3])}" + (" …" if len(hits) > 3 else "")
    if problem is None:
        return name, False
    warnings.append(f"{name} {problem}; emitted as the anchored regex {_escaped(name)}")
    return _escaped(name), True


def _local_expr(source: str, frames: list[FrameRef]) -> str | None:
    """``L['x']`` → ``x``, ``L['kwargs']['ids']`` → ``kwargs['ids']`` (user frames only)."""
    if all(f.function.startswith(_RESUME_PREFIX) for f in frames):
        return None
    return local_expr(source)


def _across_frames(entries: list[Entry]) -> tuple[str, int, tuple[int, ...], set[int]]:
    """(kind, rank, dynamic dims, dims seen with size 0/1) of one source over its frames.

    The allow-list is global, so a dim is listed when it is dynamic in *any* frame; unlike
    torch's own merge, two frames that each keep a dim at a different static size do not make
    it dynamic. A rank that differs between frames, or is unknown, means the whole source.
    """
    ranks = {len(e.size) if isinstance(e.size, tuple) else -1 for e in entries}
    if len(ranks) != 1 or -1 in ranks:
        return ("tensor" if ranks - {-1} else "scalar"), 0, (), set()
    rank = ranks.pop()
    dyn = sorted({d for e in entries for d in e.dynamic_dims()})
    small = {d for e in entries for d in e.small_sizes}
    return "tensor", rank, tuple(dyn), small


def build_allowlist(state: PgoState, cfg: SuggestConfig) -> AllowList:
    """Turn merged PGO state into the allow-list, applying the filters of ``cfg``."""
    frame_rx = _compile(cfg.frame, "--frame")
    exclude_rx = _compile(cfg.exclude, "--exclude")
    per_dim = cfg.torch_version is None or parse_torch_version(cfg.torch_version) >= DIM_SUFFIX_SINCE
    all_names = _NameIndex({src for _, entries in state.frames.values() for src in entries})

    # source -> (its entries in the frames where it is dynamic, those frames)
    chosen: dict[str, tuple[list[Entry], list[FrameRef]]] = {}
    static_in: dict[str, list[FrameRef]] = {}
    reports: list[FrameInputs] = []
    left_out: dict[str, None] = {}
    torch_hint: dict[str, None] = {}
    for key, entries in state.frames.values():
        ref = FrameRef(key.name, key.filename, key.line)
        if frame_rx is not None and not frame_rx.search(ref.label()):
            continue
        rows = []
        for source, entry in entries.items():
            dynamic = entry.is_dynamic
            if dynamic:
                torch_hint[source] = None
            if not dynamic:
                status = "static"
                static_in.setdefault(source, []).append(ref)
            elif exclude_rx is not None and exclude_rx.search(source):
                status = "excluded"
            elif not cfg.include_params and is_left_out(source):
                status = "param"
                left_out[source] = None
            else:
                status = "suggested"
                seen, refs = chosen.setdefault(source, ([], []))
                seen.append(entry)
                refs.append(ref)
            row_dims = entry.dynamic_dims() if entry.is_tensor else None
            rows.append(InputRow(source, entry, _kind(entry), row_dims, status,
                                 is_left_out(source)))
        if rows:
            reports.append(FrameInputs(ref, tuple(rows)))

    warnings: list[str] = []
    notes: list[str] = []
    if frame_rx is not None and not reports and state.frames:
        warnings.append(f"--frame {cfg.frame!r} matched none of the {len(state.frames)} frames")
    sources = []
    for source, (seen, refs) in chosen.items():
        pattern, escaped = _pattern_for(source, all_names, warnings)
        kind, rank, dyn, small = _across_frames(seen)
        dims: tuple[int, ...] | None = None
        if kind == "tensor" and per_dim and len(dyn) < rank:
            dims = dyn
        texts = tuple(f"{pattern}:{d}" for d in dims) if dims else (pattern,)
        maybe = tuple(d for d in dyn if d in small)
        sources.append(SourceSuggestion(source, kind, dims, texts, tuple(refs), maybe, escaped,
                                        _local_expr(source, refs) if dyn else None, dyn))
        if source in static_in:
            where = ", ".join(f.label() for f in static_in[source])
            notes.append(f"{source} is also an input of {where}, static there; "
                         "the allow-list entry makes it dynamic in every frame")
    if left_out:
        shown = ", ".join(list(left_out)[:10]) + (" …" if len(left_out) > 10 else "")
        notes.append(f"left out {len(left_out)} dynamic parameter/module-attribute/global source(s) "
                     "that torch's own hint includes: each costs at least one more compile per "
                     "run (a static first compile, then a recompile when it changes); "
                     "--include-params keeps them: " + shown)
    if not per_dim:
        notes.append(f"--torch-version {cfg.torch_version}: whole-source entries (the ':N' dim "
                     f"suffix is only emitted for torch >= {DIM_SUFFIX_SINCE[0]}.{DIM_SUFFIX_SINCE[1]})")
    hint = ",".join(torch_hint)
    return AllowList(
        frames=tuple(reports), sources=tuple(sources), inputs=tuple(state.inputs),
        skipped=tuple(state.skipped), jobs=tuple(state.jobs), warnings=tuple(warnings),
        notes=tuple(notes), left_out=tuple(left_out),
        torch_hint=f'{ENV_VAR}="{hint}"' if hint else "", per_dim=per_dim,
    )

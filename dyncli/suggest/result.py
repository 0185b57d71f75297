"""The result of ``dyncli suggest``: :class:`AllowList` and the records it is made of.

Owns the frames and inputs as read (:class:`FrameRef`, :class:`InputRow`, :class:`FrameInputs`),
each source to mark dynamic (:class:`SourceSuggestion`), the fix text (``VAR=value``
assignments) and the ``--json`` document. ``allowlist`` builds these; ``render`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dyncli.gcpause import gc_paused
from dyncli.output import envelope
from dyncli.quoting import shell_quote
from dyncli.suggest.pgo_state import Entry
from dyncli.suggest.source_lists import DYNAMIC, SourceList, Target
from dyncli.suggest.stale import StaleFrame

ENV_VAR = "TORCH_COMPILE_DYNAMIC_SOURCES"


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
    (parameter / module attribute / global, left out by default), ``excluded`` (``--exclude``),
    ``stale`` (the frame's file changed since torch recorded it; ``--include-stale`` keeps it),
    ``no-fix`` (the input shows no list entry would lower its compiles: a number the state
    does not show to be an int that stays dynamic, or what a trace shows pinned; a note says
    why).
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
    ``dynamic_dims`` are the dims the dynamic-list entries (or ``mark_dynamic``) make dynamic.
    ``unbacked_dims`` / ``unbacked_entries``: dims seen with size 0 or 1 that go to
    TORCH_COMPILE_UNBACKED_SOURCES instead (no 0/1 specialization); ``static_dims``: dims a
    ``--static`` entry kept out of both lists.
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
    unbacked_dims: tuple[int, ...] = ()
    unbacked_entries: tuple[str, ...] = ()
    static_dims: tuple[int, ...] = ()


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
    lists: tuple[SourceList, ...] = ()
    target: Target | None = None
    stale: tuple[StaleFrame, ...] = ()

    @property
    def entries(self) -> tuple[str, ...]:
        """Every allow-list entry, in order."""
        return tuple(e for s in self.sources for e in s.entries)

    @property
    def value(self) -> str:
        """The TORCH_COMPILE_DYNAMIC_SOURCES value."""
        return ",".join(self.entries)

    def source_list(self, name: str) -> SourceList | None:
        """The list called ``name`` (``dynamic``, ``unbacked``, ``static``), if any."""
        return next((sl for sl in self.lists if sl.name == name), None)

    @property
    def emitted(self) -> tuple[SourceList, ...]:
        """The lists the fix sets: non-empty and read by the target (the dynamic one always)."""
        return tuple(sl for sl in self.lists if sl.read and (sl.entries or sl.name == DYNAMIC))

    @property
    def assignments(self) -> tuple[str, ...]:
        """``VAR=value`` (shell-quoted) for each list the fix sets; the dynamic one when none has
        entries, so that the fix is never empty text."""
        shown = [sl for sl in self.emitted if sl.entries]
        if not shown:
            return (f"{ENV_VAR}={shell_quote(self.value)}",)
        return tuple(f"{sl.env_var}={shell_quote(sl.value)}" for sl in shown)

    @property
    def env(self) -> str:
        """Every emitted ``VAR=value`` assignment, separated by spaces (the ``env`` form)."""
        return " ".join(self.assignments)

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
                "unbacked_dims": list(src.unbacked_dims), "unbacked_entries": list(src.unbacked_entries),
                "static_dims": list(src.static_dims),
                "frames": [{"function": f.function, "file": f.file, "line": f.line} for f in src.frames],
            } for src in self.sources],
            "lists": [{"name": sl.name, "env_var": sl.env_var, "config": sl.config,
                       "entries": list(sl.entries), "value": sl.value, "read": sl.read}
                      for sl in self.lists],
            "torch_version": ({"target": self.target.version, "from": self.target.origin}
                              if self.target is not None else None),
            "stale": [{"function": s.function, "file": s.file, "line": s.line,
                       "recorded_hash": s.recorded_hash, "checked": s.checked,
                       "current_hash": s.current_hash} for s in self.stale],
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

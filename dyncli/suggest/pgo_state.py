"""The PGO state torch records, as plain dyncli values: entries, frame keys, their merge.

What ``pgo_pickle`` (pickled files, Redis) and ``pgo_trace`` (TORCH_TRACE artifacts) read
becomes these; ``allowlist`` turns them into the allow-list. No IO and no torch here. The
merge follows torch's own ``FrameStateSizeEntry`` merge (``torch/_dynamo/pgo.py``): a value
that differs becomes ``DYNAMIC``.
"""

from __future__ import annotations

import enum
import pickle
from dataclasses import dataclass, field
from typing import Any


class Auto(enum.Enum):
    """torch's two lattice tokens: ``AutoDynamic.token`` (top) and ``AutoUnset.token`` (bottom)."""

    DYNAMIC = "dynamic"
    UNSET = "unset"

    def __repr__(self) -> str:
        return f"Auto.{self.name}"

    def __setstate__(self, _state: Any) -> None:
        # pickle's BUILD on a token would change it for every later file: refuse it.
        raise pickle.UnpicklingError("refused BUILD on a shared token: not PGO state")


DYNAMIC = Auto.DYNAMIC
UNSET = Auto.UNSET


@dataclass(frozen=True)
class InferStride:
    """``stride[dim] * size[dim]`` — torch's ``InferStride``; rendered ``S(dim)``."""

    dim: int


Atom = Any  # int | float | Auto | InferStride
Tup = Any  # Auto | tuple[Atom, ...]


@dataclass
class Entry:
    """One recorded input of a frame (torch's ``FrameStateSizeEntry``), merged across files.

    ``small_sizes`` collects, per dim, static sizes 0 or 1 seen for that dim (from a static
    size in some file or from ``excluded_sizes``): torch specializes 0/1 sizes, so a
    ``mark_dynamic`` on such a dim can fail and ``maybe_mark_dynamic`` is the safe call.
    """

    scalar: Atom = UNSET
    size: Tup = UNSET
    stride: Tup = UNSET
    small_sizes: dict[int, set[int]] = field(default_factory=dict)
    # A pickle's ``excluded_scalar``: torch records the int a scalar leaves behind when it
    # turns dynamic (pgo.py ``__ior__``: only when both values are ints; a float leaves
    # nothing) and clears it when the frame compiles again with the scalar already dynamic.
    # True: an int that went dynamic at its frame's last compile; False: a pickle recorded
    # none (a float, or its frame compiled again after: code that specializes it does that);
    # None: not from a pickle (a trace's rendered state carries no such field).
    int_seen: bool | None = None
    # A pickle's ``excluded_sizes`` of a tensor: the sizes it left when a dim turned dynamic,
    # cleared when its frame compiles again with nothing new turning dynamic. False: the frame
    # compiled again after (a benign recompile, or a pin: mark_static, code that specializes
    # the size at every value, the guard limit, which the state cannot tell apart).
    settled: bool | None = None

    def render(self) -> str:
        """The entry as ``FrameStateSizeEntry.render()`` writes it (torch 2.14)."""
        if self.size is DYNAMIC and self.stride is DYNAMIC:
            if self.scalar is DYNAMIC:
                return "fully dynamic scalar or tensor"
            return f"scalar {_atom_text(self.scalar)}"
        if self.scalar is DYNAMIC and isinstance(self.size, tuple) and isinstance(self.stride, tuple):
            return f"tensor size={_tup_text(self.size)} stride={_tup_text(self.stride)}"
        return (f"unusual FrameStateSizeEntry(scalar={_atom_text(self.scalar)}, "
                f"size={_tup_text(self.size)}, stride={_tup_text(self.stride)})")

    @property
    def is_tensor(self) -> bool:
        """A tensor with a known number of dims."""
        return isinstance(self.size, tuple)

    def dynamic_dims(self) -> tuple[int, ...]:
        """Dims whose size torch found dynamic (tensors with a known rank only)."""
        if not isinstance(self.size, tuple):
            return ()
        return tuple(i for i, s in enumerate(self.size) if s is DYNAMIC)

    @property
    def is_dynamic(self) -> bool:
        """What torch's ``_collect_dynamic_sources`` counts as dynamic."""
        if isinstance(self.size, tuple):
            return DYNAMIC in self.size
        return self.scalar is DYNAMIC

    def merge(self, other: Entry) -> None:
        """Join ``other`` into this entry with torch's semilattice (dynamic in any → dynamic)."""
        self.scalar = _merge_atom(self.scalar, other.scalar)
        self.size = _merge_tup(self.size, other.size)
        self.stride = _merge_tup(self.stride, other.stride)
        for dim, values in other.small_sizes.items():
            self.small_sizes.setdefault(dim, set()).update(values)
        if other.int_seen is not None:
            self.int_seen = bool(self.int_seen) or other.int_seen
        if other.settled is not None:
            self.settled = bool(self.settled) or other.settled


def _atom_text(a: Atom) -> str:
    if a is DYNAMIC:
        return "?"
    if a is UNSET:
        return "auto unset"
    if isinstance(a, InferStride):
        return f"S({a.dim})"
    return str(a)


def _tup_text(t: Tup) -> str:
    if isinstance(t, tuple):
        return "[" + ", ".join(_atom_text(a) for a in t) + "]"
    return _atom_text(t)


def _merge_atom(x: Atom, y: Atom) -> Atom:
    if x is UNSET:
        return y
    if y is UNSET:
        return x
    if x is DYNAMIC or y is DYNAMIC or x != y:
        return DYNAMIC
    return x


def _merge_tup(xs: Tup, ys: Tup) -> Tup:
    if xs is UNSET:
        return ys
    if ys is UNSET:
        return xs
    if xs is DYNAMIC or ys is DYNAMIC or not isinstance(xs, tuple) or not isinstance(ys, tuple):
        return DYNAMIC
    if len(xs) != len(ys):
        return DYNAMIC
    return tuple(_merge_atom(x, y) for x, y in zip(xs, ys, strict=True))


@dataclass(frozen=True)
class FrameKey:
    """A compiled frame. Merged like torch's ``CodeId`` equality, minus the closure hash."""

    filename: str
    line: int
    name: str
    file_hash: str = ""

    @property
    def ident(self) -> tuple[str, int, str]:
        """Identity across files: torch compares file hash, not path (jobs move code)."""
        return (self.file_hash or self.filename, self.line, self.name)


@dataclass
class PgoState:
    """Merged state: frames in first-seen order, each an ordered ``source → Entry`` map."""

    frames: dict[tuple[str, int, str], tuple[FrameKey, dict[str, Entry]]] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)

    def add(self, key: FrameKey, source: str, entry: Entry) -> None:
        """Merge one recorded input into the state."""
        _, entries = self.frames.setdefault(key.ident, (key, {}))
        if source in entries:
            entries[source].merge(entry)
        else:
            entries[source] = entry



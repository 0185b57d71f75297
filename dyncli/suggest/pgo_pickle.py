"""Read torch's PGO state (automatic-dynamic "code state") without importing torch.

With ``TORCH_COMPILE_JOB_ID=<job>`` torch pickles its automatic-dynamic state to
``<inductor cache dir>/dynamo/code_state_<job>_<rank>_<tag>.pkl`` (``torch/_dynamo/pgo.py``:
``code_state_path`` turns the ``<job>:<rank>:<tag>`` cache key into a file name by replacing
``:`` with ``_``; rank is ``None`` without torch.distributed, tag is usually empty). The file
is plain ``pickle.dumps`` output with no header: a ``collections.defaultdict`` mapping
``torch._dynamo.pgo.CodeId`` to ``CodeState``, whose ``automatic_dynamic`` maps a source name
(``L['x']``) to a ``FrameStateSizeEntry`` of ``scalar`` / ``size`` / ``stride`` made of ints,
the ``AutoDynamic`` / ``AutoUnset`` enum tokens and ``InferStride``.

A pickle is a program. Before any unpickler sees the file, :mod:`dyncli.suggest.pgo_scan`
checks its opcode stream: only those globals, only the opcodes torch's state uses, memo, stack
and memory bounded, dict keys that are names. Then :class:`_CUnpickler` resolves only those
names, each to a plain dyncli stand-in; any other global (``os.system``, ``builtins.eval`` …)
is refused before it can run. The stand-ins accept unknown or missing fields so that state from other torch
versions still reads.

A pickle that runs no code can still be hostile *data*: shared references make a 558-byte
file stand for a nested list of millions of elements, floats can be infinite, ints thousands of
digits long. So the file size is bounded before it is read, every value is checked for type
and size before it is converted (never walked or ``repr``'d whole), error messages show a
bounded prefix of a value, and a bad file is skipped with its reason while the others are used.
"""

from __future__ import annotations

import io
import math
import pickle
import struct
from collections.abc import Callable
from typing import Any

from dyncli.logparse.safe import clip, short
from dyncli.suggest.pgo_scan import ScanError, check
from dyncli.suggest.pgo_state import (
    DYNAMIC,
    UNSET,
    Atom,
    Auto,
    Entry,
    FrameKey,
    InferStride,
    Tup,
)

# Bounds on what one PGO file may hold; real states are far below them (a 10,000-frame state
# is ~2 MB). Past them the file is skipped with a message saying which bound it broke.
MAX_PGO_BYTES = 32 << 20
MAX_DIMS = 256  # dims of one tensor (torch itself stops far below this)
MAX_ENTRIES = 1_000_000  # recorded inputs in one file
MAX_NAME = 4096  # characters of a file name, function name or source name
MAX_ATOM = 1 << 62  # a size, stride or scalar value
# (and at most pgo_walk.MAX_OBJECTS stand-in objects: counted by the opcode scan)


# ---------------------------------------------------------------- restricted unpickling


class _Stub:
    """Base of the stand-ins: takes pickle's BUILD state as a plain dict of fields.

    How many a file makes is bounded before it is unpickled: the opcode scan counts them
    against ``MAX_OBJECTS`` (:mod:`dyncli.suggest.pgo_walk`).
    """

    _fields: tuple[str, ...] = ()

    def __setstate__(self, state: Any) -> None:
        if type(state) is not dict:
            if isinstance(state, tuple) and len(state) == 2:  # (dict, slots) form
                state = {**(state[0] or {}), **(state[1] or {})}
            else:
                raise pickle.UnpicklingError(f"{type(self).__name__}: unexpected state {type(state).__name__}")
        # Adopt the state dict as the instance's (no copy: pickle's memo keeps it alive anyway,
        # and a copy per object was a third of the memory of a large state).
        self.__dict__ = state


class _CodeId(_Stub):
    filename: str = "?"
    firstlineno: int = 0
    name: str = "?"
    file_hash: str = ""


class _CodeState(_Stub):
    automatic_dynamic: Any = None


class _FrameStateSizeEntry(_Stub):
    scalar: Any = UNSET
    size: Any = UNSET
    stride: Any = UNSET
    excluded_sizes: Any = None
    excluded_scalar: Any = None


class _InferStride(_Stub):
    dim: int = 0


def _token(value: Auto) -> Callable[..., Auto]:
    def make(*_args: Any) -> Auto:
        return value
    return make


def _defaultdict(*_args: Any) -> dict[Any, Any]:
    # The default factory is never needed to read the state; a plain dict runs nothing.
    return {}


_PGO_MODULE = "torch._dynamo.pgo"
ALLOWED: dict[tuple[str, str], Any] = {
    ("collections", "defaultdict"): _defaultdict,
    (_PGO_MODULE, "CodeId"): _CodeId,
    (_PGO_MODULE, "CodeState"): _CodeState,
    (_PGO_MODULE, "FrameStateSizeEntry"): _FrameStateSizeEntry,
    (_PGO_MODULE, "InferStride"): _InferStride,
    (_PGO_MODULE, "AutoDynamic"): _token(DYNAMIC),
    (_PGO_MODULE, "AutoUnset"): _token(UNSET),
}


class _CUnpickler(pickle.Unpickler):
    """The C unpickler, restricted to the allowed globals and without persistent ids.

    It runs only on a stream :func:`dyncli.suggest.pgo_scan.check` has passed: one whose
    memory is bounded and whose dict keys are names, so that it ends in linear time.
    """

    def find_class(self, module: str, name: str) -> Any:
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refused to load {module}.{name}: not a class torch's PGO state uses") from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused a persistent id: not used by torch's PGO state")


_CLASSES = (_CodeId, _CodeState, _FrameStateSizeEntry, _InferStride)


def _unpickle(data: bytes) -> Any:
    """Check ``data``'s opcode stream (bounded, PGO-shaped), then unpickle it in this process.

    The check (:mod:`dyncli.suggest.pgo_scan`) replaces the forked probe child of round 2,
    which cost a fork and up to 5 s per file and bounded neither memo nor stack memory.
    """
    check(data, ALLOWED, _CLASSES, (_defaultdict,))
    return _CUnpickler(io.BytesIO(data)).load()


def _convert_atom(a: Any) -> Atom:
    if a is DYNAMIC or a is UNSET:  # most scalars
        return a
    kind = type(a)
    if kind is int:
        if -MAX_ATOM <= a <= MAX_ATOM:
            return a
        raise ValueError(f"value out of range ({short(a, 40)})")
    if kind is float:
        if math.isfinite(a) and abs(a) <= MAX_ATOM:
            return a
        raise ValueError(f"value out of range ({short(a, 40)})")
    if kind is InferStride:
        return a
    if kind is _InferStride:
        dim = a.__dict__.get("dim", 0)
        if type(dim) is not int or not 0 <= dim <= MAX_DIMS:
            raise ValueError(f"unexpected InferStride dim {short(dim, 40)}")
        return InferStride(dim)
    raise ValueError(f"unexpected value {short(a)}")


def _convert_tup(t: Any) -> Tup:
    if t is DYNAMIC or t is UNSET:
        return t
    if type(t) is tuple or isinstance(t, (tuple, list)):
        if len(t) > MAX_DIMS:
            raise ValueError(f"a size or stride of {len(t)} dims (at most {MAX_DIMS} are read)")
        # Fast path: sizes are mostly plain ints and tokens, already in their final form.
        for a in t:
            if (type(a) is not int or not -MAX_ATOM <= a <= MAX_ATOM) and a is not DYNAMIC:
                return tuple(_convert_atom(b) for b in t)
        return tuple(t)
    raise ValueError(f"unexpected size/stride {short(t)}")


def _text(value: Any, what: str) -> str:
    if type(value) is not str:
        raise ValueError(f"{what} is a {type(value).__name__}, not a string")
    if len(value) > MAX_NAME:
        raise ValueError(f"{what} of {len(value)} characters (at most {MAX_NAME})")
    return value


def _line(value: Any) -> int:
    if type(value) is not int or not 0 <= value <= MAX_ATOM:
        raise ValueError(f"line number {short(value, 40)} is not a line number")
    return value


def entry_from_parts(scalar: Any, size: Any, stride: Any, excluded_sizes: Any = None) -> Entry:
    """An :class:`Entry` from raw fields, noting 0/1 sizes (see ``Entry.small_sizes``)."""
    entry = Entry(_convert_atom(scalar), _convert_tup(size), _convert_tup(stride))
    for sizes in (entry.size, excluded_sizes):
        # (``0 in sizes`` first: a quick no for most sizes; it also matches 0.0 and False,
        # which the exact test then leaves out)
        if isinstance(sizes, (tuple, list)) and len(sizes) <= MAX_DIMS \
                and (0 in sizes or 1 in sizes) \
                and any(type(s) is int and s in (0, 1) for s in sizes):
            for dim, s in enumerate(sizes):
                if type(s) is int and s in (0, 1):
                    entry.small_sizes.setdefault(dim, set()).add(s)
    return entry


def loads_state(data: bytes) -> list[tuple[FrameKey, dict[str, Entry]]]:
    """Decode one PGO pickle into frames; raises ``ValueError``/``UnpicklingError`` if foreign
    or damaged (and only those: property-tested on arbitrary bytes)."""
    if not data:
        raise ValueError("empty file")
    if data[:1] != b"\x80":
        raise ValueError("not a pickle (torch writes protocol 2+ pickles, starting with byte 0x80)")
    try:
        root = _unpickle(data)
    except (EOFError, struct.error):  # the pure-Python unpickler's short reads
        raise ValueError("truncated pickle") from None
    except (pickle.UnpicklingError, ScanError) as e:
        if "truncated" in str(e):
            raise ValueError("truncated pickle") from None
        raise pickle.UnpicklingError(clip(str(e))) from None
    except MemoryError:
        raise
    except Exception as e:  # a damaged opcode stream: one documented error
        raise ValueError(f"not PGO state: damaged pickle ({type(e).__name__})") from None
    try:
        return _frames(root)
    except (TypeError, AttributeError, KeyError, IndexError, OverflowError, RecursionError) as e:
        raise ValueError(f"not PGO state ({type(e).__name__})") from None


def _frames(root: Any) -> list[tuple[FrameKey, dict[str, Entry]]]:
    if not isinstance(root, dict):
        raise ValueError(f"not PGO state: the pickle holds a {type(root).__name__}, not a dict of frames")
    frames = []
    count = 0
    for code_id, code_state in root.items():
        if not isinstance(code_id, _CodeId) or not isinstance(code_state, _CodeState):
            raise ValueError("not PGO state: expected CodeId → CodeState entries")
        key = FrameKey(_text(code_id.filename, "file name"), _line(code_id.firstlineno),
                       _text(code_id.name, "function name"),
                       _text(code_id.file_hash or "", "file hash"))
        entries: dict[str, Entry] = {}
        recorded = code_state.automatic_dynamic or {}
        if not isinstance(recorded, dict):
            raise ValueError(f"not PGO state: automatic_dynamic is a {type(recorded).__name__}")
        count += len(recorded)
        if count > MAX_ENTRIES:
            raise ValueError(f"more than {MAX_ENTRIES} recorded inputs")
        for source, fs in recorded.items():
            if not isinstance(source, str) or not isinstance(fs, _FrameStateSizeEntry):
                raise ValueError("not PGO state: expected source name → FrameStateSizeEntry")
            entry = entries[_text(source, "source name")] = entry_from_parts(
                fs.scalar, fs.size, fs.stride, fs.excluded_sizes)
            if entry.scalar is DYNAMIC and not entry.is_tensor:
                entry.int_seen = type(fs.excluded_scalar) is int
            elif entry.is_dynamic:
                entry.settled = fs.excluded_sizes is not None
        frames.append((key, entries))
    return frames

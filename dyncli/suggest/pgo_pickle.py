"""Read torch's PGO state (automatic-dynamic "code state") without importing torch.

With ``TORCH_COMPILE_JOB_ID=<job>`` torch pickles its automatic-dynamic state to
``<inductor cache dir>/dynamo/code_state_<job>_<rank>_<tag>.pkl`` (``torch/_dynamo/pgo.py``:
``code_state_path`` turns the ``<job>:<rank>:<tag>`` cache key into a file name by replacing
``:`` with ``_``; rank is ``None`` without torch.distributed, tag is usually empty). The file
is plain ``pickle.dumps`` output with no header: a ``collections.defaultdict`` mapping
``torch._dynamo.pgo.CodeId`` to ``CodeState``, whose ``automatic_dynamic`` maps a source name
(``L['x']``) to a ``FrameStateSizeEntry`` of ``scalar`` / ``size`` / ``stride`` made of ints,
the ``AutoDynamic`` / ``AutoUnset`` enum tokens and ``InferStride``.

A pickle is a program. :class:`_PgoUnpickler` resolves only those names, each to a plain
dyncli stand-in; any other global (``os.system``, ``builtins.eval`` …) is refused before it
can run. The stand-ins accept unknown or missing fields so that state from other torch
versions still reads.

A pickle that runs no code can still be hostile *data*: shared references make a 558-byte
file stand for a nested list of millions of elements, floats can be infinite, ints thousands of
digits long. So the file size is bounded before it is read, every value is checked for type
and size before it is converted (never walked or ``repr``'d whole), error messages show a
bounded prefix of a value, and a bad file is skipped with its reason while the others are used.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import pickle
import select
import signal
import struct
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from dyncli.logparse.safe import clip, short
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
# Objects (CodeId, CodeState, FrameStateSizeEntry, InferStride) one file may create: each
# costs ~0.9 KB while unpickling (with its state dict, kept in pickle's memo), so this bounds
# the memory of one file near 90 MB. A 10,000-frame state of three inputs is ~70,000 objects.
MAX_OBJECTS = 100_000
_budget = threading.local()


# ---------------------------------------------------------------- restricted unpickling


class _Stub:
    """Base of the stand-ins: takes pickle's BUILD state as a plain dict of fields.

    Each one created counts against ``MAX_OBJECTS``: past it, unpickling stops there.
    """

    _fields: tuple[str, ...] = ()

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Any:
        left = getattr(_budget, "left", MAX_OBJECTS) - 1
        if left < 0:
            raise pickle.UnpicklingError(f"more than {MAX_OBJECTS:,} objects: larger than any "
                                         "PGO state dyncli reads")
        _budget.left = left
        return super().__new__(cls)

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


def _hashable_key(key: Any) -> None:
    # Hashing a tuple hashes its items, recursively and without a cache: 30 levels of shared
    # pairs (a 257-byte pickle) cost 2**30 steps inside one C call that nothing interrupts.
    # torch's PGO state keys its dicts by CodeId and by source and field names only.
    if not (type(key) is str or isinstance(key, _Stub)):
        raise pickle.UnpicklingError(f"a dict key of type {type(key).__name__}: "
                                     "torch's PGO state keys dicts by names only")


def _refuse(what: str) -> Callable[[Any], None]:
    def load(_self: Any) -> None:
        raise pickle.UnpicklingError(f"refused {what}: not used by torch's PGO state")
    return load


# The pure-Python unpickler (typeshed declares it as the C one, whose internals differ).
_PyUnpickler: Any = pickle._Unpickler


class _Restricted:
    """What both unpicklers refuse: any global but the allowed ones, and persistent ids."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refused to load {module}.{name}: not a class torch's PGO state uses") from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused a persistent id: not used by torch's PGO state")


class _CUnpickler(_Restricted, pickle.Unpickler):
    """The C unpickler, restricted to the allowed globals (fast; used once probed, below)."""


class _PgoUnpickler(_Restricted, _PyUnpickler):
    """The pure-Python unpickler, restricted: allowed globals only (``find_class``), no
    persistent ids, no sets, and dict keys checked *before* they are hashed.

    Used where ``fork`` is not (Windows): the C unpickler hashes keys where nothing can
    look at them first, and ~3x faster is not worth an unbounded hang there.
    """

    dispatch: ClassVar[dict[int, Any]] = dict(_PyUnpickler.dispatch)

    def load_setitem(self) -> None:
        _hashable_key(self.stack[-2])
        super().load_setitem()

    def load_setitems(self) -> None:
        items = self.stack  # (the pure-Python unpickler keeps the items since MARK here)
        for i in range(0, len(items), 2):
            _hashable_key(items[i])
        super().load_setitems()

    def load_dict(self) -> None:
        items = self.stack
        for i in range(0, len(items), 2):
            _hashable_key(items[i])
        super().load_dict()

    def load_build(self) -> None:
        # BUILD sets attributes: only on the stand-ins, never on shared objects (the Auto
        # tokens, a dict) whose change would outlive this file.
        if not isinstance(self.stack[-2], _Stub):
            raise pickle.UnpicklingError("refused BUILD on a "
                                         f"{type(self.stack[-2]).__name__}: not PGO state")
        super().load_build()

    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.SETITEMS[0]] = load_setitems
    dispatch[pickle.DICT[0]] = load_dict
    dispatch[pickle.BUILD[0]] = load_build
    for _op, _what in ((pickle.EMPTY_SET, "a set"), (pickle.ADDITEMS, "a set"),
                       (pickle.FROZENSET, "a frozenset"), (pickle.EXT1, "an extension code"),
                       (pickle.EXT2, "an extension code"), (pickle.EXT4, "an extension code"),
                       (pickle.INST, "an INST opcode"), (pickle.OBJ, "an OBJ opcode")):
        dispatch[_op[0]] = _refuse(_what)


# How long the C unpickler may take on one file in the probe child (a 10,000-frame state
# takes ~0.2 s; a hostile one can take hours inside one C call).
PROBE_SECONDS = 5.0


def _unpickle(data: bytes) -> Any:
    """Unpickle ``data`` with the restricted C unpickler once a forked child has shown that
    it ends within ``PROBE_SECONDS``; without ``fork``, with the restricted pure-Python one.

    The C unpickler offers no hook before it hashes a dict key or a set element, and
    hashing a key of 40 levels of shared pairs (a 257-byte pickle) costs 2**40 steps in one
    C call that no signal interrupts. A child process can be killed: it loads the data
    first, and only a load that finished (or failed) in time is repeated here.
    """
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        _budget.left = MAX_OBJECTS
        return _PgoUnpickler(io.BytesIO(data)).load()
    if not _probe(data):
        raise pickle.UnpicklingError(f"unpickling took more than {PROBE_SECONDS:g} s "
                                     "(a pickle built to be slow): not PGO state")
    _budget.left = MAX_OBJECTS
    return _CUnpickler(io.BytesIO(data)).load()


def _probe(data: bytes) -> bool:
    """Whether the C unpickler ends (by success or error) on ``data`` in a forked child."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: load, say done, never return
        try:
            os.close(read_end)
            _budget.left = MAX_OBJECTS
            with contextlib.suppress(Exception):
                _CUnpickler(io.BytesIO(data)).load()
            os.write(write_end, b"1")
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], PROBE_SECONDS)
        done = bool(ready) and os.read(read_end, 1) == b"1"
    finally:
        os.close(read_end)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # gone already when done; killed when not
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    return done


def _convert_atom(a: Any) -> Atom:
    kind = type(a)
    if kind is int:
        if -MAX_ATOM <= a <= MAX_ATOM:
            return a
        raise ValueError(f"value out of range ({short(a, 40)})")
    if kind is float:
        if math.isfinite(a) and abs(a) <= MAX_ATOM:
            return a
        raise ValueError(f"value out of range ({short(a, 40)})")
    if a is DYNAMIC or a is UNSET or kind is InferStride:
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
        if isinstance(sizes, (tuple, list)) and len(sizes) <= MAX_DIMS \
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
    except pickle.UnpicklingError as e:
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
            entries[_text(source, "source name")] = entry_from_parts(
                fs.scalar, fs.size, fs.stride, fs.excluded_sizes)
        frames.append((key, entries))
    return frames

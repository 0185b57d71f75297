"""Write PGO pickles shaped like torch's without torch (for unit tests and benchmarks).

``torch._dynamo.pgo``'s classes are mimicked by classes whose ``__module__`` is that name, put
in ``sys.modules`` only while pickling, so the bytes name exactly the globals torch writes.
Extra fields can be added to check that dyncli tolerates other torch versions.
"""

from __future__ import annotations

import enum
import pickle
import sys
import types
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

MODULE = "torch._dynamo.pgo"


class AutoDynamic(enum.Enum):
    token = 0


class AutoUnset(enum.Enum):
    token = 0


class InferStride:
    def __init__(self, dim: int) -> None:
        self.dim = dim


class CodeId:
    def __init__(self, filename: str, firstlineno: int, name: str, file_hash: str = "abcd1234",
                 **extra: Any) -> None:
        self.filename, self.firstlineno, self.name = filename, firstlineno, name
        self.file_hash, self.closure_hash = file_hash, None
        self.__dict__.update(extra)


class CodeState:
    def __init__(self) -> None:
        self.automatic_dynamic: dict[str, FrameStateSizeEntry] = defaultdict(FrameStateSizeEntry)


class FrameStateSizeEntry:
    def __init__(self, scalar: Any = AutoUnset.token, size: Any = AutoUnset.token,
                 stride: Any = AutoUnset.token, excluded_sizes: Any = None, **extra: Any) -> None:
        self.scalar, self.size, self.stride = scalar, size, stride
        self.excluded_sizes, self.excluded_scalar = excluded_sizes, None
        self.__dict__.update(extra)


for _cls in (AutoDynamic, AutoUnset, InferStride, CodeId, CodeState, FrameStateSizeEntry):
    _cls.__module__ = MODULE
    _cls.__qualname__ = _cls.__name__

DYN = AutoDynamic.token


@contextmanager
def _fake_module() -> Iterator[None]:
    module = types.ModuleType(MODULE)
    for cls in (AutoDynamic, AutoUnset, InferStride, CodeId, CodeState, FrameStateSizeEntry):
        setattr(module, cls.__name__, cls)
    # pickle's save_global runs __import__(MODULE): without stand-in parents it would import
    # the real torch package (slow, and the unit tests must stay torch-free).
    names = ("torch", "torch._dynamo", MODULE)
    saved = {name: sys.modules.get(name) for name in names}
    for name in names[:-1]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules[MODULE] = module
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old


def tensor(*sizes: Any, excluded: Any = None) -> FrameStateSizeEntry:
    """A tensor entry; use ``DYN`` for a dynamic dim. Contiguous strides as InferStride."""
    stride = tuple([InferStride(i + 1) for i in range(len(sizes) - 1)] + [1]) if sizes else ()
    return FrameStateSizeEntry(scalar=DYN, size=tuple(sizes), stride=stride, excluded_sizes=excluded)


def scalar(value: Any, left: Any = None) -> FrameStateSizeEntry:
    """A scalar entry: an int (static) or ``DYN``. ``left``: torch's ``excluded_scalar``, the
    int a scalar left when it turned dynamic (None for a float, or once its frame compiled
    again with it dynamic)."""
    return FrameStateSizeEntry(scalar=value, size=DYN, stride=DYN, excluded_scalar=left)


def dumps(frames: dict[tuple[str, int, str], dict[str, FrameStateSizeEntry]], **code_id_extra: Any) -> bytes:
    """Pickle ``{(file, line, function): {source: entry}}`` as torch would."""
    state: defaultdict[CodeId, CodeState] = defaultdict(CodeState)
    for (file, line, name), entries in frames.items():
        cs = CodeState()
        cs.automatic_dynamic.update(entries)
        state[CodeId(file, line, name, **code_id_extra)] = cs
    with _fake_module():
        return pickle.dumps(state)

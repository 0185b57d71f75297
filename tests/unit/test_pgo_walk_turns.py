"""The PGO pre-scan takes the opcodes every state repeats several in one turn of its loop
(``dyncli.suggest.pgo_walk``): each of them is still counted and checked as if walked alone."""

from __future__ import annotations

import pickle
import pickletools
import re

import pytest
import suggest_fake_pgo as fake

from dyncli.suggest import pgo_scan, pgo_walk
from dyncli.suggest.pgo_pickle import _CLASSES, ALLOWED, _defaultdict, _Stub, _unpickle, loads_state
from dyncli.suggest.pgo_walk import (
    _DICT_BYTES,
    _MEMO_BYTES,
    _SLOT_BYTES,
    _STR_BYTES,
    _TUPLE_BYTES,
    ScanError,
    walk,
    walked,
)


def _walk(data: bytes, limit: int = 4_000_000) -> int:
    return walk(data, ALLOWED, _CLASSES, (_defaultdict,), limit, 16_000_000)


def _state(frames: int) -> bytes:
    return fake.dumps({(f"/m{i}.py", i + 1, f"f{i}"): {
        f"L['x{i}']": fake.tensor(fake.DYN, 3, 1),
        f"L['n{i}']": fake.scalar(fake.DYN),
        f"L['s{i}']": fake.tensor(4, 0)} for i in range(frames)})


@pytest.mark.parametrize("frames", [1, 3, 300])
def test_every_opcode_is_counted(frames: int) -> None:
    data = _state(frames)
    _walk(data)
    assert walked[0] == sum(1 for _ in pickletools.genops(data))


def test_a_memoized_tuple_costs_what_its_opcodes_do() -> None:
    # PROTO 4, NONE, TUPLE1, MEMOIZE, STOP
    assert _walk(b"\x80\x04N\x85\x94.") == _TUPLE_BYTES + _SLOT_BYTES + _MEMO_BYTES
    # a short string and its MEMOIZE, then a dict and its MEMOIZE (then POP the dict)
    assert _walk(b"\x80\x04\x8c\x01a\x94}\x940.") == \
        _STR_BYTES + 1 + _MEMO_BYTES + _DICT_BYTES + _MEMO_BYTES


@pytest.mark.parametrize(("data", "reason"), [
    # the object header after a memo slot that is not a class
    (b"\x80\x04N\x94h\x00)\x81\x94}\x94.", "not a PGO class"),
    # SETITEMS then BUILD with no object under the dict
    (b"\x80\x04}(\x8c\x01aNub.", "operands are not on the stack"),
    (b"\x80\x04N}(\x8c\x01aNub.", "BUILD of something that is not a PGO object"),
    # SETITEM then BUILD, the same two
    (b"\x80\x04}\x8c\x01aNsb.", "operands are not on the stack"),
    (b"\x80\x04N}\x8c\x01aNsb.", "BUILD of something that is not a PGO object"),
    # a key that is not a name, in SETITEMS and in SETITEM
    (b"\x80\x04}(K\x01Nu.", "a dict key that is an int"),
    (b"\x80\x04}K\x01Ns.", "a dict key that is an int"),
    # the stream ends right after an opcode whose MEMOIZE would be looked for
    (b"\x80\x04}", "truncated pickle (no STOP)"),
    (b"\x80\x04\x8c\x01a", "truncated pickle (no STOP)"),
    (b"\x80\x04N\x85", "truncated pickle (no STOP)"),
    (b"\x80\x04h", "memo slot read before it was set"),
    (b"\x80\x04N\x94h\x01.", "memo slot read before it was set"),
    # MEMOIZE with nothing above the MARK
    (b"\x80\x04N(\x94.", "MEMOIZE with nothing on the stack"),
])
def test_each_opcode_taken_with_another_keeps_its_check(data: bytes, reason: str) -> None:
    with pytest.raises(ScanError, match=re.escape(reason)):
        _walk(data)
    assert walked[0] <= len(data)  # counted up to where it stopped


def test_the_walk_of_a_real_state_spends_its_budget_exactly() -> None:
    data = _state(3)
    n = sum(1 for _ in pickletools.genops(data))
    _walk(data, limit=n)  # exactly enough
    with pytest.raises(ScanError, match="budget"):
        _walk(data, limit=n - 1)


def _stand_ins(obj: object, seen: set[int]) -> int:
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, dict):
        return sum(_stand_ins(k, seen) + _stand_ins(v, seen) for k, v in obj.items())
    if isinstance(obj, (tuple, list)):
        return sum(_stand_ins(v, seen) for v in obj)
    if isinstance(obj, _Stub):
        return 1 + _stand_ins(obj.__dict__, seen)
    return 0


def test_the_objects_a_state_makes_are_bounded_before_it_is_unpickled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = _state(5)
    made = _stand_ins(_unpickle(data), set())
    assert made > 20  # CodeId, CodeState, an entry per input, InferStride per tensor stride
    monkeypatch.setattr(pgo_walk, "MAX_OBJECTS", made)
    _walk(data)  # exactly the bound: read
    monkeypatch.setattr(pgo_walk, "MAX_OBJECTS", made - 1)
    with pytest.raises(ScanError, match=f"more than {made - 1:,} objects"):
        _walk(data)
    monkeypatch.setattr(pgo_scan, "_passed", {})  # read above: forget that it passed
    with pytest.raises(pickle.UnpicklingError, match="objects: larger than any PGO state"):
        loads_state(data)

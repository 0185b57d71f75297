"""The walk of :mod:`dyncli.suggest.pgo_scan`: one pass over a pickle's opcodes, with tags.

The stack is simulated with one small int per item (``STR`` … ``TOKEN``; a string that names
an allowed module or class has its own tag ``NAME + i``, and an unknown short string is
``-(its offset)``, so that ``STACK_GLOBAL`` can be resolved and a refused name quoted); the memo
is one byte a slot. Nothing of the file is created. See ``pgo_scan`` for what is refused.
"""

from __future__ import annotations

import functools
from typing import Any

# Bounds; a real 10,000-frame state (2 MB) uses ~1.4 M opcodes, stack depth < 2,100 (pickle
# batches SETITEMS by 1,000 pairs) and MARK nesting < 10.
MAX_OPS = 4_000_000
MAX_STACK = 10_000
MAX_MARKS = 64
MAX_HEAP = 96 << 20
MAX_LONG_BYTES = 16  # an int of 128 bits: sizes, hashes and line numbers are far smaller
# Objects (CodeId, CodeState, FrameStateSizeEntry, InferStride) one file may create: each
# costs ~0.9 KB while unpickling (with its state dict, kept in pickle's memo), so this bounds
# the memory of one file near 90 MB. A 10,000-frame state of three inputs is ~70,000 objects.
MAX_OBJECTS = 100_000

# Tags of the simulated stack; NAME + i is the string ``names[i]`` of the allowed globals.
STR, INT, FLOAT, CONST, BYTES, TUPLE, LIST, DICT, OBJ, TOKEN = range(10)
KLASS, DICT_FACTORY, TOKEN_FACTORY = 20, 21, 22
NAME = 100
_KEY_TAGS = (STR, OBJ)
_SHORT_STR = 64  # no allowed module or class name is longer

# Worst-case bytes of the C unpickler's objects (CPython 3.11-3.14, 64-bit, with GC headers).
_STR_BYTES = 80  # + the length: a str object holds at most one byte per UTF-8 byte
_INT_BYTES = 36
_FLOAT_BYTES = 24
_TUPLE_BYTES, _SLOT_BYTES = 64, 8
_LIST_BYTES, _ITEM_BYTES = 72, 10  # list growth over-allocates by an eighth
_DICT_BYTES, _DICT_ITEM_BYTES = 64, 72  # right after a resize, a dict holds ~3x its items
_OBJ_BYTES = 96
_MEMO_BYTES = 16  # the memo array doubles as it grows


class ScanError(ValueError):
    """The opcode stream is not a PGO state (a ``ValueError``: callers skip the file)."""


def _kind(tag: int) -> int:
    return STR if tag >= NAME or tag < 0 else tag


def _slot(tag: int) -> int:
    return STR if tag < 0 else tag


def _u(data: bytes, pos: int, n: int, end: int) -> int:
    if pos + n > end:
        raise ScanError("truncated pickle")
    return int.from_bytes(data[pos:pos + n], "little")


walked = [0]  # opcodes the last walk took (read back by _check even when it raised)

_HEADER = b")\x81\x94}\x94"  # after a class: EMPTY_TUPLE NEWOBJ MEMOIZE EMPTY_DICT MEMOIZE
_CHECK_EVERY = 1024  # opcodes between two checks of the bounds (each adds at most ~100 bytes)


def _build(stack: list[int], base: int) -> None:
    """BUILD right after SETITEM(S): the dict on top becomes the state of the object below it."""
    if len(stack) - base < 2:
        raise ScanError("an opcode whose operands are not on the stack")
    stack.pop()
    if stack[-1] != OBJ:
        raise ScanError("BUILD of something that is not a PGO object")


def walk(data: bytes, allowed: dict[tuple[str, str], Any], classes: tuple[Any, ...],
         dict_factories: tuple[Any, ...], limit: int, total: int) -> int:
    """Walk ``data``; raise :class:`ScanError` at the first thing no PGO state holds, or past
    ``limit`` opcodes (``total``: the scan's whole budget, for the message). Returns the
    estimated heap bytes; ``walked[0]`` holds the opcodes walked (also after an error).

    A turn of the loop is what the walk costs, so opcodes that follow one another in every
    PGO state are taken in one turn, each with its own checks and counted as one opcode: the
    ``MEMOIZE`` after an opcode that pushed (pickle memoizes every string, object, dict and
    tuple), the 6 opcodes that start each object (``BINGET`` of its class, ``EMPTY_TUPLE``,
    ``NEWOBJ``, ``MEMOIZE``, ``EMPTY_DICT``, ``MEMOIZE``) and the ``BUILD`` after the
    ``SETITEM(S)`` that fill its state. A 10,000-frame state of 1.42 M opcodes takes 0.83 M
    turns. The bounds are checked at the first turn past every 1,024 opcodes.
    """
    walked[0] = 0
    names, name_tags = _names(tuple(allowed))
    stack: list[int] = []
    push = stack.append
    marks: list[int] = []
    base = 0  # len(stack) at the innermost MARK (0 without one): no opcode takes items below it
    memo = bytearray()
    memoize = memo.append
    heap = 0
    ops = 0
    objects = 0  # PGO objects the unpickler will make (NEWOBJ/REDUCE of an allowed class)
    check_at = _CHECK_EVERY
    pos = 0
    frame_end = 0
    end = len(data)
    try:
        while True:
            op = data[pos]  # past the end: IndexError, "no STOP" below
            pos += 1
            ops += 1
            if ops >= check_at:
                walked[0] = ops
                _bounds(ops, heap, len(stack), objects, limit, total)
                check_at = (ops | (_CHECK_EVERY - 1)) + 1
            if op == 0x68:  # BINGET
                try:
                    tag = memo[data[pos]]
                except IndexError:
                    raise ScanError("memo slot read before it was set (or a truncated pickle)") \
                        from None
                pos += 1
                if tag == KLASS and data.startswith(_HEADER, pos):  # a new object, its state dict
                    pos += 5
                    ops += 5
                    objects += 1
                    push(OBJ)
                    push(DICT)
                    memoize(OBJ)
                    memoize(DICT)
                    heap += _OBJ_BYTES + _DICT_BYTES + 2 * _MEMO_BYTES
                else:
                    push(tag)
            elif op == 0x4B:  # BININT1
                pos += 1
                push(INT)
            elif op == 0x62:  # BUILD
                if len(stack) - base < 2:
                    raise ScanError("an opcode whose operands are not on the stack")
                state = stack.pop()
                if (state != DICT and state != TUPLE and state != CONST) or stack[-1] != OBJ:
                    raise ScanError("BUILD of something that is not a PGO object")
            elif op == 0x4E or op == 0x88 or op == 0x89:  # NONE, NEWTRUE, NEWFALSE
                push(CONST)
            elif op == 0x28:  # MARK
                if len(marks) >= MAX_MARKS:
                    raise ScanError(f"MARKs nested more than {MAX_MARKS} deep: not PGO state")
                base = len(stack)
                marks.append(base)
            elif op == 0x75 or op == 0x64:  # SETITEMS, DICT
                if not marks:
                    raise ScanError("an opcode that needs a MARK without one")
                start = marks.pop()
                base = marks[-1] if marks else 0
                if (len(stack) - start) % 2:
                    raise ScanError("a dict of an odd number of items")
                for key in stack[start::2]:
                    if 0 < key < NAME and key != OBJ:  # neither a string (<=0, >=NAME) nor an object
                        raise ScanError(_key_message(key))
                heap += (len(stack) - start) // 2 * _DICT_ITEM_BYTES
                del stack[start:]
                if op == 0x75:
                    if len(stack) <= base or stack[-1] != DICT:
                        raise ScanError("SETITEMS on something that is not a dict")
                    if data[pos] == 0x62:  # BUILD: the dict is an object's state
                        pos += 1
                        ops += 1
                        _build(stack, base)
                else:
                    push(DICT)
                    heap += _DICT_BYTES
            elif op == 0x73:  # SETITEM
                if len(stack) - base < 3:
                    raise ScanError("an opcode whose operands are not on the stack")
                key = stack[-2]
                if 0 < key < NAME and key != OBJ:
                    raise ScanError(_key_message(key))
                del stack[-2:]
                if stack[-1] != DICT:
                    raise ScanError("SETITEM on something that is not a dict")
                heap += _DICT_ITEM_BYTES
                if data[pos] == 0x62:  # BUILD: the dict is an object's state
                    pos += 1
                    ops += 1
                    _build(stack, base)
            elif op == 0x8C or op == 0x58 or op == 0x8D:  # SHORT_BINUNICODE, BINUNICODE(8)
                if op == 0x8C and pos < end:
                    n, size = 1, data[pos]
                else:
                    n = 1 if op == 0x8C else 4 if op == 0x58 else 8
                    size = _u(data, pos, n, end)
                pos += n
                if pos + size > end:
                    raise ScanError("truncated pickle (a string longer than the file)")
                # an unknown short string is tagged -(its offset): named if refused as a global
                tag = name_tags.get(data[pos:pos + size], -pos if n == 1 else STR) \
                    if size <= _SHORT_STR else STR
                push(tag)
                pos += size
                heap += _STR_BYTES + size
                if data[pos] == 0x94:  # MEMOIZE
                    pos += 1
                    ops += 1
                    memoize(STR if tag < 0 else tag)
                    heap += _MEMO_BYTES
            elif op == 0x85 or op == 0x86 or op == 0x87:  # TUPLE1..3
                n = op - 0x84
                if len(stack) - base < n:
                    raise ScanError("TUPLE of items not on the stack")
                del stack[-n:]
                push(TUPLE)
                heap += _TUPLE_BYTES + n * _SLOT_BYTES
                if data[pos] == 0x94:  # MEMOIZE
                    pos += 1
                    ops += 1
                    memoize(TUPLE)
                    heap += _MEMO_BYTES
            elif op == 0x52 or op == 0x81:  # REDUCE, NEWOBJ
                if len(stack) - base < 2:
                    raise ScanError("an opcode whose operands are not on the stack")
                func = stack[-2]
                if stack.pop() != TUPLE:
                    raise ScanError("REDUCE/NEWOBJ with arguments that are not a tuple")
                if func == KLASS:
                    tag = OBJ
                    heap += _OBJ_BYTES
                    objects += 1
                elif func == DICT_FACTORY and op == 0x52:
                    tag = DICT
                    heap += _DICT_BYTES
                elif func == TOKEN_FACTORY and op == 0x52:
                    tag = TOKEN
                else:
                    raise ScanError("REDUCE/NEWOBJ of something that is not a PGO class")
                stack[-1] = tag
                if data[pos] == 0x94:  # MEMOIZE
                    pos += 1
                    ops += 1
                    memoize(tag)
                    heap += _MEMO_BYTES
            elif op == 0x4D:  # BININT2
                pos += 2
                push(INT)
                heap += _INT_BYTES
            elif op == 0x94:  # MEMOIZE
                if len(stack) <= base:
                    raise ScanError("MEMOIZE with nothing on the stack")
                tag = stack[-1]
                memoize(STR if tag < 0 else tag)
                heap += _MEMO_BYTES
            elif op == 0x29:  # EMPTY_TUPLE
                push(TUPLE)
            elif op == 0x7D:  # EMPTY_DICT
                push(DICT)
                heap += _DICT_BYTES
                if data[pos] == 0x94:  # MEMOIZE
                    pos += 1
                    ops += 1
                    memoize(DICT)
                    heap += _MEMO_BYTES
            else:
                # the rarer opcodes: one at a time, as read
                pos, heap, base, frame_end, done = _rare(
                    op, data, pos, end, stack, marks, base, memo, heap, frame_end, names,
                    allowed, classes, dict_factories)
                if done:
                    walked[0] = ops
                    _bounds(ops, heap, len(stack), objects, limit, total)
                    if len(stack) != 1 or marks:
                        raise ScanError("a pickle that ends with an unbalanced stack")
                    return heap
    except IndexError:
        walked[0] = ops
        raise ScanError("truncated pickle (no STOP)") from None
    except ScanError:
        walked[0] = ops
        raise


def _rare(op: int, data: bytes, pos: int, end: int, stack: list[int], marks: list[int],
          base: int, memo: bytearray, heap: int, frame_end: int, names: list[str],
          allowed: dict[tuple[str, str], Any], classes: tuple[Any, ...],
          dict_factories: tuple[Any, ...]) -> tuple[int, int, int, int, bool]:
    """One of the opcodes :func:`walk` does not take inline; returns the new ``pos``, ``heap``,
    ``base`` and ``frame_end``, and whether it was ``STOP``."""
    push = stack.append
    if op == 0x6A:  # LONG_BINGET
        idx = _u(data, pos, 4, end)
        pos += 4
        if idx >= len(memo):
            raise ScanError(f"memo slot {idx:,} read before it was set")
        push(memo[idx])
    elif op == 0x71 or op == 0x72:  # BINPUT, LONG_BINPUT
        n = 1 if op == 0x71 else 4
        idx = _u(data, pos, n, end)
        pos += n
        if len(stack) <= base:
            raise ScanError("PUT with nothing on the stack")
        if idx < len(memo):
            memo[idx] = _slot(stack[-1])
        elif idx == len(memo):
            memo.append(_slot(stack[-1]))
            heap += _MEMO_BYTES
        else:
            raise ScanError(f"memo slot {idx:,} set out of order (next is {len(memo):,}): "
                            "pickle numbers its memo in order")
    elif op == 0x4A:  # BININT
        pos += 4
        push(INT)
        heap += _INT_BYTES
    elif op == 0x8A or op == 0x8B:  # LONG1, LONG4
        n = 1 if op == 0x8A else 4
        size = _u(data, pos, n, end)
        pos += n
        if size > MAX_LONG_BYTES:
            raise ScanError(f"an int of {size:,} bytes: PGO state holds sizes and line numbers")
        pos += size
        push(INT)
        heap += _INT_BYTES
    elif op == 0x47:  # BINFLOAT
        pos += 8
        push(FLOAT)
        heap += _FLOAT_BYTES
    elif op == 0x74 or op == 0x6C:  # TUPLE, LIST (items since MARK)
        start = _pop_mark(marks)
        base = marks[-1] if marks else 0
        n = len(stack) - start
        del stack[start:]
        push(TUPLE if op == 0x74 else LIST)
        heap += (_TUPLE_BYTES + n * _SLOT_BYTES) if op == 0x74 else \
            (_LIST_BYTES + n * _ITEM_BYTES)
    elif op == 0x5D:  # EMPTY_LIST
        push(LIST)
        heap += _LIST_BYTES
    elif op == 0x61:  # APPEND
        _need(stack, marks, 2)
        stack.pop()
        _target(stack, marks, LIST, "APPEND")
        heap += _ITEM_BYTES
    elif op == 0x65:  # APPENDS
        start = _pop_mark(marks)
        base = marks[-1] if marks else 0
        n = len(stack) - start
        del stack[start:]
        _target(stack, marks, LIST, "APPENDS")
        heap += n * _ITEM_BYTES
    elif op == 0x93:  # STACK_GLOBAL
        _need(stack, marks, 2)
        module, name = stack[-2], stack[-1]
        del stack[-2:]
        push(_global(_name(data, module, names), _name(data, name, names),
                     allowed, classes, dict_factories))
    elif op == 0x63:  # GLOBAL "module\nname\n"
        nl1 = data.find(b"\n", pos, pos + 2 * _SHORT_STR)
        nl2 = data.find(b"\n", nl1 + 1, nl1 + 1 + 2 * _SHORT_STR) if nl1 >= 0 else -1
        if nl2 < 0:
            raise ScanError("GLOBAL of a name that is not a short string")
        text_module = data[pos:nl1].decode("utf-8", "replace")
        text_name = data[nl1 + 1:nl2].decode("utf-8", "replace")
        pos = nl2 + 1
        push(_global(text_module, text_name, allowed, classes, dict_factories))
    elif op == 0x30:  # POP
        if marks and len(stack) == marks[-1]:
            marks.pop()  # as the unpicklers do: POP right after MARK drops the mark
            base = marks[-1] if marks else 0
        elif stack:
            stack.pop()
        else:
            raise ScanError("POP of an empty stack")
    elif op == 0x31:  # POP_MARK
        del stack[_pop_mark(marks):]
        base = marks[-1] if marks else 0
    elif op == 0x43 or op == 0x42 or op == 0x8E:  # SHORT_BINBYTES, BINBYTES, BINBYTES8
        n = 1 if op == 0x43 else 4 if op == 0x42 else 8
        size = _u(data, pos, n, end)
        pos += n + size
        if pos > end:
            raise ScanError("truncated pickle (bytes longer than the file)")
        push(BYTES)
        heap += 40 + size
    elif op == 0x95:  # FRAME
        size = _u(data, pos, 8, end)
        pos += 8
        if pos + size > end:
            raise ScanError("truncated pickle (a FRAME longer than the file)")
        if pos < frame_end:
            raise ScanError("a FRAME inside another frame")
        frame_end = pos + size
    elif op == 0x80:  # PROTO
        if pos != 1 or _u(data, pos, 1, end) not in (2, 3, 4, 5):
            raise ScanError("not a protocol 2-5 pickle")
        pos += 1
    elif op == 0x2E:  # STOP
        return pos, heap, base, frame_end, True
    else:
        raise ScanError(f"opcode {bytes([op])!r} at byte {pos - 1:,}: "
                        "not used by torch's PGO state")
    return pos, heap, base, frame_end, False


@functools.lru_cache(maxsize=4)
def _names(allowed: tuple[tuple[str, str], ...]) -> tuple[list[str], dict[bytes, int]]:
    """The allowed module and class names, and the tag of each one's UTF-8 bytes."""
    names = sorted({part for pair in allowed for part in pair})
    return names, {name.encode(): NAME + i for i, name in enumerate(names)}


def _bounds(ops: int, heap: int, depth: int, objects: int, limit: int, total: int) -> None:
    if ops > limit:
        if limit < MAX_OPS:
            raise ScanError(f"not read past {ops:,} opcodes: this scan's budget of "
                            f"{total:,} opcodes over all files is spent (pick fewer "
                            "files, e.g. with --job-id)")
        raise ScanError(f"more than {MAX_OPS:,} opcodes: larger than any PGO state")
    if heap > MAX_HEAP:
        raise ScanError(f"would take more than {MAX_HEAP >> 20} MB to unpickle: "
                        "larger than any PGO state")
    if depth > MAX_STACK:
        raise ScanError(f"more than {MAX_STACK:,} items on the unpickler's stack: not PGO state")
    if objects > MAX_OBJECTS:
        raise ScanError(f"more than {MAX_OBJECTS:,} objects: larger than any PGO state "
                        "dyncli reads")


def _name(data: bytes, tag: int, names: list[str]) -> str:
    """The text of a string tag, for STACK_GLOBAL: an allowed name, or a short string's."""
    if tag >= NAME:
        return names[tag - NAME]
    if tag < 0:
        return data[-tag:-tag + data[-tag - 1]].decode("utf-8", "replace")
    return "?"


def _pop_mark(marks: list[int]) -> int:
    if not marks:
        raise ScanError("an opcode that needs a MARK without one")
    return marks.pop()


def _need(stack: list[Any], marks: list[int], n: int) -> None:
    if len(stack) - (marks[-1] if marks else 0) < n:
        raise ScanError("an opcode whose operands are not on the stack")


def _target(stack: list[Any], marks: list[int], tag: int, what: str) -> None:
    if not stack or (marks and len(stack) <= marks[-1]) or _kind(stack[-1]) != tag:
        raise ScanError(f"{what} on something that is not a {'dict' if tag == DICT else 'list'}")


def _key_message(key: Any) -> str:
    names = {INT: "an int", FLOAT: "a float", CONST: "a constant", BYTES: "bytes",
             TUPLE: "a tuple", LIST: "a list", DICT: "a dict", TOKEN: "a token"}
    return (f"a dict key that is {names.get(_kind(key), 'not a name')}: "
            "torch's PGO state keys dicts by names only")


def _global(module: str, name: str, allowed: dict[tuple[str, str], Any],
            classes: tuple[Any, ...], dict_factories: tuple[Any, ...]) -> int:
    target = allowed.get((module, name))
    if target is None:
        from dyncli.logparse.safe import clip

        raise ScanError(clip(f"refused to load {module}.{name}: not a class torch's PGO state uses"))
    if target in classes:
        return KLASS
    return DICT_FACTORY if target in dict_factories else TOKEN_FACTORY



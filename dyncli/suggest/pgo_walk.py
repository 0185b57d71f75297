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


def walk(data: bytes, allowed: dict[tuple[str, str], Any], classes: tuple[Any, ...],
          dict_factories: tuple[Any, ...], limit: int, total: int) -> int:
    """Walk ``data``; raise :class:`ScanError` at the first thing no PGO state holds, or past
    ``limit`` opcodes (``total``: the scan's whole budget, for the message). Returns the
    estimated heap bytes; ``walked[0]`` holds the opcodes walked (also after an error)."""
    walked[0] = 0
    end = len(data)
    names, name_tags = _names(tuple(allowed))
    stack: list[int] = []
    marks: list[int] = []
    memo = bytearray()
    heap = 0
    ops = 0
    pos = 0
    frame_end = 0
    while True:
        if pos >= end:
            walked[0] = ops
            raise ScanError("truncated pickle (no STOP)")
        op = data[pos]
        pos += 1
        ops += 1
        if not ops & 1023:  # the bounds, every 1,024 opcodes (each adds at most ~100 bytes)
            walked[0] = ops
            _bounds(ops, heap, len(stack), limit, total)
        if op == 0x68:  # BINGET
            if pos >= end or data[pos] >= len(memo):
                raise ScanError("memo slot read before it was set (or a truncated pickle)")
            stack.append(memo[data[pos]])
            pos += 1
        elif op == 0x94:  # MEMOIZE
            if len(stack) <= (marks[-1] if marks else 0):
                raise ScanError("MEMOIZE with nothing on the stack")
            memo.append(_slot(stack[-1]))
            heap += _MEMO_BYTES
        elif op == 0x4B:  # BININT1
            pos += 1
            stack.append(INT)
        elif op == 0x29:  # EMPTY_TUPLE
            stack.append(TUPLE)
        elif op == 0x52 or op == 0x81:  # REDUCE, NEWOBJ
            if len(stack) - (marks[-1] if marks else 0) < 2:
                raise ScanError("an opcode whose operands are not on the stack")
            func, args = stack[-2], stack[-1]
            del stack[-2:]
            if args != TUPLE:
                raise ScanError("REDUCE/NEWOBJ with arguments that are not a tuple")
            if func == KLASS:
                stack.append(OBJ)
                heap += _OBJ_BYTES
            elif func == DICT_FACTORY and op == 0x52:
                stack.append(DICT)
                heap += _DICT_BYTES
            elif func == TOKEN_FACTORY and op == 0x52:
                stack.append(TOKEN)
            else:
                raise ScanError("REDUCE/NEWOBJ of something that is not a PGO class")
        elif op == 0x7D:  # EMPTY_DICT
            stack.append(DICT)
            heap += _DICT_BYTES
        elif op == 0x62:  # BUILD
            if len(stack) - (marks[-1] if marks else 0) < 2:
                raise ScanError("an opcode whose operands are not on the stack")
            state = stack.pop()
            if _kind(state) not in (DICT, TUPLE, CONST) or stack[-1] != OBJ:
                raise ScanError("BUILD of something that is not a PGO object")
        elif op == 0x4E or op == 0x88 or op == 0x89:  # NONE, NEWTRUE, NEWFALSE
            stack.append(CONST)
        elif op == 0x28:  # MARK
            if len(marks) >= MAX_MARKS:
                raise ScanError(f"MARKs nested more than {MAX_MARKS} deep: not PGO state")
            marks.append(len(stack))
        elif op == 0x75 or op == 0x64:  # SETITEMS, DICT
            start = _pop_mark(marks)
            items = stack[start:]
            if len(items) % 2:
                raise ScanError("a dict of an odd number of items")
            for key in items[::2]:
                if 0 < key < NAME and key != OBJ:  # neither a string (<=0, >=NAME) nor an object
                    raise ScanError(_key_message(key))
            del stack[start:]
            if op == 0x75:
                _target(stack, marks, DICT, "SETITEMS")
            else:
                stack.append(DICT)
                heap += _DICT_BYTES
            heap += len(items) // 2 * _DICT_ITEM_BYTES
        elif op == 0x73:  # SETITEM
            _need(stack, marks, 3)
            if _kind(stack[-2]) not in _KEY_TAGS:
                raise ScanError(_key_message(stack[-2]))
            del stack[-2:]
            _target(stack, marks, DICT, "SETITEM")
            heap += _DICT_ITEM_BYTES
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
            stack.append(name_tags.get(data[pos:pos + size], -pos if n == 1 else STR)
                         if size <= _SHORT_STR else STR)
            pos += size
            heap += _STR_BYTES + size
        elif op == 0x85 or op == 0x86 or op == 0x87:  # TUPLE1..3
            n = op - 0x84
            if len(stack) - (marks[-1] if marks else 0) < n:
                raise ScanError("TUPLE of items not on the stack")
            del stack[-n:]
            stack.append(TUPLE)
            heap += _TUPLE_BYTES + n * _SLOT_BYTES
        elif op == 0x4D:  # BININT2
            pos += 2
            stack.append(INT)
            heap += _INT_BYTES
        elif op == 0x6A:  # LONG_BINGET
            idx = _u(data, pos, 4, end)
            pos += 4
            if idx >= len(memo):
                raise ScanError(f"memo slot {idx:,} read before it was set")
            stack.append(memo[idx])
        elif op == 0x71 or op == 0x72:  # BINPUT, LONG_BINPUT
            n = 1 if op == 0x71 else 4
            idx = _u(data, pos, n, end)
            pos += n
            if len(stack) <= (marks[-1] if marks else 0):
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
            stack.append(INT)
            heap += _INT_BYTES
        elif op == 0x8A or op == 0x8B:  # LONG1, LONG4
            n = 1 if op == 0x8A else 4
            size = _u(data, pos, n, end)
            pos += n
            if size > MAX_LONG_BYTES:
                raise ScanError(f"an int of {size:,} bytes: PGO state holds sizes and line numbers")
            pos += size
            stack.append(INT)
            heap += _INT_BYTES
        elif op == 0x47:  # BINFLOAT
            pos += 8
            stack.append(FLOAT)
            heap += _FLOAT_BYTES
        elif op == 0x74 or op == 0x6C:  # TUPLE, LIST (items since MARK)
            start = _pop_mark(marks)
            n = len(stack) - start
            del stack[start:]
            stack.append(TUPLE if op == 0x74 else LIST)
            heap += (_TUPLE_BYTES + n * _SLOT_BYTES) if op == 0x74 else \
                (_LIST_BYTES + n * _ITEM_BYTES)
        elif op == 0x5D:  # EMPTY_LIST
            stack.append(LIST)
            heap += _LIST_BYTES
        elif op == 0x61:  # APPEND
            _need(stack, marks, 2)
            stack.pop()
            _target(stack, marks, LIST, "APPEND")
            heap += _ITEM_BYTES
        elif op == 0x65:  # APPENDS
            start = _pop_mark(marks)
            n = len(stack) - start
            del stack[start:]
            _target(stack, marks, LIST, "APPENDS")
            heap += n * _ITEM_BYTES
        elif op == 0x93:  # STACK_GLOBAL
            _need(stack, marks, 2)
            module, name = stack[-2], stack[-1]
            del stack[-2:]
            stack.append(_global(_name(data, module, names), _name(data, name, names),
                                 allowed, classes, dict_factories))
        elif op == 0x63:  # GLOBAL "module\nname\n"
            nl1 = data.find(b"\n", pos, pos + 2 * _SHORT_STR)
            nl2 = data.find(b"\n", nl1 + 1, nl1 + 1 + 2 * _SHORT_STR) if nl1 >= 0 else -1
            if nl2 < 0:
                raise ScanError("GLOBAL of a name that is not a short string")
            text_module = data[pos:nl1].decode("utf-8", "replace")
            text_name = data[nl1 + 1:nl2].decode("utf-8", "replace")
            pos = nl2 + 1
            stack.append(_global(text_module, text_name, allowed, classes, dict_factories))
        elif op == 0x30:  # POP
            if marks and len(stack) == marks[-1]:
                marks.pop()  # as the unpicklers do: POP right after MARK drops the mark
            elif stack:
                stack.pop()
            else:
                raise ScanError("POP of an empty stack")
        elif op == 0x31:  # POP_MARK
            del stack[_pop_mark(marks):]
        elif op == 0x43 or op == 0x42 or op == 0x8E:  # SHORT_BINBYTES, BINBYTES, BINBYTES8
            n = 1 if op == 0x43 else 4 if op == 0x42 else 8
            size = _u(data, pos, n, end)
            pos += n + size
            if pos > end:
                raise ScanError("truncated pickle (bytes longer than the file)")
            stack.append(BYTES)
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
            walked[0] = ops
            _bounds(ops, heap, len(stack), limit, total)
            if len(stack) != 1 or marks:
                raise ScanError("a pickle that ends with an unbalanced stack")
            return heap
        else:
            raise ScanError(f"opcode {bytes([op])!r} at byte {pos - 1:,}: "
                            "not used by torch's PGO state")


@functools.lru_cache(maxsize=4)
def _names(allowed: tuple[tuple[str, str], ...]) -> tuple[list[str], dict[bytes, int]]:
    """The allowed module and class names, and the tag of each one's UTF-8 bytes."""
    names = sorted({part for pair in allowed for part in pair})
    return names, {name.encode(): NAME + i for i, name in enumerate(names)}


def _bounds(ops: int, heap: int, depth: int, limit: int, total: int) -> None:
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



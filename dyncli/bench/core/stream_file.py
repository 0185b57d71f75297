"""Request streams: the user's traffic, one ``(batch, seq)`` shape per request. Pure.

A stream comes from ``--shapes FILE`` (CSV with a header row, or JSONL; columns/keys
``batch`` and/or ``seq`` and an optional ``count`` = that many consecutive requests), from
``--sizes 1,3,8`` (batch sizes) or, by default, from the seeded variation plan (one request
per variation). ``--requests N`` cycles or cuts the stream to N requests (:func:`fit`). Every
number is checked before use (type, range: sizes at most :data:`MAX_SIZE`, ``count`` at most
:data:`MAX_COUNT`, the whole stream at most :data:`MAX_REQUESTS`) and a bad row is a
:class:`StreamError` naming its line. What a stream costs is :mod:`dyncli.bench.core.cost`.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from dyncli.logparse.safe import clip, loads, small_int

Shape = tuple[int | None, int | None]  # (batch, seq); None = the model's base size
MAX_COUNT = 10_000_000  # one row may stand for many requests, but not for a runaway number
# The costed stream is held request by request (shape ids, cumulative-time curves): a million
# requests cost ~10 MB per strategy. A longer stream says nothing a scaled-down one does not:
# the mix is what is costed, and break-even past the end is projected.
MAX_REQUESTS = 1_000_000
MAX_SIZE = 2**31 - 1  # a batch or sequence length; torch sizes past this are no real traffic


class StreamError(ValueError):
    """A malformed request stream; the message names the line."""


def _int(value: Any, what: str, where: str, low: int = 0, high: int = MAX_SIZE) -> int:
    bad = StreamError(f"{where}: {what} must be an integer, got {clip(repr(value), 41)}")
    if isinstance(value, bool):
        raise bad
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        text = value.strip()
        value = small_int(text)  # at most 18 digits: never a 4,300-digit int() call
        if value is None and text.lstrip("+-").isdigit():
            raise StreamError(f"{where}: {what} {clip(repr(text), 41)} is above {high:,}")
    if not isinstance(value, int):
        raise bad
    if value < low:
        raise StreamError(f"{where}: {what} must be >= {low}, got {value}")
    if value > high:
        raise StreamError(f"{where}: {what} {clip(repr(value), 41)} is above {high:,}")
    return value


def _add(out: list[Shape], shape: Shape, count: int, where: str) -> None:
    if len(out) + count > MAX_REQUESTS:
        raise StreamError(f"{where}: the stream passes {MAX_REQUESTS:,} requests; scale the "
                          "counts down (the mix of shapes is what is costed, and break-even "
                          "past the stream's end is projected)")
    out.extend([shape] * count)


KEYS = ("batch", "seq", "count")


def _near_miss(names: Iterable[str], where: str) -> None:
    """A column or key that is a misspelt ``batch``/``seq``/``count`` (``counts``, ``cnt``) is
    an error: ignored, every row would silently count once. Other extra columns (a timestamp
    exported with the traffic, a ``batch_id`` beside ``batch``) are left alone."""
    keys = [str(name).strip().lower() for name in names]
    for key in keys:
        close = _close(key) if key not in KEYS and len(key) <= 12 else None  # longer: < 0.6
        if close and close not in keys:
            raise StreamError(f"{where}: unknown column {key!r}; did you mean "
                              f"{close}? (columns: batch, seq, count)")


@functools.lru_cache(maxsize=256)  # JSON lines repeat their keys on every row
def _close(key: str) -> str | None:
    return next(iter(difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)), None)


def _row(record: dict[str, Any], where: str) -> tuple[Shape, int]:
    _near_miss((k for k in record if k is not None), where)
    keys = {str(k).strip().lower(): v for k, v in record.items() if k is not None}
    batch_raw, seq_raw = keys.get("batch"), keys.get("seq")
    batch = None if batch_raw in (None, "") else _int(batch_raw, "batch", where)
    seq = None if seq_raw in (None, "") else _int(seq_raw, "seq", where)
    if batch is None and seq is None:
        raise StreamError(f"{where}: needs batch and/or seq")
    count_raw = keys.get("count")
    count = 1 if count_raw in (None, "") else _int(count_raw, "count", where, low=1,
                                                    high=MAX_COUNT)
    return (batch, seq), count


def parse_csv(text: str, name: str = "shapes") -> list[Shape]:
    """Requests from CSV text with a header row (``batch``, ``seq``, ``count``)."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        return _csv_rows(reader, name)
    except csv.Error as e:  # a field over the csv module's 128 KB limit, an unterminated quote
        raise StreamError(f"{name}: line {max(reader.line_num, 1)}: not CSV ({clip(str(e), 80)})") from None


def _csv_rows(reader: csv.DictReader[str], name: str) -> list[Shape]:
    fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    if not {"batch", "seq"} & set(fields):
        raise StreamError(f"{name}: line 1: the header needs a batch and/or seq column, "
                          f"got {','.join(fields) or '(empty)'}")
    _near_miss(fields, f"{name}: line 1")
    out: list[Shape] = []
    for lineno, record in enumerate(reader, start=2):
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue  # blank line
        where = f"{name}: line {lineno}"
        shape, count = _row(record, where)
        _add(out, shape, count, where)
    return out


def parse_jsonl(lines: Iterable[str], name: str = "shapes") -> list[Shape]:
    """Requests from JSON lines: ``{"batch": 8, "seq": 128, "count": 3}`` per line."""
    out: list[Shape] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}: line {lineno}"
        try:
            record = loads(line)  # ValueError only: bad JSON, deep nesting, a 5,000-digit int
        except ValueError as e:
            why = e.msg if isinstance(e, json.JSONDecodeError) else clip(str(e), 80)
            raise StreamError(f"{where}: not JSON ({why})") from None
        if not isinstance(record, dict):
            raise StreamError(f"{where}: expected an object like {{\"batch\": 8}}")
        shape, count = _row(record, where)
        _add(out, shape, count, where)
    return out


def parse_stream(text: str, name: str = "shapes") -> list[Shape]:
    """CSV or JSONL, told apart by the first non-blank character (``{`` = JSONL)."""
    head = text.lstrip()
    if head.startswith("["):  # a JSON array was read as a CSV header
        raise StreamError(f"{name}: line 1: a JSON array; give JSON lines, one object per "
                          "line like {\"batch\": 8, \"count\": 3}")
    requests = parse_jsonl(text.splitlines(), name) if head.startswith("{") else \
        parse_csv(text, name)
    if not requests:
        raise StreamError(f"{name}: no requests")
    return requests


def parse_sizes(sizes: Sequence[int | str]) -> list[Shape]:
    """``--sizes 1,3,8,8,16`` (batch sizes, 0 and 1 allowed) as requests."""
    if len(sizes) > MAX_REQUESTS:
        raise StreamError(f"--sizes: more than {MAX_REQUESTS:,} sizes")
    out: list[Shape] = [(_int(s, "size", "--sizes"), None) for s in sizes]
    if not out:
        raise StreamError("--sizes: no sizes")
    return out


def fit(requests: Sequence[Shape], n: int | None) -> list[Shape]:
    """The stream cycled (or cut) to ``n`` requests; unchanged when ``n`` is None."""
    if n is None:
        return list(requests)
    if n < 1:
        raise StreamError(f"--requests must be >= 1, got {n}")
    if n > MAX_REQUESTS:
        raise StreamError(f"--requests {n:,} is above {MAX_REQUESTS:,}: the mix of shapes is "
                          "what is costed, and break-even past the stream's end is projected")
    reps = -(-n // len(requests))
    return (list(requests) * reps)[:n]


def distinct(requests: Sequence[Shape]) -> tuple[list[Shape], list[int]]:
    """Distinct shapes in first-sight order, and each request's index into them."""
    index: dict[Shape, int] = {}
    ids = [index.setdefault(r, len(index)) for r in requests]
    return list(index), ids


def compile_walk(ids: Sequence[int], eager_first: bool) -> tuple[list[int], list[int | None]]:
    """The order to run distinct shapes in so compiles happen as they would in the stream.

    Returns the shape order and, per shape (by id), the request index where its first
    compiled call sits in the stream (None: never at a compiled call). Normally that is its
    first occurrence. With ``eager_first`` (torch's ``eager_then_compile`` stance) request 0
    runs eager and the compile at request 1 sees the shapes of requests 0 and 1, so the walk
    starts at request 1.
    """
    n_shapes = max(ids) + 1 if ids else 0
    at: list[int | None] = [None] * n_shapes
    order: list[int] = []
    start = 1 if eager_first else 0
    for i in range(start, len(ids)):
        if at[ids[i]] is None:
            at[ids[i]] = i
            order.append(ids[i])
    order += [s for s in range(n_shapes) if at[s] is None]
    return order, at

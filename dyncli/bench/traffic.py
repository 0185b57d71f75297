"""Request streams and what they cost under each strategy. Pure: no torch, no file IO.

A *stream* is the user's traffic in order: one ``(batch, seq)`` shape per request (``None`` =
the model's base size). It comes from ``--shapes FILE`` (CSV with a header row, or JSONL;
columns/keys ``batch`` and/or ``seq`` and an optional ``count`` = that many consecutive
requests), from ``--sizes 1,3,8`` (batch sizes) or, by default, from the seeded variation plan
(one request per variation). ``--requests N`` cycles or cuts the stream to N requests.

The cost model (docs/bench.md, "The cost of a request stream"):

* each distinct shape's steady-state latency is measured once (interleaved eager/compiled);
* each compile is placed at the request where it happens in stream order, and costs its
  first-call time minus that request's own steady-state latency (counted with the requests);
* ``total_s`` = compiles + Σ over requests of its shape's steady-state latency;
* ``first_result_s`` = the cost of request 0 (its compile included);
* ``break_even_requests["eager"]`` = the request count from which this strategy's cumulative
  time stays below eager's; past the stream's end the stream is taken to repeat (no more
  compiles, every shape already seen), which is flagged as ``break_even_projected``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.stats import median, p_value

Shape = tuple[int | None, int | None]  # (batch, seq); None = the model's base size
MAX_COUNT = 10_000_000  # one row may stand for many requests, but not for a runaway number
SIGNIFICANT = 0.05


def _ms(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.3g}"


class StreamError(ValueError):
    """A malformed request stream; the message names the line."""


# ---------------------------------------------------------------- reading streams


def _int(value: Any, what: str, where: str, low: int = 0) -> int:
    if isinstance(value, bool):
        raise StreamError(f"{where}: {what} must be an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise StreamError(f"{where}: {what} must be an integer, got {value!r}") from None
    if not isinstance(value, int):
        raise StreamError(f"{where}: {what} must be an integer, got {value!r}")
    if value < low:
        raise StreamError(f"{where}: {what} must be >= {low}, got {value}")
    return value


def _row(record: dict[str, Any], where: str) -> tuple[Shape, int]:
    keys = {str(k).strip().lower(): v for k, v in record.items() if k is not None}
    batch_raw, seq_raw = keys.get("batch"), keys.get("seq")
    batch = None if batch_raw in (None, "") else _int(batch_raw, "batch", where)
    seq = None if seq_raw in (None, "") else _int(seq_raw, "seq", where)
    if batch is None and seq is None:
        raise StreamError(f"{where}: needs batch and/or seq")
    count_raw = keys.get("count")
    count = 1 if count_raw in (None, "") else _int(count_raw, "count", where, low=1)
    if count > MAX_COUNT:
        raise StreamError(f"{where}: count {count} is above {MAX_COUNT}")
    return (batch, seq), count


def parse_csv(text: str, name: str = "shapes") -> list[Shape]:
    """Requests from CSV text with a header row (``batch``, ``seq``, ``count``)."""
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    if not {"batch", "seq"} & set(fields):
        raise StreamError(f"{name}: line 1: the header needs a batch and/or seq column, "
                          f"got {','.join(fields) or '(empty)'}")
    out: list[Shape] = []
    for lineno, record in enumerate(reader, start=2):
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue  # blank line
        shape, count = _row(record, f"{name}: line {lineno}")
        out.extend([shape] * count)
    return out


def parse_jsonl(lines: Iterable[str], name: str = "shapes") -> list[Shape]:
    """Requests from JSON lines: ``{"batch": 8, "seq": 128, "count": 3}`` per line."""
    out: list[Shape] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}: line {lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise StreamError(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(record, dict):
            raise StreamError(f"{where}: expected an object like {{\"batch\": 8}}")
        shape, count = _row(record, where)
        out.extend([shape] * count)
    return out


def parse_stream(text: str, name: str = "shapes") -> list[Shape]:
    """CSV or JSONL, told apart by the first non-blank character (``{`` = JSONL)."""
    head = text.lstrip()
    requests = parse_jsonl(text.splitlines(), name) if head.startswith("{") else \
        parse_csv(text, name)
    if not requests:
        raise StreamError(f"{name}: no requests")
    return requests


def parse_sizes(sizes: Sequence[int | str]) -> list[Shape]:
    """``--sizes 1,3,8,8,16`` (batch sizes, 0 and 1 allowed) as requests."""
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


# ---------------------------------------------------------------- buckets (pad)


def parse_buckets(text: str) -> list[int] | None:
    """``"8,16,32"`` → sorted sizes; ``"pow2"`` → None (powers of two, unbounded)."""
    if text.strip().lower() == "pow2":
        return None
    try:
        sizes = sorted({int(p) for p in text.split(",") if p.strip()})
    except ValueError:
        raise StreamError(f"--buckets: expected pow2 or a comma list of sizes, got {text!r}") \
            from None
    if not sizes or sizes[0] < 1:
        raise StreamError(f"--buckets: sizes must be >= 1, got {text!r}")
    return sizes


def bucket_of(size: int, buckets: list[int] | None) -> int | None:
    """The smallest bucket >= size; None above the largest (that request runs unpadded)."""
    if buckets is None:
        return 1 if size <= 1 else 1 << (size - 1).bit_length()
    for b in buckets:
        if b >= size:
            return b
    return None


def pad_waste(real: Sequence[tuple[int, int]], padded: Sequence[tuple[int, int]]) -> float:
    """Padding elements added / real elements over the stream, per request (batch·seq) sizes.

    Only the varied dims count (a request of batch 5 padded to 8 adds 3 rows: 0.6). A stream of
    empty requests padded up has infinite waste.
    """
    n_real = sum(b * s for b, s in real)
    added = sum(max(0, pb * ps - b * s) for (b, s), (pb, ps) in zip(real, padded, strict=True))
    if n_real == 0:
        return math.inf if added else 0.0
    return added / n_real


# ---------------------------------------------------------------- the cost model


@dataclass(frozen=True)
class ShapeTiming:
    """One distinct shape under one strategy: steady-state samples, in ms."""

    compiled_samples: tuple[float, ...]
    eager_samples: tuple[float, ...]

    @property
    def compiled_ms(self) -> float:
        """Median compiled latency."""
        return median(self.compiled_samples)

    @property
    def eager_ms(self) -> float:
        """Median eager latency."""
        return median(self.eager_samples)


@dataclass(frozen=True)
class CompileEvent:
    """A compile in stream order: at request ``request``, ``seconds`` beyond that request."""

    request: int
    seconds: float
    compiles: int = 1


@dataclass
class StreamCost:
    """What a stream costs one strategy (or eager)."""

    requests: int
    first_result_s: float
    total_s: float
    weighted_latency_ms: float
    compile_s: float
    compiles: int
    curve: list[float] = field(default_factory=list)  # cumulative seconds after each request
    break_even: int | None = None
    break_even_projected: bool = False
    pad_waste: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The ``stream`` object of a run in the JSON document (no curve)."""
        out: dict[str, Any] = {
            "requests": self.requests, "first_result_s": self.first_result_s,
            "total_s": self.total_s, "weighted_latency_ms": self.weighted_latency_ms,
            "compile_s": self.compile_s, "compiles": self.compiles,
            "break_even_requests": {"eager": self.break_even},
            "break_even_projected": self.break_even_projected,
        }
        if self.pad_waste is not None:
            out["pad_waste"] = self.pad_waste
        return out


def _latencies(ids: Sequence[int], ms: Sequence[float]) -> list[float]:
    return [ms[i] / 1000.0 for i in ids]


def cost(ids: Sequence[int], latency_ms: Sequence[float], events: Sequence[CompileEvent] = (),
         overrides: dict[int, float] | None = None) -> StreamCost:
    """The stream's cost from each shape's steady-state latency and the compiles in order.

    ``overrides`` replaces a request's cost (seconds) by a measured one (the eager first call
    under ``eager_then_compile``).
    """
    per = _latencies(ids, latency_ms)
    for i, seconds in (overrides or {}).items():
        if 0 <= i < len(per):
            per[i] = seconds
    extra = [0.0] * len(per)
    for e in events:
        if 0 <= e.request < len(per):
            extra[e.request] += max(0.0, e.seconds)
    curve, acc = [], 0.0
    for a, b in zip(per, extra, strict=True):
        acc += a + b
        curve.append(acc)
    steady = [latency_ms[i] for i in ids]
    return StreamCost(
        requests=len(ids), first_result_s=per[0] + extra[0] if per else math.nan,
        total_s=acc, weighted_latency_ms=sum(steady) / len(steady) if steady else math.nan,
        compile_s=sum(extra), compiles=sum(e.compiles for e in events if 0 <= e.request < len(per)),
        curve=curve)


def break_even(curve: Sequence[float], eager_curve: Sequence[float], rate_ms: float,
               eager_rate_ms: float) -> tuple[int | None, bool]:
    """Requests after which ``curve`` stays below ``eager_curve``; (n, projected past the end).

    Within the stream it is the smallest n with curve[m] < eager[m] for every m >= n (counted
    from 1). If the strategy is still behind at the end but cheaper per request, the stream is
    taken to repeat and n is projected; otherwise None (never).
    """
    if not curve or len(curve) != len(eager_curve):
        return None, False
    n = len(curve)
    if curve[-1] < eager_curve[-1]:
        first = n
        for m in range(n - 1, -1, -1):
            if curve[m] < eager_curve[m]:
                first = m + 1
            else:
                break
        return first, False
    gain_per_request = (eager_rate_ms - rate_ms) / 1000.0
    if not gain_per_request > 0:
        return None, False
    behind = curve[-1] - eager_curve[-1]
    return n + math.floor(behind / gain_per_request) + 1, True


def weighted_samples(ids: Sequence[int], samples: Sequence[Sequence[float]]) -> list[float]:
    """Per repetition r: the stream-weighted mean latency Σ share(shape) · sample_r(shape).

    Each repetition of every shape is an independent draw, so these are ``repeat`` samples of
    the stream's mean steady-state latency — what the recommendation's p-value compares.
    """
    if not ids or not samples:
        return []
    counts = [0] * len(samples)
    for i in ids:
        counts[i] += 1
    used = [s for s, c in zip(samples, counts, strict=True) if c]
    reps = min((len(s) for s in used), default=0)
    total = len(ids)
    return [sum(c / total * s[r] for s, c in zip(samples, counts, strict=True) if c)
            for r in range(reps)]


@dataclass(frozen=True)
class Candidate:
    """A strategy (or eager) competing for the recommendation."""

    name: str
    total_s: float
    passed: bool
    samples: tuple[float, ...] = ()  # :func:`weighted_samples`
    weighted_latency_ms: float = math.nan
    compile_s: float = 0.0
    break_even: int | None = None  # requests until it beats eager


@dataclass(frozen=True)
class Recommendation:
    """The cheapest stream among candidates that passed, and how sure we are."""

    strategy: str
    total_s: float
    runner_up: str | None
    runner_up_total_s: float | None
    p_value: float | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The top-level ``recommendation`` object."""
        return {"strategy": self.strategy, "total_s": self.total_s, "reason": self.reason,
                "runner_up": self.runner_up, "runner_up_total_s": self.runner_up_total_s,
                "p_value": self.p_value}


def recommend(candidates: Sequence[Candidate], requests: int) -> Recommendation | None:
    """The candidate with the least ``total_s`` among those that passed, with the runner-up.

    The p-value (two-sided Mann-Whitney U) compares their stream-weighted steady-state
    latencies: whether, once compiled, one really serves faster than the other.
    """
    ok = sorted((c for c in candidates if c.passed and math.isfinite(c.total_s)),
                key=lambda c: c.total_s)
    if not ok:
        return None
    best = ok[0]
    second = ok[1] if len(ok) > 1 else None
    p = None
    if second is not None and len(best.samples) >= 2 and len(second.samples) >= 2:
        p = p_value(list(best.samples), list(second.samples))
    parts = [f"{best.name}: {best.total_s:.2f} s for {requests} requests "
             f"({best.compile_s:.2f} s compiling, {_ms(best.weighted_latency_ms)} ms per request "
             "at steady state)"]
    if second is not None:
        parts.append(f"next best {second.name}: {second.total_s:.2f} s "
                     f"({second.compile_s:.2f} s compiling, "
                     f"{_ms(second.weighted_latency_ms)} ms per request)")
        if p is None or p != p:
            parts.append("steady-state latencies not compared (too few samples)")
        elif p < SIGNIFICANT:
            faster = best if best.weighted_latency_ms <= second.weighted_latency_ms else second
            parts.append(f"steady-state latencies differ (p={p:.2g}); {faster.name} serves "
                         "faster once compiled")
        else:
            parts.append(f"steady-state latencies do not differ significantly (p={p:.2g}): "
                         "the difference is in compiling")
    if best.name == "eager":
        payback = [c for c in ok[1:] if c.break_even is not None]
        if payback:
            soonest = min(payback, key=lambda c: c.break_even or 0)
            parts.append(f"compiling pays back only after {soonest.break_even} requests "
                         f"({soonest.name})")
        else:
            parts.append("no strategy pays its compiles back at this traffic")
    failed = [c.name for c in candidates if not c.passed]
    if failed:
        parts.append("not considered (did not pass): " + ", ".join(failed))
    return Recommendation(best.name, best.total_s, second.name if second else None,
                          second.total_s if second else None,
                          None if p is None or p != p else p, "; ".join(parts))

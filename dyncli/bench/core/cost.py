"""What a request stream costs under each strategy. Pure: no torch, no file IO.

A *stream* is the user's traffic in order: one ``(batch, seq)`` shape per request (``None`` =
the model's base size); reading one is :mod:`dyncli.bench.core.stream_file`.

The cost model (docs/bench.md, "The cost of a request stream"):

* each distinct shape's steady-state latency is measured once (interleaved eager/compiled);
* each compile is placed at the request where it happens in stream order, and costs its
  first-call time minus that request's own steady-state latency (counted with the requests);
* a shape's first request costs more than its steady state even where nothing compiles (eager
  and every strategy: allocations, kernel and library set-up for a new size): each shape's
  measured first call beyond its steady state (``new_shape_s``) is charged at its first
  request, unless a compile sits there (a compiling first call already holds it);
* ``total_s`` = compiles + new shapes' extra + Σ over requests of its shape's steady latency;
* ``first_result_s`` = the cost of request 0 (its compile included);
* ``break_even_requests["eager"]`` = the request count from which this strategy's cumulative
  time stays below eager's; past the stream's end the stream is taken to repeat (no more
  compiles, every shape already seen), which is flagged as ``break_even_projected``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core import strategy as table
from dyncli.bench.core.run_parts import Replay
from dyncli.bench.core.stats import p_value
from dyncli.bench.core.stream_file import MAX_SIZE, StreamError
from dyncli.logparse.safe import clip
from dyncli.words import counted

SIGNIFICANT = 0.05


def _ms(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.3g}"


# ---------------------------------------------------------------- buckets (pad)


def parse_buckets(text: str) -> list[int] | None:
    """``"8,16,32"`` → sorted sizes; ``"pow2"`` → None (powers of two, unbounded)."""
    if text.strip().lower() == "pow2":
        return None
    shown = clip(text, 61)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) > 1000 or any(len(p) > 12 for p in parts):  # bounded before int()
        raise StreamError(f"--buckets: at most 1000 sizes of at most {MAX_SIZE:,}, got {shown!r}")
    try:
        sizes = sorted({int(p) for p in parts})
    except ValueError:
        raise StreamError(f"--buckets: expected pow2 or a comma list of sizes, got {shown!r}") \
            from None
    if not sizes or sizes[0] < 1 or sizes[-1] > MAX_SIZE:
        raise StreamError(f"--buckets: sizes must be in [1, {MAX_SIZE:,}], got {shown!r}")
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
    curve: Sequence[float] = field(default_factory=lambda: array("d"))  # cumulative s after each request
    break_even: int | None = None
    break_even_projected: bool = False
    pad_waste: float | None = None
    replay: Replay | None = None  # eager's: the interleaved --replay (a run's is its own)
    new_shape_s: float = 0.0  # first calls of new shapes beyond their steady state (no compile)
    recordings: int | None = None  # CUDA-graph modes: graphs recorded in the stream
    record_s: float | None = None  # and their seconds beyond steady calls (in total_s)

    def as_dict(self) -> dict[str, Any]:
        """The ``stream`` object of a run in the JSON document (no curve)."""
        out: dict[str, Any] = {
            "requests": self.requests, "first_result_s": self.first_result_s,
            "total_s": self.total_s, "weighted_latency_ms": self.weighted_latency_ms,
            "compile_s": self.compile_s, "compiles": self.compiles,
            "break_even_requests": {"eager": self.break_even},
            "break_even_projected": self.break_even_projected,
        }
        if self.new_shape_s:
            out["new_shape_s"] = self.new_shape_s
        if self.pad_waste is not None:
            out["pad_waste"] = self.pad_waste
        if self.replay is not None:
            out["replay"] = self.replay.to_dict()
        if self.recordings is not None:
            out |= {"recordings": self.recordings, "record_s": self.record_s}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StreamCost:
        """Read a ``stream`` object back (the curve is not in the document: empty)."""
        return cls(f.integer(d.get("requests")), f.num(d.get("first_result_s")),
                   f.num(d.get("total_s")), f.num(d.get("weighted_latency_ms")),
                   f.num(d.get("compile_s")), f.integer(d.get("compiles")),
                   break_even=f.opt_int(f.obj(d.get("break_even_requests")).get("eager")),
                   break_even_projected=f.flag(d.get("break_even_projected")),
                   pad_waste=f.num(d.get("pad_waste")) if "pad_waste" in d else None,
                   new_shape_s=f.num(d.get("new_shape_s"), 0.0),
                   replay=Replay.from_dict(d["replay"])
                   if isinstance(d.get("replay"), dict) else None,
                   recordings=f.opt_int(d.get("recordings")),
                   record_s=f.opt_num(d.get("record_s")))


def new_shape_extra(ids: Sequence[int], new_shape_s: Sequence[float | None],
                    taken: set[int] | dict[int, float]) -> dict[int, float]:
    """Per request: a shape's first-call extra seconds, at its first request in ``ids``.

    ``new_shape_s[shape]`` is None or not positive where nothing was measured or nothing is
    due; a request in ``taken`` (a compile or an override sits there) is charged nothing here.
    """
    out: dict[int, float] = {}
    seen: set[int] = set()
    for i, shape in enumerate(ids):
        if shape in seen:
            continue
        seen.add(shape)
        x = new_shape_s[shape] if 0 <= shape < len(new_shape_s) else None
        if x is not None and x > 0 and i not in taken:
            out[i] = x
    return out


def cost(ids: Sequence[int], latency_ms: Sequence[float], events: Sequence[CompileEvent] = (),
         overrides: dict[int, float] | None = None,
         new_shape_s: Sequence[float | None] = ()) -> StreamCost:
    """The stream's cost from each shape's steady-state latency and the compiles in order.

    ``overrides`` replaces a request's cost (seconds) by a measured one (the eager first call
    under ``eager_then_compile``). ``new_shape_s``: per shape, its first call's seconds beyond
    its steady state (:func:`new_shape_extra`). One pass over the requests; the curve is an
    array of doubles (8 bytes a request, not a Python float each).
    """
    n = len(ids)
    extra: dict[int, float] = {}
    compiles = 0
    for e in events:
        if 0 <= e.request < n:
            extra[e.request] = extra.get(e.request, 0.0) + max(0.0, e.seconds)
            compiles += e.compiles
    per_s = [ms / 1000.0 for ms in latency_ms]
    overrides = {i: s for i, s in (overrides or {}).items() if 0 <= i < n}
    fresh = new_shape_extra(ids, new_shape_s, set(extra) | set(overrides))
    curve = array("d")
    acc = 0.0
    for i, shape in enumerate(ids):
        acc += (overrides[i] if i in overrides else per_s[shape]) + extra.get(i, 0.0) \
            + fresh.get(i, 0.0)
        curve.append(acc)
    first = (overrides[0] if 0 in overrides else per_s[ids[0]]) + extra.get(0, 0.0) \
        + fresh.get(0, 0.0) if n else math.nan
    counts = [0] * len(latency_ms)
    for shape in ids:
        counts[shape] += 1
    steady = sum(c * ms for c, ms in zip(counts, latency_ms, strict=True) if c)
    return StreamCost(
        requests=n, first_result_s=first, total_s=acc,
        weighted_latency_ms=steady / n if n else math.nan,
        compile_s=sum(extra.values()), compiles=compiles, curve=curve,
        new_shape_s=sum(fresh.values()))


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
    confidence: float | None = None  # P(this strategy has the least total), by bootstrap
    p_best: dict[str, float] | None = None  # the same probability for every candidate
    apply: dict[str, Any] | None = None  # the plan (dyncli.bench.core.apply.Plan.as_dict)

    def as_dict(self) -> dict[str, Any]:
        """The top-level ``recommendation`` object (``strategy`` is a label in memory —
        ``automatic@reduce-overhead`` — and a strategy and its ``compile_mode`` in JSON)."""
        strategy, compile_mode = table.split(self.strategy)
        out = {"strategy": strategy, "compile_mode": compile_mode, "total_s": self.total_s,
               "reason": self.reason,
               "runner_up": self.runner_up, "runner_up_total_s": self.runner_up_total_s,
               "p_value": self.p_value}
        if self.confidence is not None:
            out |= {"confidence": self.confidence, "p_best": self.p_best}
        if self.apply is not None:
            out["apply"] = self.apply
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Recommendation:
        """Read the ``recommendation`` object back."""
        label = table.label(f.text(d.get("strategy")),
                            f.text(d.get("compile_mode"), table.DEFAULT_MODE))
        return cls(label, f.num(d.get("total_s")),
                   f.opt_text(d.get("runner_up")), f.opt_num(d.get("runner_up_total_s")),
                   f.opt_num(d.get("p_value")), f.text(d.get("reason")),
                   f.opt_num(d.get("confidence")),
                   {str(k): f.num(v) for k, v in f.obj(d.get("p_best")).items()}
                   if isinstance(d.get("p_best"), dict) else None,
                   f.opt_obj(d.get("apply")))


def recommend(candidates: Sequence[Candidate], requests: int,
              over_budget: Sequence[str] = ()) -> Recommendation | None:
    """The candidate with the least ``total_s`` among those that passed, with the runner-up.

    The p-value (two-sided Mann-Whitney U) compares their stream-weighted steady-state
    latencies: whether, once compiled, one really serves faster than the other.
    ``over_budget``: runs left out because no way to serve them fits the memory budget.
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
    parts = [f"{best.name}: {best.total_s:.2f} s for {counted(requests, 'request')} "
             f"({best.compile_s:.2f} s compiling, {_ms(best.weighted_latency_ms)} ms per request "
             "at steady state)"]
    if second is not None:
        parts.append(f"next best {second.name}: {second.total_s:.2f} s "
                     f"({second.compile_s:.2f} s compiling, "
                     f"{_ms(second.weighted_latency_ms)} ms per request)")
        if p is None or p != p:
            parts.append("steady-state latencies not compared (too few samples)")
        elif p < SIGNIFICANT:
            faster, slower = ((best, second) if best.weighted_latency_ms <= second.weighted_latency_ms
                              else (second, best))
            if faster.name == "eager":
                parts.append(f"steady-state latencies differ (p={p:.2g}); eager is faster even "
                             f"than {slower.name} once compiled")
            else:
                parts.append(f"steady-state latencies differ (p={p:.2g}); {faster.name} serves "
                             "faster once compiled")
        else:
            parts.append(f"steady-state latencies do not differ significantly (p={p:.2g}): "
                         "the difference is in compiling")
    if best.name == "eager":
        payback = [c for c in ok[1:] if c.break_even is not None]
        if payback:
            soonest = min(payback, key=lambda c: c.break_even or 0)
            parts.append(f"compiling pays back only after {counted(soonest.break_even or 0, 'request')} "
                         f"({soonest.name})")
        else:
            parts.append("no strategy pays its compiles back at this traffic")
    failed = [c.name for c in candidates if not c.passed]
    if failed:
        parts.append("not considered (did not pass): " + ", ".join(failed))
    if over_budget:
        parts.append("not considered (CUDA graphs over --memory-budget): "
                     + ", ".join(over_budget))
    return Recommendation(best.name, best.total_s, second.name if second else None,
                          second.total_s if second else None,
                          None if p is None or p != p else p, "; ".join(parts))

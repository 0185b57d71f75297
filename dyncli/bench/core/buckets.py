"""The bucket set that costs a request stream least: ``--buckets auto``. Pure: no torch.

Padding to buckets trades compiles for padded work. With one static compile per bucket, a
stream of distinct sizes ``s_1 < … < s_n`` (``c_i`` requests each) costs, for buckets ``B``::

    total(B) = Σ_{b ∈ B} compile(b) + Σ_i c_i · latency(bucket(s_i))

where ``bucket(s)`` is the smallest bucket ≥ s. Some optimal ``B`` uses only the stream's own
sizes as buckets, and always its largest: a bucket between two sizes can be lowered to the
largest size it serves, which is never dearer as long as latency does not fall as the size
grows — and :func:`interpolate` makes the measured latencies non-decreasing before they are
used, so that holds. Then ``total`` splits at each bucket into independent runs, and dynamic
programming over the sorted sizes finds the exact minimum in O(n²) (O(K·n²) with at most K
buckets), vectorised with numpy.

Latency at a size that was not measured comes from the measured ones (:func:`interpolate`);
the chosen buckets are measured for real before anything is reported (the engine's job).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core.cpu_time import CompileCost

# Distinct sizes the optimizer takes: O(n²) numpy work, ~0.1 s at this many.
MAX_DISTINCT = 4096
# --max-buckets: one DP row per bucket count.
MAX_BUCKETS = 256


@dataclass(frozen=True)
class BucketPlan:
    """A bucket list and what the stream costs with it (seconds).

    ``unpadded`` are the stream's sizes above the largest bucket: each runs at its own size
    and compiles once, as a server that does not pad them would.
    """

    name: str  # "auto", "pow2", "none" or "given"
    buckets: tuple[int, ...]
    total_s: float
    compile_s: float
    serve_s: float
    compiles: int
    unpadded: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """This plan in the JSON document."""
        return {"name": self.name, "buckets": list(self.buckets), "total_s": self.total_s,
                "compile_s": self.compile_s, "serve_s": self.serve_s,
                "compiles": self.compiles, "unpadded": list(self.unpadded)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BucketPlan:
        """Read a plan back (values of the wrong type read as absent)."""
        return cls(name=f.text(d.get("name")), buckets=f.ints(d.get("buckets")),
                   total_s=f.num(d.get("total_s")), compile_s=f.num(d.get("compile_s")),
                   serve_s=f.num(d.get("serve_s")), compiles=f.integer(d.get("compiles")),
                   unpadded=f.ints(d.get("unpadded")))


def interpolate(measured: Mapping[int, float]) -> Callable[[int], float]:
    """Latency (seconds) at any size from latencies measured at some sizes.

    The measured points are first made non-decreasing in size (a running maximum: a bigger
    batch is not faster; a dip is noise), then joined linearly. Below the smallest measured
    size the smallest one's latency holds; above the largest, latency grows in proportion to
    the size from the largest point (the work is linear in the padded dim).
    """
    if not measured:
        raise ValueError("no measured latencies to interpolate from")
    xs = sorted(measured)
    ys: list[float] = []
    for x in xs:
        y = float(measured[x])
        if not math.isfinite(y) or y < 0:
            raise ValueError(f"latency at size {x} is {y!r}")
        ys.append(max(y, ys[-1]) if ys else y)

    def at(size: int) -> float:
        if size <= xs[0]:
            return ys[0]
        if size >= xs[-1]:
            return ys[-1] * size / xs[-1]
        i = bisect.bisect_left(xs, size)
        if xs[i] == size:
            return ys[i]
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (size - x0) / (x1 - x0)

    return at


def _counted(sizes: Iterable[int]) -> tuple[list[int], list[int]]:
    counts = Counter(sizes)
    distinct = sorted(counts)
    if not distinct:
        raise ValueError("an empty stream has no buckets")
    if distinct[0] < 0:
        raise ValueError(f"size {distinct[0]} is negative")
    return distinct, [counts[s] for s in distinct]


def cost_of(sizes: Iterable[int], buckets: Sequence[int] | None,
            latency_s: Callable[[int], float], compile_s: Callable[[int], float],
            name: str = "given") -> BucketPlan:
    """What the stream costs padded to ``buckets`` (``None``: no padding, every size its own).

    A bucket that no request falls into is not compiled (a server compiles a bucket when it
    first serves one). Sizes above the largest bucket run unpadded, one compile each.
    """
    distinct, counts = _counted(sizes)
    ordered = sorted(set(buckets)) if buckets is not None else list(distinct)
    used: dict[int, int] = {}
    unpadded: list[int] = []
    for s, c in zip(distinct, counts, strict=True):
        i = bisect.bisect_left(ordered, s)
        if i == len(ordered):
            unpadded.append(s)
            used[s] = used.get(s, 0) + c
        else:
            used[ordered[i]] = used.get(ordered[i], 0) + c
    comp = sum(compile_s(b) for b in used)
    serve = sum(n * latency_s(b) for b, n in used.items())
    return BucketPlan(name, tuple(ordered), comp + serve, comp, serve, len(used),
                      tuple(unpadded))


def pow2(sizes: Iterable[int]) -> list[int]:
    """Powers of two up to the first one ≥ the largest size (what ``--buckets pow2`` pads to)."""
    top = max(sizes)
    out, b = [1], 1
    while b < top:
        b <<= 1
        out.append(b)
    return out


def optimal(sizes: Iterable[int], latency_s: Callable[[int], float],
            compile_s: Callable[[int], float], max_buckets: int | None = None) -> BucketPlan:
    """The bucket list with the least predicted total; ties go to fewer buckets.

    ``sizes`` is the stream (one size per request); ``latency_s(b)`` the steady-state seconds
    of one request padded to ``b``; ``compile_s(b)`` what compiling bucket ``b`` costs.
    Without ``max_buckets`` one row of DP (O(n²)); with it, one row per bucket count
    (O(K·n²)), ``K`` at most :data:`MAX_BUCKETS`.
    """
    import numpy as np

    stream = list(sizes)
    distinct, counts = _counted(stream)
    n = len(distinct)
    if n > MAX_DISTINCT:
        raise ValueError(f"{n:,} distinct sizes: --buckets auto takes at most {MAX_DISTINCT:,}")
    if max_buckets is not None and not 1 <= max_buckets <= MAX_BUCKETS:
        raise ValueError(f"max_buckets must be in [1, {MAX_BUCKETS}], got {max_buckets}")
    lat = np.array([latency_s(s) for s in distinct], dtype=float)
    comp = np.array([compile_s(s) for s in distinct], dtype=float)
    prefix = np.concatenate(([0.0], np.cumsum(np.array(counts, dtype=float))))

    def relax(j: int, best: Any, nbest: Any) -> tuple[float, int, int]:
        """The best split whose last bucket is distinct[j-1], serving sizes i..j-1 on top of
        ``best[i]``: (its total, its bucket count, i). Ties (to rounding) go to the split with
        fewer buckets, then the smaller start."""
        cand = best[:j] + comp[j - 1] + lat[j - 1] * (prefix[j] - prefix[:j])
        low = cand.min()
        if not math.isfinite(low):
            return math.inf, 0, 0
        near = np.flatnonzero(cand <= low + 1e-12 * max(1.0, abs(low)))
        i = int(near[np.argmin(nbest[near])])
        return float(cand[i]), int(nbest[i]) + 1, i

    best = np.full(n + 1, math.inf)
    best[0] = 0.0
    nbest = np.zeros(n + 1, dtype=np.int64)
    chosen: list[int] = []
    if max_buckets is None:
        # one row, updated in place: best[i] is final before j reads it
        back = np.zeros(n + 1, dtype=np.int64)
        for j in range(1, n + 1):
            best[j], nbest[j], back[j] = relax(j, best, nbest)
        j = n
        while j > 0:
            chosen.append(distinct[j - 1])
            j = int(back[j])
    else:
        # one row per bucket count k: rows[k][j] is where the last of k+1 buckets starts
        rows: list[Any] = []
        totals = []
        for _ in range(min(max_buckets, n)):
            row = [relax(j, best, nbest) for j in range(1, n + 1)]
            best = np.array([math.inf] + [r[0] for r in row])
            nbest = np.array([0] + [r[1] for r in row], dtype=np.int64)
            rows.append([0] + [r[2] for r in row])
            totals.append(best[n])
        k = min(range(len(totals)), key=lambda k: (totals[k], k))
        j = n
        for row_k in range(k, -1, -1):
            chosen.append(distinct[j - 1])
            j = int(rows[row_k][j])
    return cost_of(stream, sorted(chosen), latency_s, compile_s, name="auto")


def compare(sizes: Sequence[int], latency_s: Callable[[int], float],
            compile_s: Callable[[int], float], max_buckets: int | None = None,
            ) -> dict[str, BucketPlan]:
    """``auto`` beside ``pow2`` and no padding, as the table and the JSON show them."""
    return {"auto": optimal(sizes, latency_s, compile_s, max_buckets),
            "pow2": cost_of(sizes, pow2(sizes), latency_s, compile_s, name="pow2"),
            "none": cost_of(sizes, None, latency_s, compile_s, name="none")}


def from_probe(probe: Any, sizes: Sequence[int], bucket_of_variation: Mapping[int, int],
               max_buckets: int | None = None) -> dict[str, Any]:
    """``--buckets auto`` from a probe pass of ``pad`` (pow2 buckets), for the JSON document.

    ``probe`` is that pass's :class:`~dyncli.bench.core.result.RunResult`; ``sizes`` the
    stream's padded dim per request; ``bucket_of_variation`` the bucket each measured
    variation ran at. Latency per bucket is the mean of its compiled samples (the cost model's
    estimator); a bucket's compile costs the median of the probe's compiles, each charged as
    the stream's cost charges one: ``min(wall, CPU)`` of its first call, less a steady-state
    call (:mod:`~dyncli.bench.core.cpu_time`). Round 34 priced them at wall: on a busy machine
    (load 0.7-5.2) the probe's DistilBERT plan read 126.5 s against the 90.9 s its measured
    pass cost, the time the compiles waited for a core charged by one and not the other.
    Returns ``{"chosen", "max_buckets", "compile_s_each", "compile_wall_s_each", "plans",
    "probe"}``; ``compile_wall_s_each`` is the same median at wall, to say how far the
    machine stretched it.
    """
    per_bucket: dict[int, list[float]] = {}
    compiles: list[float] = []
    walls: list[float] = []
    for v in probe.variations:
        b = bucket_of_variation.get(v.index)
        if b is None or not v.compiled_samples:
            continue
        mean_s = sum(v.compiled_samples) / len(v.compiled_samples) / 1000.0
        per_bucket.setdefault(b, []).append(mean_s)
        if v.compiles and v.first_call_s == v.first_call_s:
            cost = CompileCost(v.first_call_s, v.first_call_cpu_s or 0.0)
            compiles.append(max(0.0, cost.charged_s - mean_s))
            walls.append(max(0.0, v.first_call_s - mean_s))
    if not per_bucket:
        raise ValueError("the probe pass measured no bucket")
    latency = interpolate({b: sum(xs) / len(xs) for b, xs in per_bucket.items()})
    compile_each = statistics.median(compiles) if compiles else 0.0
    plans = compare(list(sizes), latency, lambda _b: compile_each, max_buckets)
    return {"chosen": list(plans["auto"].buckets), "max_buckets": max_buckets,
            "compile_s_each": compile_each,
            "compile_wall_s_each": statistics.median(walls) if walls else None,
            "measured_latency_s": {str(b): latency(b) for b in sorted(per_bucket)},
            "plans": {k: p.as_dict() for k, p in plans.items()},
            "probe": {"buckets": "pow2", "compiles": probe.compiles,
                      "compile_time_s": probe.compile_time_s}}

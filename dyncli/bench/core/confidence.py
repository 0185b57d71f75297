"""Same-window pricing of steady state, and how sure the recommendation is. Pure: numpy, no torch.

A *window* is a set of timed samples taken together: round ``r`` of every column was taken at
about the same moment (a round-robin pass over eager and every strategy's compiled callable,
or an eager/compiled pair interleaved in one strategy's pass). Comparing latencies taken in
different windows compares the load of two moments, not two strategies (issue #18: eager's
median for the same shape was 8.7 ms in one strategy's window and 59.9 ms in another's).

:func:`price` turns the windows of one shape into a per-call price per strategy that is
comparable across strategies whatever the load did between windows::

    price(s) = mean(s in its window) / mean(eager in that window) × pooled eager mean

When every strategy was timed in one round-robin window with eager, the ratio's denominator
is the pooled mean and the price is simply the strategy's own mean: the ratio form is the
general case and the round-robin window its exact special case.

:func:`confidence` is the probability, by bootstrap, that the recommended strategy has the
least total on the stream: each replicate resamples every window's rounds (the same round
indices for all its columns, so load common to a round stays common), re-prices every shape,
and resamples each strategy's compiles with replacement. Deterministic (a fixed seed): the
same measurements give the same confidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

EAGER = "eager"
SURE = 0.9  # below this the reason says the leaders are within noise
REPLICATES = 1000
Z_SURE = 1.2816  # one-sided normal quantile of SURE


@dataclass(frozen=True)
class Window:
    """Per-call samples (ms) taken together; ``columns[name][r]`` is round ``r`` of ``name``.

    Every window holds an ``eager`` column; the other columns are strategies. Columns of one
    window have the same number of rounds (the shortest one bounds them).
    """

    columns: Mapping[str, Sequence[float]]

    @property
    def rounds(self) -> int:
        """The number of rounds every column has."""
        return min((len(v) for v in self.columns.values()), default=0)


@dataclass(frozen=True)
class Contender:
    """A strategy (or eager) in the race: its compiles and a fixed cost, in seconds.

    ``compile_s`` lists each compile in the stream (its first call minus that request's
    steady-state latency); ``fixed_s`` is anything measured once that is not resampled (the
    eager first request of ``eager-then-compile``, replacing its steady-state price).
    """

    name: str
    compile_s: Sequence[float] = ()
    fixed_s: float = 0.0
    fixed_requests: Sequence[int] = ()  # requests whose steady-state price fixed_s replaces


@dataclass(frozen=True)
class Settle:
    """How sure the recommendation is, and what would settle it when it is not."""

    confidence: float
    leaders: tuple[str, ...]
    p_best: dict[str, float] = field(default_factory=dict)
    advice: str = ""

    @property
    def sure(self) -> bool:
        """Whether the confidence reaches :data:`SURE`."""
        return self.confidence >= SURE


def _window_means(win: Window, idx: np.ndarray | None) -> dict[str, np.ndarray]:
    """Column means of a window: one value (idx None) or one per replicate row of idx."""
    n = win.rounds
    out: dict[str, np.ndarray] = {}
    for name, values in win.columns.items():
        arr = np.asarray(values[:n], dtype=float)
        out[name] = np.array([arr.mean()]) if idx is None else arr[idx].mean(axis=1)
    return out


def _prices(windows: Sequence[Window], names: Sequence[str],
            idx: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
    """Per-call price (ms) of each name at one shape, per replicate (see the module doc)."""
    means = [_window_means(w, i) for w, i in zip(windows, idx, strict=True)]
    weights = np.array([w.rounds for w in windows], dtype=float)
    eager = np.stack([m[EAGER] for m in means])  # windows × replicates
    pooled = (weights[:, None] * eager).sum(axis=0) / weights.sum()
    out: dict[str, np.ndarray] = {EAGER: pooled}
    for name in names:
        if name == EAGER:
            continue
        ratios = [m[name] / m[EAGER] * w for m, w in zip(means, weights, strict=True)
                  if name in m]
        wsum = sum(w for m, w in zip(means, weights, strict=True) if name in m)
        if ratios:
            out[name] = np.sum(ratios, axis=0) / wsum * pooled
    return out


def _usable(windows: Sequence[Window]) -> list[Window]:
    return [w for w in windows if EAGER in w.columns and w.rounds > 0]


def price(windows: Sequence[Window]) -> dict[str, float]:
    """Each column's per-call price (ms) at one shape, comparable across windows."""
    usable = _usable(windows)
    if not usable:
        return {}
    names = sorted({n for w in usable for n in w.columns})
    return {k: float(v[0]) for k, v in _prices(usable, names, [None] * len(usable)).items()}


def totals(shapes: Sequence[Sequence[Window]], counts: Sequence[int],
           contenders: Sequence[Contender]) -> dict[str, float]:
    """Each contender's stream total (s): Σ count × price + compiles + fixed costs."""
    out = _totals(shapes, counts, contenders, None, None)
    return {k: float(v[0]) for k, v in out.items()}


def _totals(shapes: Sequence[Sequence[Window]], counts: Sequence[int],
            contenders: Sequence[Contender], rng: np.random.Generator | None,
            reps: int | None, parts: dict[str, np.ndarray] | None = None
            ) -> dict[str, np.ndarray]:
    names = [c.name for c in contenders]
    width = 1 if reps is None else reps
    steady = {n: np.zeros(width) for n in names}
    for windows, count in zip(shapes, counts, strict=True):
        if not count:
            continue
        usable = _usable(windows)
        if not usable:
            for n in names:
                steady[n] = steady[n] + math.nan
            continue
        idx = [None if rng is None else rng.integers(0, w.rounds, size=(width, w.rounds))
               for w in usable]
        prices = _prices(usable, names, idx)
        for n in names:
            steady[n] = steady[n] + count * prices.get(n, np.full(width, math.nan)) / 1000.0
    out: dict[str, np.ndarray] = {}
    for c in contenders:
        comp = np.asarray(c.compile_s, dtype=float)
        if comp.size == 0:
            compiles = np.zeros(width)
        elif rng is None or comp.size == 1:
            compiles = np.full(width, comp.sum())
        else:
            compiles = comp[rng.integers(0, comp.size, size=(width, comp.size))].sum(axis=1)
        out[c.name] = steady[c.name] + compiles + c.fixed_s
        if parts is not None:
            parts[c.name + ":steady"] = steady[c.name]
            parts[c.name + ":compile"] = compiles
    return out


def _fixed_price_correction(shapes: Sequence[Sequence[Window]], ids: Sequence[int],
                            c: Contender) -> float:
    """Seconds to remove for requests whose price ``fixed_s`` replaces (point estimate)."""
    if not c.fixed_requests:
        return 0.0
    prices = [price(w).get(c.name, math.nan) for w in shapes]
    return sum(prices[ids[r]] for r in c.fixed_requests if 0 <= r < len(ids)) / 1000.0


def confidence(shapes: Sequence[Sequence[Window]], ids: Sequence[int],
               contenders: Sequence[Contender], best: str, rounds: int | None = None,
               replicates: int = REPLICATES, seed: int = 0) -> Settle:
    """The probability that ``best`` has the least total, and what would settle it.

    ``shapes[i]`` holds the windows of shape ``i``; ``ids`` is the stream (request → shape).
    ``rounds`` is the current repeat count (for the advice); default: the longest window.
    """
    counts = [0] * len(shapes)
    for i in ids:
        counts[i] += 1
    adjusted = [Contender(c.name, c.compile_s,
                          c.fixed_s - _fixed_price_correction(shapes, ids, c))
                for c in contenders]
    if len(adjusted) < 2:
        return Settle(1.0, (best,), {best: 1.0})
    rng = np.random.default_rng(seed)
    parts: dict[str, np.ndarray] = {}
    boot = _totals(shapes, counts, adjusted, rng, replicates, parts)
    names = [c.name for c in adjusted]
    matrix = np.stack([boot[n] for n in names])  # contenders × replicates
    matrix = np.where(np.isfinite(matrix), matrix, np.inf)
    winners = matrix.argmin(axis=0)
    p_best = {n: float(np.mean(winners == k)) for k, n in enumerate(names)}
    conf = p_best.get(best, 0.0)
    point = totals(shapes, counts, adjusted)
    ranked = sorted((n for n in names if math.isfinite(point[n])), key=lambda n: point[n])
    runner = next((n for n in ranked if n != best), None)
    if runner is None:
        return Settle(conf, (best,), p_best)
    leaders = (best, *(n for n in ranked if n != best and p_best[n] >= 1 - SURE))
    if len(leaders) < 2:
        leaders = (best, runner)
    advice = "" if conf >= SURE else _advice(parts, best, runner, point, counts, rounds or
                                             max((w.rounds for ws in shapes for w in ws),
                                                 default=0), len(ids))
    return Settle(conf, leaders, p_best, advice)


def _advice(parts: dict[str, np.ndarray], best: str, runner: str, point: dict[str, float],
            counts: Sequence[int], rounds: int, requests: int) -> str:
    """What would settle a close call: more repeats, or a longer stream."""
    d_steady = parts[runner + ":steady"] - parts[best + ":steady"]
    d_compile = parts[runner + ":compile"] - parts[best + ":compile"]
    sd_steady, sd_compile = float(np.std(d_steady)), float(np.std(d_compile))
    gap = point[runner] - point[best]
    if sd_steady >= sd_compile and rounds > 0:
        # the spread of a mean falls as 1/sqrt(n): repeats for the gap to stand Z_SURE sds out
        sd = math.hypot(sd_steady, sd_compile)
        need = rounds * (Z_SURE * sd / abs(gap)) ** 2 if gap else math.inf
        more = f"--repeat {min(1000, max(rounds + 1, math.ceil(need)))}" if math.isfinite(need) \
            else "many more repeats"
        return f"more repeats would settle it ({more}; now {rounds})"
    per_request_ms = float(np.mean(d_steady)) / max(requests, 1) * 1000.0
    if abs(per_request_ms) > 1e-9:
        faster = best if per_request_ms > 0 else runner
        need = math.ceil(Z_SURE * sd_compile / (abs(per_request_ms) / 1000.0))
        said = f"their compile times are the noise; {faster} serves {abs(per_request_ms):.3g} " \
               "ms faster per request, which decides on "
        if need > requests:
            return f"{said}a stream of about {need:,} requests (a longer stream, or --requests)"
        # the estimate says this stream should already decide, and the bootstrap says it did
        # not: no number then (it read "about 161 requests" for a stream of 160)
        return f"{said}a longer stream than these {requests:,} requests (or --requests)"
    return "their compile times are the noise and they serve at the same speed: either will do"


def reason(settle: Settle) -> str:
    """The recommendation's words about how sure it is (empty when sure).

    It names the leaders with each one's own chance of the least total, never a bare
    "confidence": the recommendation line carries the recommended strategy's, and a second
    number under the same name (the noise's point best's, where the simplest leader was
    picked) read as two confidences in one line (round 34).
    """
    if settle.sure or len(settle.leaders) < 2:
        return ""
    text = f"{', '.join(settle.leaders)} are within noise of each other ({chances(settle)})"
    return f"{text}; {settle.advice}" if settle.advice else text


def chances(settle: Settle) -> str:
    """Each leader's chance of the least total: ``a 0.52, b 0.36``, said as what it is."""
    return "each one's chance of the least total: " + ", ".join(
        f"{n} {settle.p_best.get(n, 0.0):.2f}" for n in settle.leaders)

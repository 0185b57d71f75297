"""The changes computed from raw samples of the variations both runs measured (docs/compare.md).

For each *matched variation* (same index and input shapes in both runs):

- compiled latency: the ratio of medians new/base; the change is their geometric mean minus 1,
  and base/new are the geometric means of those medians (so base→new and the change agree).
  The p-value is a two-sided stratified Mann-Whitney U test
  (:func:`dyncli.stats.stratified_mann_whitney_p`): new samples against base ones within each
  variation, so shapes of different cost are never compared with each other;
- eager latency, the same way: the machine's probe for this pair (:mod:`.machine`);
- the speedup's p-value, on the per-call ratios eager[i]/compiled[i] (the interleaved pairs).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from dyncli.compare.load import Record
from dyncli.compare.result import Change, Driver


@dataclass
class Latency:
    """What the samples say about one pair."""

    change: float | None = None
    p_value: float | None = None
    speed_p: float | None = None
    note: str = ""
    base_ms: float | None = None  # geometric mean of the matched variations' medians
    new_ms: float | None = None
    driver: Driver | None = None
    eager: Change | None = None  # eager's medians, the same way


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _shape_text(shape: str) -> str:
    """``{"0": [8, 32]}`` -> ``[8, 32]``; several inputs joined by ``,``."""
    try:
        value = json.loads(shape)
    except ValueError:
        return shape
    if isinstance(value, dict):
        return ", ".join(json.dumps(v) for v in value.values())
    return json.dumps(value)


def _eager(rb: Record, rn: Record, keys: list[str]) -> Change | None:
    """Eager's change over the matched variations with eager samples on both sides."""
    from statistics import median

    from dyncli.stats import stratified_mann_whitney_p

    pairs = [(rb.variations[k].eager, rn.variations[k].eager) for k in keys
             if len(rb.variations[k].eager) >= 2 and len(rn.variations[k].eager) >= 2]
    meds = [(median(b), median(n)) for b, n in pairs]
    if not meds or any(not (b > 0 and n > 0) for b, n in meds):
        return None
    base, new = _geomean([b for b, _ in meds]), _geomean([n for _, n in meds])
    p = stratified_mann_whitney_p(pairs)
    return Change(base, new, new / base - 1.0, None if p != p else p)


def latency(rb: Record, rn: Record) -> Latency:
    """Latency change, its p, the speedup p, eager's change and a note, from the raw samples."""
    from statistics import median

    from dyncli.stats import mann_whitney_p, stratified_mann_whitney_p

    keys = [k for k in rb.variations if k in rn.variations
            and len(rb.variations[k].compiled) >= 2 and len(rn.variations[k].compiled) >= 2]
    if not keys:
        if not (rb.has_samples and rn.has_samples):
            return Latency()
        # different shape plans: pool all samples of each side (a coarser test)
        pooled_b = [x for v in rb.variations.values() for x in v.compiled]
        pooled_n = [x for v in rn.variations.values() for x in v.compiled]
        mb, mn = median(pooled_b), median(pooled_n)
        ratio = mn / mb - 1.0 if mb > 0 else None
        return Latency(ratio, mann_whitney_p(pooled_b, pooled_n), None,
                       "no variation of the same shape in both runs: latency samples pooled",
                       mb if mb > 0 else None, mn if mb > 0 else None)
    medians: list[tuple[str, float, float]] = []
    samples: list[tuple[list[float], list[float]]] = []
    speed: list[tuple[list[float], list[float]]] = []
    for k in keys:
        vb, vn = rb.variations[k], rn.variations[k]
        mb = median(vb.compiled)
        if not mb > 0:
            continue
        medians.append((k, mb, median(vn.compiled)))
        samples.append((vb.compiled, vn.compiled))
        # interleaved calls: eager[i] and compiled[i] saw the same moment of the machine
        speed.append(([e / c for e, c in zip(vb.eager, vb.compiled, strict=False) if c > 0],
                      [e / c for e, c in zip(vn.eager, vn.compiled, strict=False) if c > 0]))
    if not medians or any(not n > 0 for _, _, n in medians):
        return Latency()
    speed_p = stratified_mann_whitney_p(speed)
    base_ms = _geomean([b for _, b, _ in medians])
    new_ms = _geomean([n for _, _, n in medians])
    driver = None
    if len(medians) > 1:
        k, b, n = max(medians, key=lambda m: abs(math.log(m[2] / m[1])))
        index = k.split(":", 1)[0]
        driver = Driver(f"{index} {_shape_text(rb.variations[k].shape)}", b, n)
    # geomean(new)/geomean(base) is the geometric mean of the per-variation ratios
    return Latency(new_ms / base_ms - 1.0, stratified_mann_whitney_p(samples),
                   None if speed_p != speed_p else speed_p, "", base_ms, new_ms, driver,
                   _eager(rb, rn, [k for k, _, _ in medians]))

"""Statistics over timing samples and speedups. Pure: numpy and scipy, never torch.

The p-value is from the two-sided Mann-Whitney U test (``scipy.stats.mannwhitneyu``) on the
raw eager and compiled samples of one variation: the null hypothesis is that a compiled call
time is as likely to be above an eager one as below. It makes no normality assumption, which
suits latency samples with their long right tail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dyncli.stats import mann_whitney_p

NAN = float("nan")


@dataclass(frozen=True)
class Summary:
    """Median, min, max, (population) std and geometric mean of a list of values."""

    median: float
    min: float
    max: float
    std: float
    geomean: float
    count: int

    def as_dict(self) -> dict[str, float]:
        """The five numbers of the JSON ``speedup`` object."""
        return {"median": self.median, "min": self.min, "max": self.max,
                "std": self.std, "geomean": self.geomean}


def median(values: Sequence[float]) -> float:
    """Median, NaN for no values."""
    return float(np.median(values)) if len(values) else NAN


def finite_median(values: Sequence[float]) -> float:
    """Median of the finite values (NaN, inf and failed variations dropped); NaN for none."""
    return median([v for v in values if math.isfinite(v)])


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values; NaN if empty or any value is not positive."""
    if not values or any(not (v > 0) for v in values):
        return NAN
    return float(math.exp(sum(math.log(v) for v in values) / len(values)))


def summarize(values: Sequence[float]) -> Summary:
    """Summary of finite values (NaNs, e.g. from failed variations, are dropped)."""
    clean = [float(v) for v in values if v == v and math.isfinite(v)]
    if not clean:
        return Summary(NAN, NAN, NAN, NAN, NAN, 0)
    arr = np.asarray(clean)
    return Summary(float(np.median(arr)), float(arr.min()), float(arr.max()),
                   float(arr.std()), geomean(clean), len(clean))


def speedup(eager_samples: Sequence[float], compiled_samples: Sequence[float]) -> float:
    """median eager / median compiled; NaN when either side is missing or zero."""
    e, c = median(eager_samples), median(compiled_samples)
    if not (e == e and c == c) or c <= 0:
        return NAN
    return e / c


def p_value(eager_samples: Sequence[float], compiled_samples: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value for "compiled times differ from eager times".

    NaN when a side has fewer than 2 samples. Identical samples (e.g. a coarse clock) give 1.0.
    The test itself is :func:`dyncli.stats.mann_whitney_p`, shared with ``dyncli compare``.
    """
    return mann_whitney_p(eager_samples, compiled_samples)

"""Significance tests shared by bench (eager vs compiled) and compare (base vs new run).

Pure Python around scipy, imported when a test runs: ``dyncli compare`` reads files on
machines without torch, and this module (unlike ``dyncli.bench``) loads without it.
"""

from __future__ import annotations

from collections.abc import Sequence

NAN = float("nan")


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value for "the values of ``a`` and ``b`` differ in location".

    The null hypothesis is that a value of ``b`` is as likely to be above a value of ``a`` as
    below: no normality assumption, which suits latency samples and their long right tail.
    NaN when a side has fewer than 2 values; identical values (a coarse clock) give 1.0.
    """
    if len(a) < 2 or len(b) < 2:
        return NAN
    from scipy.stats import mannwhitneyu

    if len(set(a) | set(b)) == 1:
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def stratified_mann_whitney_p(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
    """Two-sided p-value that ``b`` values differ from ``a`` values within strata, pooled.

    The van Elteren form of the Mann-Whitney U test: one U per stratum (each pair of samples
    of the same input shape), compared only within it, summed, and the sum's normal
    approximation tested. Comparing across strata (a batch of 4 against a batch of 16) would
    only add noise. One stratum is the plain (exact for small samples) test of
    :func:`mann_whitney_p`. NaN when no stratum has 2 values a side.
    """
    usable = [(a, b) for a, b in strata if len(a) >= 2 and len(b) >= 2]
    if not usable:
        return NAN
    if len(usable) == 1:
        return mann_whitney_p(*usable[0])
    import math

    excess = variance = 0.0
    for a, b in usable:
        n, m = len(a), len(b)
        u = sum((y > x) + 0.5 * (y == x) for y in b for x in a)
        excess += u - n * m / 2
        variance += n * m * (n + m + 1) / 12
    return math.erfc(abs(excess) / math.sqrt(2 * variance))

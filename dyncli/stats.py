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

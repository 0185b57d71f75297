"""The shared significance tests (dyncli.stats): plain and stratified Mann-Whitney U."""

from __future__ import annotations

import math
import random

import pytest

from dyncli.stats import mann_whitney_p, stratified_mann_whitney_p


def _noisy(rng: random.Random, centre: float, n: int) -> list[float]:
    return [centre * rng.lognormvariate(0, 0.3) for _ in range(n)]


def test_identical_strata_give_1_and_too_few_samples_nan() -> None:
    a = [1.0, 1.2, 0.9, 1.1]
    assert stratified_mann_whitney_p([(a, a), (a, a)]) == pytest.approx(1.0)
    assert math.isnan(stratified_mann_whitney_p([([1.0], [2.0, 3.0])]))
    assert math.isnan(stratified_mann_whitney_p([]))


def test_one_stratum_is_the_plain_test() -> None:
    a, b = [1.0, 1.1, 1.2, 0.9, 1.05], [1.3, 1.4, 1.5, 1.6, 1.35]
    assert stratified_mann_whitney_p([(a, b)]) == mann_whitney_p(a, b)


def test_strata_of_different_cost_are_not_compared_with_each_other() -> None:
    # four shapes whose costs differ 10x; within each, new is 1.5x base under 30% noise
    rng = random.Random(3)
    strata = []
    for centre in (1.0, 3.0, 10.0, 30.0):
        base = _noisy(rng, centre, 5)
        strata.append((base, [x * 1.5 for x in _noisy(rng, centre, 5)]))
    stratified = stratified_mann_whitney_p(strata)
    pooled = mann_whitney_p([x for a, _ in strata for x in a], [y for _, b in strata for y in b])
    assert stratified < 0.01 < pooled


def test_same_distribution_is_not_significant() -> None:
    rng = random.Random(7)
    strata = [(_noisy(rng, c, 10), _noisy(rng, c, 10)) for c in (1.0, 2.0, 4.0)]
    assert stratified_mann_whitney_p(strata) > 0.05

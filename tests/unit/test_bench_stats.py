"""Statistics of the benchmark (pure, no torch)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from dyncli.bench.core.stats import geomean, median, p_value, speedup, summarize


def test_median_and_speedup() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert math.isnan(median([]))
    assert speedup([2.0, 2.0, 4.0], [1.0, 1.0, 1.0]) == 2.0
    assert math.isnan(speedup([], [1.0]))
    assert math.isnan(speedup([1.0], [0.0]))


def test_geomean() -> None:
    assert geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert geomean([2.0, 2.0, 2.0]) == pytest.approx(2.0)
    assert math.isnan(geomean([]))
    assert math.isnan(geomean([1.0, 0.0]))


def test_summarize_drops_nan_and_computes_all_five() -> None:
    s = summarize([1.0, 2.0, 4.0, float("nan")])
    assert s.count == 3
    assert s.median == 2.0
    assert (s.min, s.max) == (1.0, 4.0)
    assert s.std == pytest.approx(math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 3))
    assert s.geomean == pytest.approx(2.0)
    assert set(s.as_dict()) == {"median", "min", "max", "std", "geomean"}
    empty = summarize([])
    assert empty.count == 0 and math.isnan(empty.median)


def test_p_value_separates_different_samples() -> None:
    eager = [10.0 + 0.01 * i for i in range(10)]
    compiled = [5.0 + 0.01 * i for i in range(10)]
    assert p_value(eager, compiled) < 0.001
    # identical distributions: not significant
    assert p_value(eager, list(reversed(eager))) > 0.5


def test_p_value_edge_cases() -> None:
    assert math.isnan(p_value([1.0], [1.0, 2.0]))
    assert p_value([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]) == 1.0


def test_pure_modules_never_import_torch() -> None:
    """Stats, shapes, timing, the result and its renderer work on a machine without torch."""
    code = ("import sys, dyncli.bench.core.stats, dyncli.bench.core.shapes, dyncli.bench.timing, "
            "dyncli.bench.core.result, dyncli.bench.render, dyncli.commands.bench; "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0

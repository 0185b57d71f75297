"""Variation generation and batch/sequence dim detection (pure, no torch)."""

from __future__ import annotations

import numpy as np
import pytest

from dyncli.bench.core.shapes import (
    MIN_SIZE,
    DimPlan,
    Variation,
    detect_dims,
    generate_sizes,
    plan_variations,
    size_range,
    varied_shape,
)


def test_size_range_is_spread_around_base_and_clamped() -> None:
    assert size_range(10, 0.2) == (8, 12)
    assert size_range(32, 0.2) == (25, 39)
    assert size_range(2, 0.2) == (MIN_SIZE, 3)  # 1.6 floors to 1, clamped to 2
    assert size_range(1, 0.5) == (2, 2)


@pytest.mark.parametrize(("base", "spread"), [(32, 0.2), (8, 0.25), (100, 0.1)])
def test_sizes_start_with_base_stay_in_range_and_are_distinct(base: int, spread: float) -> None:
    sizes = generate_sizes(base, 5, spread, np.random.default_rng(0))
    lo, hi = size_range(base, spread)
    assert sizes[0] == base
    assert len(sizes) == 5
    assert len(set(sizes)) == 5
    assert all(lo <= s <= hi for s in sizes)


def test_small_range_uses_every_value_then_repeats() -> None:
    sizes = generate_sizes(4, 8, 0.2, np.random.default_rng(1))  # range 3..5: two others
    assert sizes[0] == 4
    assert set(sizes[1:3]) == {3, 5}
    assert len(sizes) == 8
    assert set(sizes) <= {3, 4, 5}


def test_never_generates_zero_or_one() -> None:
    for seed in range(20):
        sizes = generate_sizes(2, 6, 0.9, np.random.default_rng(seed))
        assert min(sizes) >= MIN_SIZE


def test_base_of_one_is_kept_others_start_at_two() -> None:
    sizes = generate_sizes(1, 3, 0.5, np.random.default_rng(0))
    assert sizes == [1, 2, 2]


def test_zero_spread_repeats_base() -> None:
    assert generate_sizes(8, 3, 0.0, np.random.default_rng(0)) == [8, 8, 8]


def test_seeded_and_reproducible_but_seed_matters() -> None:
    a = plan_variations(32, 8, 0.2, seed=0)
    b = plan_variations(32, 8, 0.2, seed=0)
    c = plan_variations(32, 8, 0.2, seed=1)
    assert a == b
    assert [v.batch_size for v in a] != [v.batch_size for v in c]


def test_variations_are_different_draws_not_a_reseeded_repeat() -> None:
    # The harness bug: reseeding inside the loop made every "variation" the same batch.
    sizes = [v.batch_size for v in plan_variations(64, 8, 0.2, seed=3)]
    assert len(set(sizes)) == 8


def test_plan_batch_and_seq() -> None:
    plan = plan_variations(4, 6, 0.2, seed=0, vary=("batch", "seq"), base_seq=32)
    assert plan[0] == Variation(0, 4, 32)
    assert [v.index for v in plan] == list(range(6))
    assert all(25 <= v.seq_len <= 39 for v in plan if v.seq_len is not None)
    assert len({v.seq_len for v in plan}) == 6
    seq_only = plan_variations(4, 3, 0.2, seed=0, vary=("seq",), base_seq=32)
    assert {v.batch_size for v in seq_only} == {4}


def test_plan_rejects_bad_vary() -> None:
    with pytest.raises(ValueError, match="unknown vary"):
        plan_variations(4, 3, 0.2, seed=0, vary=("time",))
    with pytest.raises(ValueError, match="sequence length"):
        plan_variations(4, 3, 0.2, seed=0, vary=("seq",))


def test_detect_every_dim_equal_to_batch() -> None:
    plan = detect_dims({"0": (8, 16), "1": (16, 8), "2": (5,)}, batch_size=8)
    assert plan.batch == {"0": (0,), "1": (1,)}
    assert plan.warnings == ()


def test_detect_ambiguous_dims_takes_first_and_warns() -> None:
    plan = detect_dims({"0": (3, 3, 224, 224)}, batch_size=3)
    assert plan.batch == {"0": (0,)}
    assert "dims [0, 1]" in plan.warnings[0]


def test_detect_with_batch_dim_override() -> None:
    plan = detect_dims({"x": (10, 4, 7), "y": (10, 5)}, batch_size=4, batch_dim=1)
    assert plan.batch == {"x": (1,)}
    assert "not the batch size" in plan.warnings[0]
    neg = detect_dims({"x": (10, 4)}, batch_size=4, batch_dim=-1)
    assert neg.batch == {"x": (1,)}


def test_detect_no_batch_dim_warns() -> None:
    plan = detect_dims({"x": (10, 5)}, batch_size=4)
    assert plan.batch == {}
    assert "not varied" in plan.warnings[-1]


def test_a_batch_dim_no_input_has_is_named() -> None:
    # `--batch-dim 5` on a (4, 16) input said "no input has a dim equal to the batch size 4",
    # which dim 0 is
    plan = detect_dims({"0": (4, 16)}, batch_size=4, batch_dim=5)
    assert plan.batch == {}
    assert plan.warnings == ("--batch-dim 5: no input has a dim 5 (input 0 (4, 16)); "
                             "the batch is not varied",)


def test_detect_sequence_dims_excluding_batch() -> None:
    plan = detect_dims({"input_ids": (4, 32), "attention_mask": (4, 32), "labels": (4,)},
                       batch_size=4, seq_len=32)
    assert plan.batch == {"input_ids": (0,), "attention_mask": (0,), "labels": (0,)}
    assert plan.seq == {"input_ids": (1,), "attention_mask": (1,)}


def test_varied_shape() -> None:
    dims = DimPlan(batch={"x": (0,)}, seq={"x": (1,)})
    assert varied_shape((4, 32, 8), dims.batch["x"], dims.seq["x"], Variation(1, 5, 30)) == (5, 30, 8)
    assert varied_shape((4, 32), (0,), (), Variation(1, 6, None)) == (6, 32)

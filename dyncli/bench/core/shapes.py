"""Which input dims to vary, and the seeded list of sizes to vary them to. Pure: no torch.

Sizes 0 and 1 are never generated: torch.compile specializes a dim of size 0 or 1 (it
never becomes symbolic), so a "variation" to 1 would measure a specialization, not dynamic
shapes. Every varied size is clamped to at least ``MIN_SIZE`` (2). A *base* size of 1 is kept
as given (it is what the user asked for) and the other variations are drawn from 2 upward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_SIZE = 2
VARY_CHOICES = ("batch", "seq")


@dataclass(frozen=True)
class Variation:
    """One point of the plan: the batch size and (for sequence models) the sequence length."""

    index: int
    batch_size: int
    seq_len: int | None = None


@dataclass(frozen=True)
class DimPlan:
    """For every input (by position or keyword name), the dims that are batch and sequence."""

    batch: dict[str, tuple[int, ...]]
    seq: dict[str, tuple[int, ...]]
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, dict[str, list[int]]]:
        """The ``dims`` object of the bench document."""
        return {"batch": {k: list(v) for k, v in self.batch.items()},
                "seq": {k: list(v) for k, v in self.seq.items()}}


def size_range(base: int, spread: float) -> tuple[int, int]:
    """Inclusive integer range ``[base*(1-spread), base*(1+spread)]``, clamped to >= MIN_SIZE."""
    if base < 1:
        raise ValueError(f"base size must be >= 1, got {base}")
    if not 0 <= spread < 1:
        raise ValueError(f"spread must be in [0, 1), got {spread}")
    lo = max(MIN_SIZE, math.floor(base * (1 - spread)))
    hi = max(lo, math.ceil(base * (1 + spread)))
    return lo, hi


def generate_sizes(base: int, count: int, spread: float, rng: np.random.Generator) -> list[int]:
    """``count`` sizes, ``base`` first, the rest uniform in :func:`size_range`.

    Distinct sizes are preferred: when the range holds enough values other than the base they
    are drawn without replacement; otherwise every other value is used once (in random order)
    and the remainder drawn with replacement, so small bases still get ``count`` variations.
    """
    if count < 1:
        raise ValueError(f"need at least one variation, got {count}")
    lo, hi = size_range(base, spread)
    others = [s for s in range(lo, hi + 1) if s != base]
    need = count - 1
    if need == 0:
        return [base]
    if not others:
        return [base] * count
    if len(others) >= need:
        picked = rng.choice(others, size=need, replace=False)
        return [base, *(int(s) for s in picked)]
    first = [int(s) for s in rng.permutation(others)]
    extra = [int(s) for s in rng.choice(others, size=need - len(first), replace=True)]
    return [base, *first, *extra]


def plan_variations(
    base_batch: int,
    count: int,
    spread: float,
    seed: int,
    vary: Sequence[str] = ("batch",),
    base_seq: int | None = None,
) -> list[Variation]:
    """The variations to run, in order, from a seeded RNG of their own (``numpy`` PCG64).

    The RNG is created once here and never reseeded, so every variation is a different draw.
    Variation 0 is always the base shape. With ``vary=("batch", "seq")`` both dims are drawn
    independently for each variation.
    """
    unknown = [v for v in vary if v not in VARY_CHOICES]
    if unknown:
        raise ValueError(f"unknown vary choice(s) {unknown}; expected {VARY_CHOICES}")
    if "seq" in vary and base_seq is None:
        raise ValueError("vary=seq needs a sequence length (the model has no sequence dim)")
    rng = np.random.default_rng(seed)
    batches = (generate_sizes(base_batch, count, spread, rng) if "batch" in vary
               else [base_batch] * count)
    if "seq" in vary and base_seq is not None:
        seqs: list[int | None] = list(generate_sizes(base_seq, count, spread, rng))
    else:
        seqs = [base_seq] * count
    return [Variation(i, b, s) for i, (b, s) in enumerate(zip(batches, seqs, strict=True))]


def matching_dims(shape: Sequence[int], size: int) -> tuple[int, ...]:
    """Every dim of ``shape`` equal to ``size``."""
    return tuple(d for d, s in enumerate(shape) if s == size)


def detect_dims(
    shapes: dict[str, tuple[int, ...]],
    batch_size: int,
    batch_dim: int | None = None,
    seq_len: int | None = None,
) -> DimPlan:
    """Find the batch (and sequence) dims of every input from its shape.

    Default rule: a dim whose size equals the batch size is a batch dim. When one tensor has
    several matching dims (a batch of 3 RGB images: ``(3, 3, 224, 224)``) only the first is
    taken and a warning says so — pick another ``--batch-size`` or give ``--batch-dim``.
    With ``batch_dim`` that dim is the batch dim of every input that has it; inputs whose size
    there differs from the batch size are left alone (with a warning). Sequence dims are dims
    equal to ``seq_len`` that are not batch dims.
    """
    warnings: list[str] = []
    batch: dict[str, tuple[int, ...]] = {}
    seq: dict[str, tuple[int, ...]] = {}
    for name, shape in shapes.items():
        if batch_dim is not None:
            d = batch_dim if batch_dim >= 0 else len(shape) + batch_dim
            if 0 <= d < len(shape) and shape[d] == batch_size:
                batch[name] = (d,)
            elif 0 <= d < len(shape):
                warnings.append(f"input {name} {tuple(shape)}: dim {batch_dim} is {shape[d]}, "
                                f"not the batch size {batch_size}; not varied")
            bdims = batch.get(name, ())
        else:
            found = matching_dims(shape, batch_size)
            if len(found) > 1:
                warnings.append(f"input {name} {tuple(shape)}: dims {list(found)} all equal the "
                                f"batch size {batch_size}; varying dim {found[0]} only "
                                "(use --batch-dim or another --batch-size)")
                found = found[:1]
            if found:
                batch[name] = found
            bdims = found
        if seq_len is not None:
            sdims = tuple(d for d in matching_dims(shape, seq_len) if d not in bdims)
            if sdims:
                seq[name] = sdims
    if not batch and batch_dim is not None and not any(
            -len(shape) <= batch_dim < len(shape) for shape in shapes.values()):
        # not "no dim equals the batch size": the dim asked for does not exist
        warnings.append(f"--batch-dim {batch_dim}: no input has a dim {batch_dim} ("
                        + ", ".join(f"input {n} {tuple(sh)}" for n, sh in list(shapes.items())[:4])
                        + "); the batch is not varied")
    elif not batch:
        warnings.append(f"no input has a dim equal to the batch size {batch_size}; "
                        "the batch is not varied")
    return DimPlan(batch=batch, seq=seq, warnings=tuple(warnings))


def varied_shape(shape: Sequence[int], batch_dims: Sequence[int], seq_dims: Sequence[int],
                 variation: Variation) -> tuple[int, ...]:
    """``shape`` with its batch dims set to the variation's batch size (and seq dims likewise)."""
    out = list(shape)
    for d in batch_dims:
        out[d] = variation.batch_size
    if variation.seq_len is not None:
        for d in seq_dims:
            out[d] = variation.seq_len
    return tuple(out)

"""Fresh inputs for each variation, with the right kind of data, from one seeded generator.

Floats are ``randn``, token ids are uniform within ``[low, high)`` (the vocabulary for HF
models), masks are ones and token-type ids zeros. One ``torch.Generator`` is seeded once per
benchmark and drawn from in plan order — never reseeded inside a loop, so every variation
gets new data. Each strategy then gets its own *clone* of the same inputs (so marks such as
``maybe_mark_dynamic`` never leak from one strategy's tensors into another's), and eager and
compiled calls of a strategy receive the very same tensor objects.
"""

from __future__ import annotations

from typing import Any

from dyncli.bench.core.shapes import DimPlan, Variation, varied_shape
from dyncli.bench.models import Built, InputKind

FLOAT_DTYPES = ("float16", "bfloat16")


def named_shapes(built: Built) -> dict[str, tuple[int, ...]]:
    """Shapes of the tensor inputs, by name (positional inputs are "0", "1", …)."""
    import torch

    named = {str(i): a for i, a in enumerate(built.args)} | built.kwargs
    return {k: tuple(v.shape) for k, v in named.items() if isinstance(v, torch.Tensor)}


def _make(kind: InputKind, shape: tuple[int, ...], like: Any, gen: Any) -> Any:
    import torch

    if kind.kind == "float":
        return torch.randn(shape, generator=gen, dtype=like.dtype)
    if kind.kind == "mask":
        return torch.ones(shape, dtype=like.dtype)
    if kind.kind == "zeros":
        return torch.zeros(shape, dtype=like.dtype)
    return torch.randint(kind.low, max(kind.high, kind.low + 1), shape, generator=gen,
                         dtype=like.dtype)


def make_inputs(built: Built, dims: DimPlan, variation: Variation, gen: Any,
                dtype: str, device: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Inputs of the variation's shape: new data for every tensor, other inputs as given."""
    import torch

    def one(name: str, value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        shape = varied_shape(value.shape, dims.batch.get(name, ()), dims.seq.get(name, ()),
                             variation)
        kind = built.kinds.get(name, InputKind("float"))
        t = _make(kind, shape, value, gen)
        if t.is_floating_point() and dtype in FLOAT_DTYPES:
            t = t.to(getattr(torch, dtype))
        return t.to(device)

    args = tuple(one(str(i), a) for i, a in enumerate(built.args))
    kwargs = {k: one(k, v) for k, v in built.kwargs.items()}
    return args, kwargs


def input_bytes(built: Built, dims: DimPlan, variation: Variation, dtype: str) -> int:
    """Bytes the variation's tensor inputs will take, worked out before any is made."""
    import math

    import torch

    total = 0
    named = {str(i): a for i, a in enumerate(built.args)} | built.kwargs
    for name, value in named.items():
        if not isinstance(value, torch.Tensor):
            continue
        shape = varied_shape(value.shape, dims.batch.get(name, ()), dims.seq.get(name, ()),
                             variation)
        size = value.element_size()
        if value.is_floating_point() and dtype in FLOAT_DTYPES:
            size = 2
        total += math.prod(shape) * size
    return total


def clone_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                          dict[str, Any]]:
    """Deep-enough copy: every tensor cloned (a new object with the same data)."""
    import torch

    def c(v: Any) -> Any:
        return v.clone() if isinstance(v, torch.Tensor) else v

    return tuple(c(a) for a in args), {k: c(v) for k, v in kwargs.items()}


def batch_of(args: tuple[Any, ...], kwargs: dict[str, Any], dims: DimPlan) -> int | None:
    """The batch size the inputs actually carry (read from the first batch dim)."""
    named = {str(i): a for i, a in enumerate(args)} | kwargs
    for name, ds in dims.batch.items():
        if ds and name in named:
            return int(named[name].shape[ds[0]])
    return None


def shapes_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, list[int]]:
    """Shapes of the tensor inputs, for the report."""
    import torch

    named = {str(i): a for i, a in enumerate(args)} | kwargs
    return {k: list(v.shape) for k, v in named.items() if isinstance(v, torch.Tensor)}

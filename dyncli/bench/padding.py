"""What a padding plan needs from the model, learned once per benchmark. Needs torch.

The padding itself happens in :mod:`dyncli.bench.served` (inside every compiled call, as a
server does it per request, so its cost is in the timings): batch dims are padded with zeros
(token ids with the pad id, masks with 0) and, for hf models, sequence dims with the pad id and
a zero attention mask, so the real rows and tokens see exactly what they would unpadded. Here:

- :func:`fills`: each input's pad value;
- :func:`layout`: per output tensor, which dim is the batch and which the sequence — read from
  eager outputs at two sizes, so the outputs are cut back exactly (a hidden size equal to the
  padded length is not mistaken for it);
- :func:`varied`: the kinds of dim the stream varies (a dim that never changes is not padded:
  padding a constant batch of 4 up to 8 would only waste work);
- :func:`target`: the bucket a variation ran at, for the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dyncli.bench import served
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.result import PadTarget
from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.harness import Harness
from dyncli.bench.models import Built


def pad_id(built: Built) -> int:
    """The token id used for padding: the hf config's ``pad_token_id``, else 0."""
    config = getattr(built.model, "config", None)
    value = getattr(config, "pad_token_id", None)
    return int(value) if isinstance(value, int) else 0


def fills(built: Built, dims: DimPlan) -> dict[str, int]:
    """The pad value of every input with a padded dim: the pad id for token ids, else 0."""
    pid = pad_id(built)
    return {name: pid if (k := built.kinds.get(name)) is not None and k.kind == "ids" else 0
            for name in set(dims.batch) | set(dims.seq)}


def varied(variations: Sequence[Variation]) -> tuple[str, ...]:
    """The kinds of dim (``batch``, ``seq``) whose size changes across ``variations``."""
    return tuple(kind for kind, sizes in (("batch", {v.batch_size for v in variations}),
                                          ("seq", {v.seq_len for v in variations}))
                 if len(sizes) > 1)


def layout(h: Harness, kinds: tuple[str, ...]) -> tuple[tuple[int | None, int | None], ...]:
    """Per tensor of the eager output, its (batch dim, sequence dim), from two sizes of each kind.

    A dim is the batch when its size equals the input batch at the smallest and at the largest
    batch of the stream (and likewise the sequence); the first such dim wins. Two eager calls
    per varied kind.
    """
    import torch

    from dyncli.bench.accuracy import flatten

    found: dict[str, list[int | None]] = {}
    for kind in kinds:
        attr = "batch_size" if kind == "batch" else "seq_len"
        ends = sorted(h.plan, key=lambda v: getattr(v, attr) or 0)
        pair = [ends[0], ends[-1]]
        shapes = []
        for v in pair:
            out = h.step(h.model, h.args(v.index))()
            shapes.append([tuple(t.shape) for t in flatten(out) if isinstance(t, torch.Tensor)])
        sizes = [getattr(v, attr) for v in pair]
        found[kind] = [next((d for d in range(len(a))
                             if len(a) == len(b) and a[d] == sizes[0] and b[d] == sizes[1]), None)
                       for a, b in zip(*shapes, strict=False)]
    n = max((len(v) for v in found.values()), default=0)
    return tuple((_at(found.get("batch"), i), _at(found.get("seq"), i)) for i in range(n))


def _at(xs: list[int | None] | None, i: int) -> int | None:
    return xs[i] if xs is not None and i < len(xs) else None


def target(plan: Plan, inputs: tuple[tuple[Any, ...], dict[str, Any]]) -> PadTarget:
    """The sizes a call with ``inputs`` runs at under ``plan`` (the report's ``padded_to``)."""
    spec = plan.as_dict()
    real, to = served.pad_target(spec, *inputs)
    buckets = plan.pad_buckets() or []  # the pad row's buckets, or the capture sizes
    unpadded = any(served.bucket(real[k], buckets) is None for k in plan.pad_dims if k in real)
    return PadTarget(to.get("batch"), to.get("seq"), unpadded=unpadded)

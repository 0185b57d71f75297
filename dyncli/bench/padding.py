"""The ``pad`` strategy's inputs and outputs: pad up to a bucket, slice the answer back.

Batch dims are padded with zeros (token ids with the pad id, masks with 0) and, for hf
models, sequence dims with the pad id and a zero attention mask, so the real rows and tokens
see exactly what they would unpadded. Outputs are sliced back to the real batch (the first dim
equal to the padded batch) and the real sequence (the next dim equal to the padded length),
so the accuracy check compares the real rows only. Padding happens inside every compiled call,
as a server would do it per request, so its cost is in the timings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dyncli.bench.core.cost import bucket_of
from dyncli.bench.core.result import PadTarget
from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.models import Built


def target(variation: Variation, buckets: list[int] | None, dims: DimPlan,
           varies: tuple[bool, bool] = (True, True)) -> PadTarget:
    """The bucket of the variation's batch (and sequence, when the inputs have one).

    ``varies`` says whether (batch, seq) change across the stream: a dim that never changes
    is left as it is (padding a constant batch of 4 up to 8 would only waste work).
    """
    pad_b, pad_s = dims.batch and varies[0], dims.seq and varies[1]
    b = bucket_of(variation.batch_size, buckets) if pad_b else variation.batch_size
    s = variation.seq_len
    if s is not None and pad_s:
        s = bucket_of(s, buckets)
    if b is None or (variation.seq_len is not None and pad_s and s is None):
        return PadTarget(variation.batch_size, variation.seq_len, unpadded=True)
    return PadTarget(b, s)


def pad_id(built: Built) -> int:
    """The token id used for padding: the hf config's ``pad_token_id``, else 0."""
    config = getattr(built.model, "config", None)
    value = getattr(config, "pad_token_id", None)
    return int(value) if isinstance(value, int) else 0


def _pad_tensor(t: Any, bdims: tuple[int, ...], sdims: tuple[int, ...], to: PadTarget,
                fill: int) -> Any:
    shape = list(t.shape)
    for d in bdims:
        if to.batch is not None:
            shape[d] = max(shape[d], to.batch)
    for d in sdims:
        if to.seq is not None:
            shape[d] = max(shape[d], to.seq)
    if shape == list(t.shape):
        return t
    out = t.new_full(shape, fill)
    out[tuple(slice(0, n) for n in t.shape)] = t
    return out


def padder(built: Built, dims: DimPlan, to: PadTarget) -> Callable[..., tuple[tuple[Any, ...],
                                                                            dict[str, Any]]]:
    """A function padding ``(args, kwargs)`` of one variation up to ``to``."""
    import torch

    pid = pad_id(built)

    def fill_of(name: str) -> int:
        kind = built.kinds.get(name)
        return pid if kind is not None and kind.kind == "ids" else 0

    def one(name: str, value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        return _pad_tensor(value, dims.batch.get(name, ()), dims.seq.get(name, ()), to,
                           fill_of(name))

    def pad(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                   dict[str, Any]]:
        return (tuple(one(str(i), a) for i, a in enumerate(args)),
                {k: one(k, v) for k, v in kwargs.items()})
    return pad


def slice_output(out: Any, real: Variation, to: PadTarget,
                 expected: list[tuple[int, ...]] | None = None) -> Any:
    """The output with padded dims cut back to the real sizes.

    With ``expected`` (the tensor shapes of the eager output on the real inputs, in
    :func:`~dyncli.bench.accuracy.flatten` order) every dim that differs is cut to its
    expected size: exact, whatever the layout. Without it, the first dim equal to the padded
    batch and the next equal to the padded length are cut (ambiguous when, say, the hidden
    size equals the padded length, hence ``expected`` whenever the runner has it).
    """
    import torch

    leaf = [0]

    def cut(t: torch.Tensor) -> torch.Tensor:
        i = leaf[0]
        leaf[0] += 1
        if expected is not None and i < len(expected) and len(expected[i]) == t.dim():
            return t[tuple(slice(0, n) for n in expected[i])]
        index: list[slice] = [slice(None)] * t.dim()
        done_batch = to.batch is None or to.batch == real.batch_size
        done_seq = to.seq is None or real.seq_len is None or to.seq == real.seq_len
        for d, n in enumerate(t.shape):
            if not done_batch and n == to.batch:
                index[d], done_batch = slice(0, real.batch_size), True
            elif not done_seq and n == to.seq and real.seq_len is not None:
                index[d], done_seq = slice(0, real.seq_len), True
        return t[tuple(index)]

    def walk(obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            return cut(obj)
        if isinstance(obj, dict):  # hf ModelOutput too: a plain dict keeps its key order
            return {k: walk(obj[k]) for k in obj}
        if isinstance(obj, tuple):
            return tuple(walk(o) for o in obj)
        if isinstance(obj, list):
            return [walk(o) for o in obj]
        return obj
    return walk(out)


class PaddedModel:
    """``compiled`` wrapped so each call pads its inputs and slices the outputs back."""

    def __init__(self, compiled: Any, built: Built, dims: DimPlan, real: Variation,
                 to: PadTarget) -> None:
        self._compiled, self._real, self._to = compiled, real, to
        self._pad = padder(built, dims, to)
        self._expected: list[tuple[int, ...]] | None = None

    def expect(self, reference: Any) -> None:
        """Slice to the shapes of this eager output (on the real inputs) from now on."""
        import torch

        from dyncli.bench.accuracy import flatten

        self._expected = [tuple(t.shape) for t in flatten(reference)
                          if isinstance(t, torch.Tensor)]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        a, k = self._pad(args, kwargs)
        return slice_output(self._compiled(*a, **k), self._real, self._to, self._expected)

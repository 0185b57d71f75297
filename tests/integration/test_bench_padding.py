"""The pad strategy's padding and slicing, with real torch and no compile (fast)."""

from __future__ import annotations

import torch

from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.models import Built, InputKind
from dyncli.bench.padding import PaddedModel, PadTarget, padder, slice_output, target

DIMS = DimPlan(batch={"input_ids": (0,), "attention_mask": (0,)},
               seq={"input_ids": (1,), "attention_mask": (1,)})


def _built() -> Built:
    kinds = {"input_ids": InputKind("ids", 0, 100), "attention_mask": InputKind("mask")}
    return Built("hf:X", "hf", torch.nn.Identity(), (), {}, 2, 5, kinds)


def test_targets_follow_buckets_and_varying_dims() -> None:
    v = Variation(0, 3, 5)
    assert target(v, [4, 8], DIMS) == PadTarget(4, 8)
    assert target(v, [4, 8], DIMS, varies=(False, True)) == PadTarget(3, 8)
    assert target(Variation(0, 9, 5), [4, 8], DIMS) == PadTarget(9, 5, unpadded=True)
    assert target(Variation(0, 0, None), None, DIMS) == PadTarget(1, None)


def test_padding_uses_pad_id_and_zero_mask() -> None:
    ids = torch.randint(1, 100, (3, 5))
    mask = torch.ones(3, 5, dtype=torch.long)
    _, kw = padder(_built(), DIMS, PadTarget(4, 8))((), {"input_ids": ids, "attention_mask": mask})
    assert kw["input_ids"].shape == (4, 8) and kw["attention_mask"].shape == (4, 8)
    assert torch.equal(kw["input_ids"][:3, :5], ids)
    assert int(kw["input_ids"][3].abs().sum()) == 0 and int(kw["input_ids"][:, 5:].sum()) == 0
    assert int(kw["attention_mask"].sum()) == 15  # only the real tokens are attended


def test_slicing_follows_the_eager_shapes_when_known() -> None:
    real, to = Variation(0, 3, 5), PadTarget(4, 8)
    out = {"last_hidden_state": torch.zeros(4, 8, 8), "pooler_output": torch.zeros(4, 8)}
    # without the eager shapes the hidden size 8 == padded length is ambiguous
    guessed = slice_output(out, real, to)
    assert guessed["pooler_output"].shape == (3, 5)
    exact = slice_output(out, real, to, [(3, 5, 8), (3, 8)])
    assert exact["last_hidden_state"].shape == (3, 5, 8) and exact["pooler_output"].shape == (3, 8)


def test_padded_model_pads_calls_and_slices_back() -> None:
    seen: list[tuple[int, ...]] = []

    def model(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        seen.append(tuple(input_ids.shape))
        return (input_ids * attention_mask).float().unsqueeze(-1).repeat(1, 1, 2)

    ids = torch.randint(1, 100, (3, 5))
    mask = torch.ones(3, 5, dtype=torch.long)
    wrapped = PaddedModel(model, _built(), DIMS, Variation(0, 3, 5), PadTarget(4, 8))
    wrapped.expect(model(ids, mask))
    out = wrapped(input_ids=ids, attention_mask=mask)
    assert seen[-1] == (4, 8)
    assert torch.equal(out, model(ids, mask))

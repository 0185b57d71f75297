"""The pad strategy's padding and cutting, with real torch and no compile (fast).

The padding is :mod:`dyncli.bench.served`'s, the code bench measures with and ``--emit python``
writes; what it needs from the model (fill values, which output dim is which) is
:mod:`dyncli.bench.padding`'s.
"""

from __future__ import annotations

import torch

from dyncli.bench import padding, served
from dyncli.bench.core.apply import Plan, from_dims
from dyncli.bench.core.result import PadTarget
from dyncli.bench.core.shapes import DimPlan, Variation
from dyncli.bench.models import Built, InputKind

DIMS = DimPlan(batch={"input_ids": (0,), "attention_mask": (0,)},
               seq={"input_ids": (1,), "attention_mask": (1,)})


def _built() -> Built:
    kinds = {"input_ids": InputKind("ids", 0, 100), "attention_mask": InputKind("mask")}
    return Built("hf:X", "hf", torch.nn.Identity(), (), {}, 2, 5, kinds)


def _plan(buckets: tuple[int, ...] | None = (4, 8), kinds: tuple[str, ...] = ("batch", "seq"),
          layout: tuple[tuple[int | None, int | None], ...] | None = None) -> Plan:
    fills = padding.fills(_built(), DIMS) | {"input_ids": 7}
    return Plan("pad", inputs=from_dims(DIMS.batch, DIMS.seq, fills), buckets=buckets,
                pad_dims=kinds, pad_outputs=layout)


def _inputs(b: int, s: int) -> tuple[tuple[()], dict[str, torch.Tensor]]:
    return (), {"input_ids": torch.randint(1, 100, (b, s)),
                "attention_mask": torch.ones(b, s, dtype=torch.long)}


def test_targets_follow_buckets_and_varying_dims() -> None:
    assert padding.target(_plan(), _inputs(3, 5)) == PadTarget(4, 8)
    assert padding.target(_plan(kinds=("seq",)), _inputs(3, 5)) == PadTarget(3, 8)
    assert padding.target(_plan(), _inputs(9, 5)) == PadTarget(9, 5, unpadded=True)
    assert padding.target(_plan(None), _inputs(0, 3)) == PadTarget(1, 4)
    assert padding.varied([Variation(0, 3, 5), Variation(1, 3, 6)]) == ("seq",)


def test_padding_uses_the_fill_value_and_a_zero_mask() -> None:
    args, kwargs = _inputs(3, 5)
    spec = _plan().as_dict()
    real, to = served.pad_target(spec, args, kwargs)
    assert real == {"batch": 3, "seq": 5} and to == {"batch": 4, "seq": 8}
    _, kw = served.pad(spec, args, kwargs, to)
    ids = kwargs["input_ids"]
    assert kw["input_ids"].shape == (4, 8) and kw["attention_mask"].shape == (4, 8)
    assert torch.equal(kw["input_ids"][:3, :5], ids)
    assert int((kw["input_ids"][3] != 7).sum()) == 0
    assert int((kw["input_ids"][:, 5:] != 7).sum()) == 0
    assert int(kw["attention_mask"].sum()) == 15  # only the real tokens are attended


def test_cutting_follows_the_learned_layout() -> None:
    real, to = {"batch": 3, "seq": 5}, {"batch": 4, "seq": 8}
    out = {"last_hidden_state": torch.zeros(4, 8, 8), "pooler_output": torch.zeros(4, 8)}
    # without the layout the hidden size 8 == padded length is ambiguous
    guessed = served.cut(out, real, to)
    assert guessed["pooler_output"].shape == (3, 5)
    exact = served.cut(out, real, to, [[0, 1], [0, None]])
    assert exact["last_hidden_state"].shape == (3, 5, 8) and exact["pooler_output"].shape == (3, 8)


class _Hf(torch.nn.Module):
    """Outputs shaped as a BERT's: (B, S, H) and a pooled (B, H), with H == 8."""

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict:
        h = (input_ids * attention_mask).float().unsqueeze(-1).repeat(1, 1, 8)
        return {"last_hidden_state": h, "pooler_output": h[:, 0]}


def test_layout_is_learned_from_eager_outputs_at_two_sizes() -> None:
    from dyncli.bench.harness import Harness
    from dyncli.config import BenchConfig

    built = Built("x", "file", _Hf(), (), _inputs(3, 5)[1], 3, 5, _built().kinds)
    plan = [Variation(0, 3, 5), Variation(1, 6, 8)]  # seq 8 == the hidden size at the top
    h = Harness.create(BenchConfig(device="cpu"), built, "cpu", DIMS, plan, 0)
    assert padding.layout(h, ("batch", "seq")) == ((0, 1), (0, None))


def test_the_served_wrapper_pads_calls_and_cuts_back() -> None:
    seen: list[tuple[int, ...]] = []

    def model(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        seen.append(tuple(input_ids.shape))
        return (input_ids * attention_mask).float().unsqueeze(-1).repeat(1, 1, 2)

    wrapped = served.wrap(model, _plan(layout=((0, 1),)).as_dict())
    _, kwargs = _inputs(3, 5)
    out = wrapped(**kwargs)
    assert seen[-1] == (4, 8)
    assert torch.equal(out, model(**kwargs))

"""Which input bench builds for an hf model (round 35): the class's main_input_name, where its
forward takes it by name or through **kwargs with nothing else required. No torch: the
classes here stand for transformers' by their signatures."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from dyncli.bench.models import _main_input
from dyncli.errors import ModelError


def _params(cls: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(cls.forward.__get__(object())).parameters)


class KwargsOnly:  # transformers 5 style: everything through **kwargs
    main_input_name = "input_features"

    def forward(self, **kwargs: Any) -> None: ...


class VisionTower:  # inherits input_ids from PreTrainedModel; needs its own inputs
    main_input_name = "input_ids"

    def forward(self, hidden_states: Any, grid_thw: Any, **kwargs: Any) -> None: ...


class Waveform:
    main_input_name = "input_values"

    def forward(self, input_values: Any = None, attention_mask: Any = None) -> None: ...


class TimeSeries:
    main_input_name = "past_values"

    def forward(self, past_values: Any, **kwargs: Any) -> None: ...


def test_the_main_input_is_taken_by_name_or_through_kwargs() -> None:
    assert _main_input(Waveform, "Waveform", _params(Waveform)) == "input_values"
    assert _main_input(KwargsOnly, "KwargsOnly", _params(KwargsOnly)) == "input_features"


@pytest.mark.parametrize(
    ("cls", "said"),
    [
        (
            VisionTower,
            "hf:VisionTower: bench cannot build its input input_ids: its forward takes "
            "hidden_states, not its main input input_ids",
        ),
        (
            TimeSeries,
            "hf:TimeSeries: bench cannot build its input past_values: bench builds "
            "input_ids, pixel_values, input_values, input_features only",
        ),
    ],
)
def test_an_input_bench_cannot_build_is_one_error_naming_model_and_input(
    cls: type, said: str
) -> None:
    with pytest.raises(ModelError) as e:
        _main_input(cls, cls.__name__, _params(cls))
    assert str(e.value) == said

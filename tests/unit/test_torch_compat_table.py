"""torch_compat's torch-free half: versions, the strategy table and its wording (no torch)."""

from __future__ import annotations

import pytest

from dyncli.bench import torch_compat
from dyncli.config import STRATEGIES


def test_versions_parse_as_torch_writes_them() -> None:
    assert torch_compat.parse("2.11.0+cu130") == (2, 11)
    assert torch_compat.parse("2.4.1") == (2, 4)
    assert torch_compat.parse("2.16.0.dev20260101+cpu") == (2, 16)
    assert torch_compat.parse("unknown") is None


def test_the_table_names_strategies_bench_has_and_releases_after_the_oldest() -> None:
    assert set(torch_compat.NEEDS_TORCH) <= set(STRATEGIES)
    assert all(v > torch_compat.OLDEST for v in torch_compat.NEEDS_TORCH.values())
    assert torch_compat.needs("static") == torch_compat.OLDEST


@pytest.mark.parametrize(("strategy", "version", "why"), [
    ("unbacked", "2.5.1", "unbacked: needs torch >= 2.6 (this is torch 2.5;"),
    ("unbacked", "2.6.0", None),
    ("sources", (2, 6), "sources: needs torch >= 2.7 (this is torch 2.6;"),
    ("collectives", "2.4.1+cu121", "collectives: needs torch >= 2.5"),
    ("static", "2.4.1", None),
    ("pgo", "not a version", None),  # what bench cannot read it does not refuse
])
def test_a_strategy_too_new_for_the_torch_says_which_release_it_needs(
        strategy: str, version: str | tuple[int, int], why: str | None) -> None:
    got = torch_compat.strategy_unsupported(strategy, version)
    if why is None:
        assert got is None
    else:
        assert got is not None and got.startswith(why)


def test_the_recompile_limit_is_named_as_that_release_names_it() -> None:
    assert torch_compat.recompile_limit_setting("2.6.0") == "torch._dynamo.config.cache_size_limit"
    assert torch_compat.recompile_limit_setting("2.7.1") == "torch._dynamo.config.recompile_limit"
    assert torch_compat.recompile_limit_setting("2.15.0") == "torch._dynamo.config.recompile_limit"

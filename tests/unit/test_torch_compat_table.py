"""torch_compat's torch-free half: versions, the oldest release and the limit's name (no torch)."""

from __future__ import annotations

from dyncli.bench import torch_compat
from dyncli.bench.core import strategy as table


def test_versions_parse_as_torch_writes_them() -> None:
    assert torch_compat.parse("2.11.0+cu130") == (2, 11)
    assert torch_compat.parse("2.4.1") == (2, 4)
    assert torch_compat.parse("2.16.0.dev20260101+cpu") == (2, 16)
    assert torch_compat.parse("unknown") is None


def test_every_row_needs_the_oldest_release_or_a_later_one() -> None:
    for row in table.TABLE:
        if row.needs_torch is not None:
            assert table.release(row.needs_torch) > torch_compat.OLDEST, row.name


def test_a_strategy_too_new_for_a_torch_says_which_release_it_needs() -> None:
    assert torch_compat.strategy_unsupported("unbacked", "2.5.1") == \
        "unbacked needs torch >= 2.6 (this is 2.5.1)"
    assert torch_compat.strategy_unsupported("unbacked", "2.6.0") is None
    assert torch_compat.strategy_unsupported("static", "2.4.1+cu121") is None


def test_the_recompile_limit_is_named_as_that_release_names_it() -> None:
    assert torch_compat.recompile_limit_setting("2.6.0") == "torch._dynamo.config.cache_size_limit"
    assert torch_compat.recompile_limit_setting("2.7.1") == "torch._dynamo.config.recompile_limit"
    assert torch_compat.recompile_limit_setting("2.15.0") == "torch._dynamo.config.recompile_limit"

"""The strategy table without torch: every fact about a strategy is its row's, and everything
that needs one reads it there (the option's choices, the checks, the simplicity order)."""

from __future__ import annotations

import dataclasses

import pytest

from dyncli import config
from dyncli.bench.core import recommend, settings
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.config import BenchConfig
from dyncli.errors import UsageError


def test_the_options_choices_are_the_tables_names() -> None:
    assert config.STRATEGIES == table.NAMES
    field = next(f for f in dataclasses.fields(BenchConfig) if f.name == "strategy")
    assert field.metadata["choices"] == table.NAMES
    assert "eager" not in table.NAMES and table.find("eager").compiles is False


def test_rows_are_consistent() -> None:
    names = [row.name for row in table.TABLE]
    assert len(set(names)) == len(names)
    assert len({row.simplicity for row in table.TABLE}) == len(table.TABLE)
    for row in table.TABLE:
        assert not (row.recommendable and row.needs_ranks), row.name  # a plan is one process
        assert {s.module for s in row.settings} <= {"dynamo", "compiler"}, row.name
        assert set(row.passes) <= {table.PROFILE, table.PRIME}, row.name
        assert not (row.passes and not row.one_process), row.name  # passes run in-process
    assert table.recommendable()[0] == "eager" and "collectives" not in table.recommendable()
    assert recommend.SIMPLEST[0] == "eager" and set(recommend.SIMPLEST) == set(names)


def test_simplest_follows_the_rows() -> None:
    assert table.simplest(["pgo", "static", "automatic"]) == "automatic"
    assert recommend.simplest(["pad", "unknown", "dynamic"]) == "dynamic"
    assert table.simplest(["unknown", "pgo"]) == "pgo"


def test_unknown_names_say_the_known() -> None:
    with pytest.raises(ValueError, match="unknown strategy 'stattic'; one of eager, static"):
        table.find("stattic")
    with pytest.raises(ValueError, match="unknown compile mode 'fast'"):
        table.mode("fast")
    with pytest.raises(ValueError, match="unknown compile mode"):
        Plan("static", compile_mode="fast")


@pytest.mark.parametrize(("name", "version", "mode", "device", "says"), [
    ("unbacked", "2.5.1", "default", "cpu", "needs torch >= 2.6 (this is 2.5.1)"),
    ("unbacked", "2.6.0+cu124", "default", "cpu", None),
    ("eager-then-compile", "2.12.0a0+git1234", "default", "cpu", None),
    ("static", "2.1.2", "default", "cpu", None),
    ("static", "2.15.0", "reduce-overhead", "cpu", "mode reduce-overhead: CUDA graphs need CUDA"),
    ("static", "2.15.0", "max-autotune", "cuda", None),
    ("static", "2.15.0", "max-autotune-no-cudagraphs", "cpu", None),
    ("pgo", "garbage", "default", "cpu", "needs torch >= 2.6 (this is garbage)"),
])
def test_unsupported_names_the_torch_or_device_a_row_needs(name: str, version: str, mode: str,
                                                          device: str, says: str | None) -> None:
    reason = table.unsupported(table.find(name), version, mode, device)
    assert reason == says or (says is not None and reason is not None and says in reason)


def test_the_checks_read_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new row that needs an allow-list, ranks or one process is checked as the old ones."""
    row = table.Strategy("sources-ranked", "sources across ranks", 12, settings=(
        table.Setting("compiler", "dynamic_sources", table.SOURCES),), needs_ranks=True,
        recommendable=False)
    alone = table.Strategy("alone", "one process only", 13, one_process=True)
    monkeypatch.setattr(table, "TABLE", (*table.TABLE, row, alone))
    with pytest.raises(UsageError, match="sources-ranked: no dynamic sources given"):
        settings.check(BenchConfig(strategy=["sources-ranked"]))
    with pytest.raises(UsageError, match="sources-ranked: needs ranks"):
        settings.check(BenchConfig(strategy=["sources-ranked"], dynamic_sources=["L['x']"]))
    with pytest.raises(UsageError, match="--sizes, alone run in one process only") as err:
        settings.check(BenchConfig(strategy=["alone"], nproc=2, sizes=[1, 2]), settings.flag_name)
    assert "or alone" in (err.value.hint or "")
    settings.check(BenchConfig(strategy=["sources-ranked"], dynamic_sources=["L['x']"], nproc=2))


def test_a_reason_does_not_repeat_the_strategys_name() -> None:
    """A run's ``error`` is printed after its label (``pad: not_applicable: …``): a reason
    that began with the name again read ``pad: not_applicable: pad: …`` (round 26)."""
    for row in table.TABLE:
        if row.needs_torch is not None:
            assert table.unsupported(row, "2.0.0") == f"needs torch >= {row.needs_torch} " \
                "(this is 2.0.0)", row.name
    static = Plan("static", compile_mode="reduce-overhead", capture_sizes=(8,))
    assert static.unsupported("2.15.0", "cuda") == (
        "static graphs have no size key, and torch runs them without CUDA graphs when capture "
        "sizes are set; capture sizes need a dynamic graph (automatic, dynamic, mark-dynamic)")

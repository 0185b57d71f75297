"""--requests-per-start: where a restarted process compiles, and at what cost."""

from __future__ import annotations

import pytest

from dyncli.bench.core import restarts
from dyncli.bench.core.cost import CompileEvent, cost

STREAM = [0, 1, 0, 2, 1, 3, 0, 2]  # shape ids


def test_one_process_reproduces_the_measured_events() -> None:
    measured = [CompileEvent(0, 5.0), CompileEvent(1, 6.0)]  # automatic: static, then dynamic
    got = restarts.restart_events(STREAM, measured, [5.0, 6.0], [1.0, 1.5], None)
    assert got == measured


def test_each_restart_compiles_warm_at_its_own_new_shapes() -> None:
    static = [CompileEvent(i, 4.0) for i in (0, 1, 3, 5)]  # every new shape compiles
    got = restarts.restart_events(STREAM, static, [4.0] * 4, [0.5] * 4, 4)
    # process 1 serves [0, 1, 0, 2]: new at 0, 1, 3; process 2 serves [1, 3, 0, 2]: all new
    assert [e.request for e in got] == [0, 1, 3, 4, 5, 6, 7]
    assert [e.seconds for e in got] == [4.0, 4.0, 4.0, 0.5, 0.5, 0.5, 0.5]
    warm = restarts.restart_events(STREAM, static, [4.0] * 4, [0.5] * 4, 4, start="warm")
    assert {e.seconds for e in warm} == {0.5}
    assert cost(STREAM, [1.0] * 4, warm).compile_s == pytest.approx(3.5)


def test_offsets_are_kept_for_a_compile_at_the_second_call() -> None:
    stream = [0, 0, 1, 1, 0, 0]
    etc = [CompileEvent(1, 3.0)]  # eager-then-compile: the second call compiles
    got = restarts.restart_events(stream, etc, [3.0], [1.0], 2)
    assert [(e.request, e.seconds) for e in got] == [(1, 3.0), (3, 1.0), (5, 1.0)]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        restarts.restart_events(STREAM, [], [], [], 0)
    with pytest.raises(ValueError):
        restarts.restart_events(STREAM, [], [], [], 3, start="tepid")

"""What bench does right after a compile, before the next timed call (settle_after_compile):
the compile's garbage is collected there and charged to the compile, on the measurement's side
and the replay's alike, not left to a later full collection inside some request (round 30: a
681 ms request of a GPT-2 replay held a 673 ms collection of the compile's garbage)."""

from __future__ import annotations

import gc
import weakref

import pytest

from dyncli.bench import compile_watch, torch_compat


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def no_pool(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """torch's compile-worker pool stands in: its wait is recorded, no torch is imported."""
    waits: list[float] = []
    monkeypatch.setattr(torch_compat, "wait_compile_workers", waits.append)
    return waits


def _cycle() -> weakref.ref[Node]:
    return weakref.ref(Node())


def test_the_compiles_garbage_is_collected_and_its_seconds_returned(no_pool: list[float]) -> None:
    gc.disable()  # no collection of its own between the garbage and the settle
    try:
        dead = [_cycle() for _ in range(1000)]
        assert all(r() is not None for r in dead)  # garbage, waiting for a collection
        gc.enable()
        spent = compile_watch.settle_after_compile(timeout=7.0)
    finally:
        gc.enable()
    assert all(r() is None for r in dead)
    assert no_pool == [7.0]  # the pool was waited for too, with the caller's timeout
    assert spent >= 0.0


def test_a_process_that_turned_the_collector_off_is_left_so(no_pool: list[float]) -> None:
    gc.disable()
    try:
        kept = [_cycle() for _ in range(100)]
        compile_watch.settle_after_compile()
        assert not gc.isenabled()  # the user's choice stays
        assert all(r() is not None for r in kept)  # such a server never pays the collection
    finally:
        gc.enable()
        gc.collect()


def test_a_pool_wait_that_raises_does_not_stop_the_collection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(timeout: float) -> None:
        raise RuntimeError("a private API moved")

    monkeypatch.setattr(torch_compat, "wait_compile_workers", broken)
    gc.disable()
    try:
        dead = [_cycle() for _ in range(10)]
        gc.enable()
        assert compile_watch.settle_after_compile() >= 0.0
    finally:
        gc.enable()
    assert all(r() is None for r in dead)

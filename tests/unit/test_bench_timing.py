"""Timing with fake clocks and a fake CUDA module: the sync/event order, interleaving."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dyncli.bench.timing import CpuClock, CudaClock, interleaved, timed


class FakeCuda:
    """Records every call; an event's time is the position of its record() in the log."""

    def __init__(self) -> None:
        self.log: list[str] = []
        cuda = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                assert enable_timing, "events must be created with enable_timing=True"
                self.at: int | None = None

            def record(self) -> None:
                cuda.log.append("record")
                self.at = len(cuda.log)

            def synchronize(self) -> None:
                cuda.log.append("event.synchronize")

            def elapsed_time(self, end: Any) -> float:
                cuda.log.append("elapsed_time")
                assert self.at is not None and end.at is not None
                return float(end.at - self.at)

        self.Event = Event

    def synchronize(self, device: Any = None) -> None:
        self.log.append("synchronize")


def test_cuda_clock_synchronizes_before_start_and_stop() -> None:
    fake = FakeCuda()
    clock = CudaClock(SimpleNamespace(cuda=fake), device="cuda")

    def work() -> str:
        fake.log.append("kernel")
        return "out"

    out, ms = timed(clock, work)
    assert out == "out"
    assert fake.log == ["synchronize", "synchronize", "record", "kernel", "record",
                        "event.synchronize", "synchronize", "elapsed_time"]
    # start.record is log position 3, end.record position 5
    assert ms == 2.0


def test_cpu_clock_uses_counter_in_ms() -> None:
    ticks = iter([1.0, 1.25])
    clock = CpuClock(counter=lambda: next(ticks))
    _, ms = timed(clock, lambda: None)
    assert ms == 250.0


def test_interleaved_alternates_sides_and_their_order_and_keeps_raw_samples() -> None:
    order: list[str] = []
    t = [0.0]

    def counter() -> float:
        return t[0]

    def eager() -> None:
        order.append("e")
        t[0] += 0.002

    def compiled() -> None:
        order.append("c")
        t[0] += 0.001

    samples = interleaved(CpuClock(counter), eager, compiled, repeat=3, wall=counter)
    # A B, B A, A B: neither side always runs right after the other
    assert order == ["e", "c", "c", "e", "e", "c"]
    assert [round(x, 6) for x in samples.eager_ms] == [2.0, 2.0, 2.0]
    assert [round(x, 6) for x in samples.compiled_ms] == [1.0, 1.0, 1.0]
    assert round(samples.model_ms, 6) == 9.0


def test_interleaved_with_fake_cuda_syncs_around_every_call() -> None:
    fake = FakeCuda()
    clock = CudaClock(SimpleNamespace(cuda=fake))
    samples = interleaved(clock, lambda: fake.log.append("eager"),
                          lambda: fake.log.append("compiled"), repeat=2)
    assert len(samples.eager_ms) == len(samples.compiled_ms) == 2
    for side in ("eager", "compiled"):
        for i, entry in enumerate(fake.log):
            if entry == side:
                assert fake.log[i - 2:i] == ["synchronize", "record"]
                assert fake.log[i + 1:i + 4] == ["record", "event.synchronize", "synchronize"]


def test_clean_reason_strips_compile_id_and_stack() -> None:
    from dyncli.bench.compile_watch import clean_reason

    assert clean_reason("0/1: tensor 'x' size mismatch at index 0. expected 8, actual 10") == \
        "tensor 'x' size mismatch at index 0. expected 8, actual 10"
    assert clean_reason("1/0_1: L['x'].size()[0] == 8\nUser stack trace:\n  file.py:3") == \
        "L['x'].size()[0] == 8"
    assert clean_reason("no prefix: here") == "no prefix: here"

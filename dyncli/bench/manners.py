"""How bench treats the device and torch around a benchmark (issue #32, "GPU manners").

- :func:`settle`: warm the device before the first timed window. A GPU's clocks and caches
  take a while to come up: on an H200 the first measured shape read ~20 % slow while every
  later one agreed with an independent timing within 1-3 %. Eager is called on one shape until
  its latency stops falling, within a bound of rounds and seconds. Torch-free: a
  :class:`~dyncli.bench.timing.Clock`, a callable and a wall clock, so tests drive it with fakes.
- :func:`manners`: the run's float32 matmul precision (``--matmul-precision``; restored after),
  and every warning torch (or the model's library) raises or logs during the run, caught and
  reported once each as dyncli's own line instead of torch's text on stderr.

Imports torch only inside :func:`manners`.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench import loops
from dyncli.bench.timing import Clock
from dyncli.logparse.safe import clip

SETTLE_TOLERANCE = 0.03  # the last SETTLE_RUNS readings within 3 % of each other
SETTLE_RUNS = 3
SETTLE_MAX_ROUNDS = 40
SETTLE_MAX_S = {"cuda": 20.0, "cpu": 1.0}  # a CPU barely warms; a busy one never settles


@dataclass
class Settled:
    """What warming the device took: readings (ms per call) until eager's latency settled."""

    readings_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    settled: bool = False
    loops: int = 1

    def as_dict(self) -> dict[str, Any]:
        """The ``device_warmup`` object of the bench document."""
        return {"rounds": len(self.readings_ms), "seconds": round(self.seconds, 4),
                "settled": self.settled, "loops": self.loops,
                "first_ms": self.readings_ms[0] if self.readings_ms else None,
                "last_ms": self.readings_ms[-1] if self.readings_ms else None}


def steady(readings: list[float], runs: int = SETTLE_RUNS,
           tolerance: float = SETTLE_TOLERANCE) -> bool:
    """Whether the last ``runs`` readings lie within ``tolerance`` of each other."""
    if len(readings) < runs:
        return False
    last = readings[-runs:]
    low = min(last)
    return low > 0 and max(last) / low - 1 <= tolerance


def settle(clock: Clock, fn: Callable[[], Any], *, max_rounds: int = SETTLE_MAX_ROUNDS,
           max_s: float = 3.0, runs: int = SETTLE_RUNS, tolerance: float = SETTLE_TOLERANCE,
           target_ms: float = loops.TARGET_MS,
           wall: Callable[[], float] = time.perf_counter) -> Settled:
    """Time ``fn`` (``target_ms`` per reading, loops calibrated once) until :func:`steady`.

    Stops at ``max_rounds`` readings or ``max_s`` wall seconds, whichever comes first, with
    ``settled`` False: a device that never settles is reported, not waited on forever.
    """
    t0 = wall()
    out = Settled(loops=loops.calibrate(clock, fn, target_ms))
    while len(out.readings_ms) < max_rounds:
        out.readings_ms.append(loops.timed_loops(clock, fn, out.loops))
        if steady(out.readings_ms, runs, tolerance):
            out.settled = True
            break
        if wall() - t0 >= max_s:
            break
    out.seconds = wall() - t0
    return out


# ---------------------------------------------------------------- torch's warnings

# What dyncli adds to a warning it recognizes (a substring of torch's text -> the advice).
ADVICE = {
    "TensorFloat32 tensor cores": "--matmul-precision high uses them (bench measured at the "
                                  "precision in environment.matmul_precision)",
}


def own_line(origin: str, text: str) -> str:
    """A caught warning as dyncli's one line: where it came from, its first line, advice."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = f"{origin} warned: {clip(first, 200)}"
    extra = next((a for k, a in ADVICE.items() if k in text), None)
    return f"{line} ({extra})" if extra else line


def _origin(filename: str) -> str:
    parts = filename.replace("\\", "/").split("/")
    if "site-packages" in parts:
        i = parts.index("site-packages")
        if i + 1 < len(parts):
            return parts[i + 1].removesuffix(".py")
    return "python"


class _Catch(logging.Filter):
    """On torch's stderr handlers: keep WARNING+ records for dyncli's lines, print nothing."""

    def __init__(self, sink: Callable[[str, str], None]) -> None:
        super().__init__()
        self.sink = sink

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        with suppress(Exception):  # a malformed record must never break the benchmark
            self.sink(record.name.split(".", 1)[0], record.getMessage())
        return False


def _to_stderr(h: logging.Handler) -> bool:
    """Whether ``h`` prints to the terminal: torch's ``StreamHandler`` (before 2.15), or 2.15's
    ``_StderrHandler``, a plain ``logging.Handler`` whose ``stream`` follows ``sys.stderr``.
    A ``TORCH_LOGS_OUT`` file (a ``FileHandler``) keeps its warnings."""
    if isinstance(h, logging.FileHandler):
        return False
    return isinstance(h, logging.StreamHandler) or getattr(h, "stream", None) is sys.stderr


def _torch_handlers() -> list[logging.Handler]:
    out: list[logging.Handler] = []
    for name in list(logging.root.manager.loggerDict):
        if name == "torch" or name.startswith("torch."):
            out += [h for h in logging.getLogger(name).handlers if _to_stderr(h)]
    return out


@contextmanager
def manners(precision: str | None, warn: Callable[[str], None]) -> Iterator[str]:
    """Apply ``precision`` (None: torch's own); yields the precision in force.

    Every warning raised (``warnings``) or logged at WARNING by torch during the block is
    reported through ``warn`` once per distinct text, after the block; torch's own printing of
    them is held back. The precision and the warning filters are restored on the way out.
    """
    import torch
    import torch._dynamo  # its loggers get torch's handlers at import

    seen: dict[str, None] = {}

    def sink(origin: str, text: str) -> None:
        seen.setdefault(own_line(origin, text), None)

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        sink(_origin(filename), str(message))

    before = torch.get_float32_matmul_precision()
    catch = _Catch(sink)
    handlers = _torch_handlers()
    for h in handlers:
        h.addFilter(catch)
    try:
        with warnings.catch_warnings():  # the filters stay the user's; only the printing moves
            warnings.showwarning = show
            if precision:
                torch.set_float32_matmul_precision(precision)
            try:
                yield torch.get_float32_matmul_precision()
            finally:
                # only what was set: torch reads an unset precision ("none", 2.9 on) as
                # "highest", and setting "highest" back sets "ieee", which no longer follows
                # torch.backends.fp32_precision and keys inductor's FX graph cache apart
                if precision:
                    torch.set_float32_matmul_precision(before)
    finally:
        for h in handlers:
            h.removeFilter(catch)
        for text in seen:
            warn(text)


# ---------------------------------------------------------------- the harness's warm-up


def warm_device(h: Any, order: list[int]) -> tuple[Settled, dict[int, float]]:
    """Before any timed window: eager settled on the first request's shape, then every other
    shape's first eager call in the process, timed (seconds, device synchronized).

    ``h`` is a :class:`~dyncli.bench.harness.Harness`; ``order`` the shapes in the order the
    stream first meets them. The first shape's first call is the process's first model call
    (start-up, not a new shape): it is not reported.
    """
    firsts: dict[int, float] = {}
    if not order:
        return Settled(), firsts
    limit = SETTLE_MAX_S["cuda" if str(h.device).startswith("cuda") else "cpu"]
    try:
        h.first_call(h.step(h.model, h.args(order[0])))
        done = settle(h.clock, h.step(h.model, h.args(order[0])), max_s=limit)
        for sid in order[1:]:
            firsts[sid] = h.first_call(h.step(h.model, h.args(sid)))[1]
    except Exception:  # a model that fails fails in its strategies, with a status
        return Settled(), {}
    return done, firsts

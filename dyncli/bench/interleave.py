"""Strategies side by side in one time window: the same-window timing and the interleaved replay.

Bench used to run one strategy after another, so its recommendation compared latencies and
compile seconds taken minutes apart (issue #18). Here every strategy keeps its own compiled
code alive at once, which ``torch._dynamo.reset()`` between strategies would destroy:

* each strategy compiles with ``torch.compile(..., isolate_recompiles=True)`` (torch >= 2.13,
  :func:`dyncli.bench.compiling.compile_plan`):
  its cache entries sit in their own bucket of every code object's cache, so one strategy's
  entries neither serve another's calls nor count against its ``recompile_limit``
  (``torch/_dynamo/cache_size.py`` counts entries per region); with a fresh backend object each,
  the backend guard keeps them apart too;
* between strategies only what the previous one learnt about sizes is cleared
  (:func:`dyncli.bench.compiling.forget_sizes`: automatic dynamic's ``CodeId``-keyed state in
  ``torch._dynamo.pgo``, and ``eager_then_compile``'s per-code ``dynamism``), not the compiled
  code.

``benchmarks/same_window.py`` checks both on torch 2.14.1 and 2.15.0: compile counts equal
those after a full reset; a round-robin pass afterwards compiles nothing; without isolation
``static`` hits the recompile limit after 5 of 8 sizes because ``dynamic``'s and
``automatic``'s entries count against it.

:class:`Slot` is one strategy's compile-time state — its inductor cache directory, its
automatic-dynamic state, the ``eager_then_compile`` stance's example inputs — swapped in and out
so that strategies can take turns through a replay in chunks (its torch config and stance are
applied by its plan on every call, :mod:`dyncli.bench.served`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench import caches, compiling, loops, torch_compat
from dyncli.bench.collector import FullCollections, Tally
from dyncli.bench.core import caches as core_caches
from dyncli.bench.core.confidence import EAGER, Window
from dyncli.bench.timing import Clock

REPLAY_CHUNKS = 20  # each strategy's replay is cut into about this many turns


@dataclass
class Kept:
    """One strategy's warmed compiled steps, one per shape, and its compile counter."""

    strategy: str
    steps: dict[int, Callable[[], Any]]
    compiles: Callable[[], int]


@dataclass
class WindowTiming:
    """What the same-window pass measured: per shape, one window over eager and strategies."""

    windows: dict[int, Window] = field(default_factory=dict)
    loops: dict[int, dict[str, int]] = field(default_factory=dict)
    late_compiles: dict[str, int] = field(default_factory=dict)
    # CUDA graphs recorded during the pass (``recordings`` given): per strategy and shape, by its
    # untimed calls (count, seconds); per shape, inside the timed rounds (count), where no
    # strategy can be told from another: those samples include a recording
    late_recordings: dict[str, dict[int, tuple[int, float]]] = field(default_factory=dict)
    timed_recordings: dict[int, int] = field(default_factory=dict)
    wall_s: float = 0.0
    # a strategy's call that raised, per strategy and shape: that strategy is left out of the
    # shape's window (its walk had passed there; the pass goes on with the others)
    errors: dict[str, dict[int, BaseException]] = field(default_factory=dict)


def same_window(clock: Clock, eager: dict[int, Callable[[], Any]], kept: Sequence[Kept],
                rounds: int, target_ms: float = loops.TARGET_MS,
                after_shape: Callable[[str], Any] | None = None,
                recordings: Callable[[], tuple[int, float]] | None = None) -> WindowTiming:
    """Per shape: ``rounds`` round-robin rounds over eager and every kept strategy.

    Each callable runs enough calls per sample to reach ``target_ms`` (:func:`loops.calibrate`,
    once per callable and shape); samples are per call. A compile during the pass (it should
    compile nothing: every shape was seen in the strategy's walk) is counted per strategy. A
    strategy whose call raises is left out of that shape's window (the rounds start again
    without it) and the exception kept in ``errors``; eager's raises.

    ``recordings`` reads the CUDA graphs recorded so far (count, seconds;
    :class:`~dyncli.bench.graph_watch.GraphWatch`): a shape served under a graph compiled for
    another size records its own graph here (torch's trees record per size), in the untimed
    calls before the rounds (counted per strategy) or, rarely, inside them (counted per shape).
    """
    out = WindowTiming()
    t0 = time.perf_counter()
    before = {k.strategy: k.compiles() for k in kept}
    for sid, eager_step in eager.items():
        fns: dict[str, Callable[[], Any]] = {EAGER: eager_step}
        fns.update({k.strategy: k.steps[sid] for k in kept if sid in k.steps})
        n: dict[str, int] = {}
        for name, fn in list(fns.items()):
            r0 = recordings() if recordings is not None else (0, 0.0)
            try:
                fn()  # one untimed call each: caches and allocator warm (a new size's warm-up)
                n[name] = loops.calibrate(clock, fn, target_ms)
            except Exception as e:
                if name == EAGER:
                    raise
                # round 34: unbacked's ViT graph, compiled at batch 2, served batch 1 in this
                # pass and inductor's stride assertion raised: a traceback ended the whole run
                out.errors.setdefault(name, {})[sid] = e
                del fns[name]
            if recordings is not None:
                _add_recordings(out.late_recordings, name, sid, r0, recordings())
        out.loops[sid] = n
        r0 = recordings() if recordings is not None else (0, 0.0)
        while True:
            try:
                samples = loops.round_robin(clock, fns, n, rounds)
                break
            except loops.Raised as r:  # the shape's window again, without it
                if r.name == EAGER:
                    raise r.error from None
                out.errors.setdefault(r.name, {})[sid] = r.error
                del fns[r.name], n[r.name]
        out.windows[sid] = Window(samples)
        grew = recordings()[0] - r0[0] if recordings is not None else 0
        if grew:
            out.timed_recordings[sid] = grew
        if after_shape is not None:  # e.g. a load reading, labelled by the shape
            after_shape(f"window {sid}")
    out.late_compiles = {k.strategy: k.compiles() - before[k.strategy] for k in kept}
    out.wall_s = time.perf_counter() - t0
    return out


def _add_recordings(into: dict[str, dict[int, tuple[int, float]]], name: str, sid: int,
                    r0: tuple[int, float], r1: tuple[int, float]) -> None:
    """The recordings between two readings, as ``name``'s at shape ``sid`` (none: nothing)."""
    if r1[0] > r0[0]:
        into.setdefault(name, {})[sid] = (r1[0] - r0[0], r1[1] - r0[1])


class Slot:
    """One strategy's compile-time state, swapped in for its turns of an interleaved replay.

    Its caches start where its measurement's started (:mod:`dyncli.bench.caches`): empty
    directories of its own (``fresh``), or the user's (``fresh=False``: nothing swapped).
    ``seed`` is a PGO state directory copied into the slot's empty inductor cache (``pgo``'s
    warm start).
    """

    def __init__(self, name: str, seed: Path | None = None, fresh: bool = True) -> None:
        self.name = name
        self.cache_dir: Path | None = None
        if fresh or seed is not None:
            self.cache_dir = caches.make_dir(name, seed, "replay")
        self._code_state: Any = None
        self._examples: Any = None
        self._dynamism: dict[int, Any] = {}

    @contextmanager
    def turn(self) -> Iterator[None]:
        """The strategy's cache dir, size memory and stance inputs, restored after."""
        saved_examples = torch_compat.stance_examples()
        try:
            compiling.forget_sizes()
            # None: loaded (pgo: the seed) at first use
            torch_compat.set_code_state(self._code_state)
            torch_compat.set_stance_examples(self._examples)
            compiling.give_dynamism(self._dynamism)
            try:
                with caches.pointed(self.cache_dir):
                    yield
            finally:
                self._code_state = torch_compat.code_state()
                self._examples = torch_compat.stance_examples()
                self._dynamism = compiling.take_dynamism()
        finally:
            compiling.forget_sizes()
            torch_compat.set_stance_examples(saved_examples)

    def close(self) -> None:
        """Remove the slot's cache directory (the user's is left alone)."""
        if self.cache_dir is not None:
            shutil.rmtree(self.cache_dir, ignore_errors=True)


@dataclass
class Player:
    """A strategy (``slot`` set) or eager (``slot`` None) in the interleaved replay."""

    name: str
    steps: dict[int, Callable[[], Any]]
    slot: Slot | None = None
    compiles: Callable[[], int] = lambda: 0
    settle: Callable[[], float] = lambda: 0.0
    measured_s: float = 0.0
    compile_s: float = 0.0  # the wall seconds of its requests that compiled
    error: str = ""
    replayed: int = 0
    cache_hits: dict[str, int] = field(default_factory=dict)  # over its own turns
    gc: Tally = field(default_factory=Tally)  # Python's full collections inside its requests


def replay_interleaved(ids: Sequence[int], players: Sequence[Player], clock: Clock,
                       chunk: int | None = None,
                       short_error: Callable[[BaseException], str] = repr,
                       hits: Callable[[], Mapping[str, int]] = dict) -> None:
    """Every player replays the whole stream in order, taking turns chunk by chunk.

    Turn order rotates from chunk to chunk. Only a player's own requests are timed (the slot
    switch is not), each to its result (the device synchronized after every request, as a
    server answers one before the next). A player that raises stops there with ``error``
    set; the others go on. One player with one chunk is the plain replay
    (:func:`dyncli.bench.passes.replay`). ``hits`` reads torch's cache-hit counters
    (:func:`dyncli.bench.caches.hits`): what they gain over a player's turn, outside its
    timing, is its ``cache_hits``. Python's full collections inside a player's timed requests
    are its ``gc`` (:mod:`dyncli.bench.collector`): part of its seconds, in no prediction.
    """
    n = len(ids)
    size = chunk or max(1, -(-n // REPLAY_CHUNKS))
    order = list(players)
    with FullCollections() as collections:
        _turns(ids, order, size, clock, short_error, hits, collections)


def _turns(ids: Sequence[int], order: list[Player], size: int, clock: Clock,
           short_error: Callable[[BaseException], str], hits: Callable[[], Mapping[str, int]],
           collections: FullCollections) -> None:
    """The chunks of :func:`replay_interleaved`, each player's requests watched for
    full collections."""
    n = len(ids)
    for c, start in enumerate(range(0, n, size)):
        k = c % len(order) if order else 0
        for p in order[k:] + order[:k]:
            if p.error:
                continue
            with ExitStack() as stack:
                if p.slot is not None:
                    stack.enter_context(p.slot.turn())
                hits0 = hits()
                with collections.watch(p.gc):
                    t0 = time.perf_counter()
                    try:
                        for sid in ids[start:start + size]:
                            before, t = p.compiles(), time.perf_counter()
                            p.steps[sid]()
                            if p.compiles() > before:
                                p.settle()
                                clock.synchronize()
                                p.compile_s += time.perf_counter() - t
                            clock.synchronize()  # a request is served when its result is ready
                            p.replayed += 1
                    except Exception as e:
                        p.error = short_error(e)
                    p.measured_s += time.perf_counter() - t0
                p.cache_hits = core_caches.total([p.cache_hits, core_caches.delta(hits0, hits())])

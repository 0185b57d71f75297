"""What a stream costs a service that restarts: ``--start warm`` and ``--requests-per-start``.

Pure: no torch. A restarted process loses its in-memory compiled code but, when the caches
are kept (inductor's FX graph and AOTAutograd caches on disk, PGO state, or artifacts saved
with ``torch.compiler.save_cache_artifacts()``), compiles again *warm*: dynamo still traces,
but the backend's work is a cache hit. bench measures both: ``cold`` seconds per compile in
the first process, ``warm`` seconds in a fresh process that starts from the caches the first
one left.

Where the compiles of a restarted process fall is placed from the measured stream: a compile
that happened when the stream had seen ``d`` distinct shapes, ``k`` requests after the ``d``-th
first appeared, happens in a process at the first request with the same ``(d, k)``. For every
strategy whose compiles come with new shapes (static, pad, automatic, dynamic, unbacked …)
that is the ``d``-th new shape of that process; eager-then-compile's compile at the second
call keeps its offset. Each process's ``j``-th compile costs the ``j``-th warm compile measured
(the median of the warm ones past the measured count); the first process is cold unless the
service starts warm.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dyncli.bench.core.cost import CompileEvent

STARTS = ("cold", "warm")


@dataclass(frozen=True)
class Placed:
    """A measured compile, placed by distinct shapes seen and the offset after the last new one."""

    distinct: int
    offset: int
    compiles: int


def _firsts(ids: Sequence[int]) -> list[int]:
    """For each request, how many distinct shapes the stream has seen up to and including it."""
    seen: set[int] = set()
    out = []
    for shape in ids:
        seen.add(shape)
        out.append(len(seen))
    return out


def place(ids: Sequence[int], events: Sequence[CompileEvent]) -> list[Placed]:
    """Measured compile events as ``(distinct shapes seen, offset)`` positions, in order."""
    seen = _firsts(ids)
    reached: dict[int, int] = {}
    for i, d in enumerate(seen):
        reached.setdefault(d, i)
    out = []
    for e in sorted(events, key=lambda e: e.request):
        if 0 <= e.request < len(ids):
            d = seen[e.request]
            out.append(Placed(d, e.request - reached[d], e.compiles))
    return out


def restart_events(ids: Sequence[int], measured: Sequence[CompileEvent],
                   cold_s: Sequence[float], warm_s: Sequence[float],
                   requests_per_start: int | None, start: str = "cold") -> list[CompileEvent]:
    """Compile events over the whole stream when a process serves ``requests_per_start`` each.

    ``measured`` are the first process's events (their positions); ``cold_s`` / ``warm_s``
    the seconds of the j-th compile of a cold / warm process. ``None`` requests per start:
    one process serves the whole stream.
    """
    if start not in STARTS:
        raise ValueError(f"start must be one of {', '.join(STARTS)}, got {start!r}")
    if requests_per_start is not None and requests_per_start < 1:
        raise ValueError("requests_per_start must be at least 1")
    n = len(ids)
    per = requests_per_start or max(n, 1)
    placed = place(ids, measured)
    out: list[CompileEvent] = []
    for k, begin in enumerate(range(0, n, per)):
        segment = ids[begin:begin + per]
        seconds = cold_s if (k == 0 and start == "cold") else warm_s
        fallback = statistics.median(seconds) if seconds else 0.0
        seen = _firsts(segment)
        reached: dict[int, int] = {}
        for i, d in enumerate(seen):
            reached.setdefault(d, i)
        for j, p in enumerate(placed):
            if p.distinct not in reached:
                continue
            at = reached[p.distinct] + p.offset
            if at >= len(segment):
                continue
            s = seconds[j] if j < len(seconds) else fallback
            out.append(CompileEvent(begin + at, s, p.compiles))
    return out

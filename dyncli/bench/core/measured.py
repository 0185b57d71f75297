"""How a benchmark's strategies were kept apart and timed, and what ran eagerly. No torch.

Strategies compiled in one process are kept apart by ``torch.compile(...,
isolate_recompiles=True)`` (torch 2.13 on): each strategy's cache entries sit in a region of
their own, so one strategy's entries neither serve another's calls nor count against its
recompile limit. Without it (torch < 2.13) one strategy's entries poison the next: on 2.11
``dynamic`` and ``pad`` hit ``recompile_limit`` on entries ``static`` and ``automatic`` left,
ran eagerly and read as ``pass`` with 0 compiles (issue #32). So a benchmark is driven one of
three ways (:data:`DRIVERS`), recorded in :class:`Measured` with why, and said on the terminal
by :meth:`Measured.words`.

A compiled strategy whose calls no compiled graph served ran eagerly: its variations are
``ran_eager``, and :func:`eager_share` is the share of the stream's requests that ran so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core.caches import CacheState
from dyncli.bench.core.status import Status

SEQUENTIAL, SAME_WINDOW, PROCESS_EACH = "sequential", "same-window", "process-each"
DRIVERS = (SAME_WINDOW, PROCESS_EACH, SEQUENTIAL)
ISOLATION_TORCH = "2.13"  # isolate_recompiles: in 2.13.0, 2.15.0; not in 2.11.0 (2.12 unread)


def apart_reason(torch_version: str) -> str:
    """Why this torch cannot keep strategies apart in one process."""
    return (f"torch {torch_version} cannot keep strategies' compiled code apart in one "
            f"process (isolate_recompiles came in {ISOLATION_TORCH}): one strategy's cache "
            "entries would count against the next one's recompile limit")


@dataclass(frozen=True)
class Measured:
    """The driver that measured the strategies, why (when not one window), the caches."""

    driver: str = SAME_WINDOW
    why: str | None = None
    caches: CacheState = field(default_factory=CacheState)

    def words(self, strategies: int) -> list[str]:
        """Lines for the terminal: how the strategies compare (with two or more), the caches
        when they were the user's."""
        out = []
        if strategies > 1 and self.driver == PROCESS_EACH:
            out.append("strategies measured in separate processes, one each"
                       + (f" ({self.why})" if self.why else "")
                       + ": each speedup compares a strategy with eager timed round-robin "
                       "with it in its own process; latencies of different strategies were "
                       "taken at different moments, so the recommendation prices each by its "
                       "ratio to its own eager")
        elif strategies > 1 and self.driver == SEQUENTIAL and not self.why:
            # with a why (torch < 2.13, kept in one process as asked) a warning says it
            out.append("strategies measured one after another, each from torch._dynamo.reset()"
                       ": each speedup compares a strategy with eager timed beside it; "
                       "latencies of different strategies were taken at different moments")
        if not self.caches.fresh:
            out.append(self.caches.words())
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``measured`` object of the bench document."""
        return {"driver": self.driver, "why": self.why, "caches": self.caches.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measured:
        """Read ``measured`` back."""
        return cls(f.text(d.get("driver"), SAME_WINDOW), f.opt_text(d.get("why")),
                   CacheState.from_dict(f.obj(d.get("caches"))))


def eager_detail(graph_calls: int, limit_messages: Sequence[str], seen: int) -> str | None:
    """Why a compiled call ran eagerly, or None when a compiled graph served it.

    ``graph_calls``: the compiled graphs that ran during the call (bench's backend counts
    them); ``limit_messages``: every ``hit config.recompile_limit`` warning of the strategy so
    far, of which the first ``seen`` came before the call. A call during which no graph ran
    was eager throughout; one during which torch hit its limit ran a frame eagerly.
    """
    new = list(limit_messages[seen:])
    limit = (new or list(limit_messages))[:1]
    why = f" after {_first_line(limit[0])}" if limit else ""
    if graph_calls <= 0:
        return "no compiled graph served this shape: torch ran it eagerly" + why
    if new:
        return f"a frame ran eagerly: {_first_line(new[0])}"
    return None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]


def eager_share(statuses: dict[int, Status], ids: Sequence[int]) -> float:
    """The share of the stream's requests (``ids``: each request's shape) whose shape ran
    eagerly under a compiled strategy (``statuses``: each measured shape's status)."""
    if not ids:
        return 0.0
    return sum(statuses.get(i) == Status.RAN_EAGER for i in ids) / len(ids)

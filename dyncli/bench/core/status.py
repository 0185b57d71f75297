"""Statuses of a bench run, variation, rank or suite model: one :class:`Status` enum, no torch.

A status is a :class:`~enum.StrEnum` member, so it compares equal to and is written to JSON as
its text (``"fail_to_compile"``): the bench document keeps the strings it always had.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Status(StrEnum):
    """How a variation, a strategy's run, a rank or a suite model ended."""

    PASS = "pass"
    # A strategy that does not apply to this model or torch (pad without a batch dim, pgo
    # where torch wrote no state): recorded with the reason, not a failure of the model.
    NOT_APPLICABLE = "not_applicable"
    MODEL_FAIL_TO_LOAD = "model_fail_to_load"
    TIMEOUT = "timeout"
    RANK_FAILED = "rank_failed"
    EAGER_FAIL_TO_RUN = "eager_fail_to_run"
    OOM = "OOM"
    FAIL_TO_COMPILE = "fail_to_compile"
    FAIL_ACCURACY = "fail_accuracy"
    # A compiled callable whose calls no compiled graph served: torch ran the model eagerly
    # (its recompile limit hit, a frame skipped). Measured as what ran, never as compiled:
    # not costed, never recommended (issue #32).
    RAN_EAGER = "ran_eager"
    INTERRUPTED = "interrupted"
    # Read from a document whose status text this dyncli does not know (a newer dyncli, an
    # edited file): shown as such, counted as a failure.
    UNKNOWN = "unknown"

    @classmethod
    def parse(cls, value: object, default: Status | None = None) -> Status:
        """The member named by ``value`` (a JSON string); not a known status: ``default``
        (``UNKNOWN`` when not given)."""
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
        return default if default is not None else cls.UNKNOWN

    @property
    def failed(self) -> bool:
        """Whether this status is a failure (neither ``pass`` nor ``not_applicable``)."""
        return self not in (Status.PASS, Status.NOT_APPLICABLE)


# Failure statuses, most severe first: a run's status is the worst of its variations', a
# suite model's the worst of its runs'.
FAILURES: tuple[Status, ...] = (
    Status.MODEL_FAIL_TO_LOAD, Status.TIMEOUT, Status.RANK_FAILED, Status.EAGER_FAIL_TO_RUN,
    Status.OOM, Status.FAIL_TO_COMPILE, Status.RAN_EAGER, Status.FAIL_ACCURACY,
    Status.INTERRUPTED, Status.UNKNOWN)


def short_error(err: BaseException) -> str:
    """The first line of an exception, named by its type (dynamo's wrapper names its inner
    error), bounded: the ``error`` of a run, rank or pass that failed."""
    inner = getattr(err, "inner_exception", None)  # dynamo's BackendCompilerFailed wraps it
    if isinstance(inner, BaseException):
        return f"{type(err).__name__}: " + short_error(inner)
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}".strip().rstrip(":")[:300]


def worst(statuses: Iterable[str]) -> Status:
    """The most severe failure among ``statuses``; ``PASS`` when none failed."""
    seen = {Status.parse(s) for s in statuses}
    return next((s for s in FAILURES if s in seen), Status.PASS)


__all__ = ["FAILURES", "Status", "short_error", "worst"]

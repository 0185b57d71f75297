"""What ``dyncli compare`` returns: one :class:`Pair` per (model, strategy) in both runs, the
:class:`~dyncli.compare.machine.Machine` verdict, and the :class:`Comparison` that holds them
(its ``to_dict()`` is the command's ``--json`` document). No analysis here: :mod:`.api` fills
these once."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import strategy as table
from dyncli.compare.load import Side
from dyncli.compare.machine import Machine
from dyncli.errors import GateError
from dyncli.output import envelope


def clean(x: float | None) -> float | None:
    """A finite float, or None (the JSON's null)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def pct(x: float) -> str:
    """``+50.0%``."""
    return f"{x * 100:+.1f}%"


def ms(x: float) -> str:
    """Milliseconds with 4 significant digits (0.0297, 16.01, 641.4)."""
    return f"{x:.4g}" if x < 1e4 else f"{x:.0f}"


@dataclass
class Change:
    """One measure of one pair: base and new values, relative change, p-value."""

    base: float | None
    new: float | None
    change: float | None = None  # relative (0.05 = +5%); absolute for compiles
    p_value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this measure."""
        return {"base": clean(self.base), "new": clean(self.new),
                "change": clean(self.change), "p_value": clean(self.p_value)}


@dataclass
class Driver:
    """The matched variation whose compiled latency changed most (by ratio of medians)."""

    variation: str  # "3 [8, 32]": the index and the input shapes
    base_ms: float
    new_ms: float

    @property
    def change(self) -> float:
        """Its relative change (0.5 = +50%)."""
        return self.new_ms / self.base_ms - 1.0

    def describe(self) -> str:
        """``variation 3 [8, 32]: 0.0297→16.01 ms``."""
        return (f"variation {self.variation}: {ms(self.base_ms)}→{ms(self.new_ms)} ms "
                f"({pct(self.change)})")

    def to_dict(self) -> dict[str, Any]:
        """The ``latency_driver`` object of the JSON document."""
        return {"variation": self.variation, "base_ms": clean(self.base_ms),
                "new_ms": clean(self.new_ms), "change": clean(self.change)}


def row_name(model: str, strategy: str | None, mode: str | None) -> str:
    """A row's name in every line: ``model/strategy`` (the model alone for a harness CSV),
    `` (training)`` when it was."""
    name = f"{model}/{strategy}" if strategy else model
    return f"{name} ({mode})" if mode and mode != "inference" else name


@dataclass
class Pair:
    """One (model, strategy) found in both runs."""

    model: str
    strategy: str | None
    base_status: str
    new_status: str
    speedup: Change
    latency_ms: Change
    compiles: Change
    compile_s: Change
    first_result_s: Change
    regressions: list[str] = field(default_factory=list)
    improvements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    latency_driver: Driver | None = None
    # eager of the matched variations, base vs new: the machine's probe for this pair
    eager_ms: Change = field(default_factory=lambda: Change(None, None))
    latency_gated: bool = True  # False: the machine changed, latency is shown, not gated
    mode: str | None = None  # inference or training; None: neither file says

    @property
    def label(self) -> str:
        """``model/strategy`` (or the model alone when a side has no strategies), `` (training)``
        when it was."""
        return row_name(self.model, self.strategy, self.mode)

    @property
    def driven(self) -> str:
        """``, most in variation …`` when one variation drives the latency change, else "".

        Named when one variation moved much more than the geometric mean (its ratio at least
        twice as far from 1 in log terms, and by over 5%): a uniform change has no driver."""
        d, change = self.latency_driver, self.latency_ms.change
        if d is None or change is None or change <= -1:
            return ""
        if abs(math.log1p(d.change)) < max(2 * abs(math.log1p(change)), math.log(1.05)):
            return ""
        return f", most in {d.describe()}"

    @property
    def recompiles(self) -> bool:
        """Whether the new run compiled more often than the base."""
        return self.compiles.change is not None and self.compiles.change > 0

    def to_dict(self) -> dict[str, Any]:
        """The ``pairs[]`` entry of the JSON document."""
        strategy, compile_mode = table.split(self.strategy) if self.strategy else (None, None)
        return {"model": self.model, "strategy": strategy, "compile_mode": compile_mode,
                "mode": self.mode,
                "base_status": self.base_status, "new_status": self.new_status,
                "speedup": self.speedup.to_dict(), "latency_ms": self.latency_ms.to_dict(),
                "eager_ms": self.eager_ms.to_dict(), "latency_gated": self.latency_gated,
                "compiles": self.compiles.to_dict(), "compile_s": self.compile_s.to_dict(),
                "first_result_s": self.first_result_s.to_dict(),
                "regression": bool(self.regressions), "regressions": self.regressions,
                "improvements": self.improvements, "notes": self.notes,
                "latency_driver": self.latency_driver.to_dict() if self.latency_driver else None}


@dataclass
class Comparison:
    """What ``dyncli compare`` found; ``to_dict()`` is its ``--json`` document."""

    base: Side
    new: Side
    threshold: float
    alpha: float
    pairs: list[Pair]
    only_base: list[str]
    only_new: list[str]
    notes: list[str]
    fail_on: tuple[str, ...] = ()
    machine: Machine = field(default_factory=Machine)

    @property
    def regressions(self) -> list[Pair]:
        """The pairs marked as regressions."""
        return [p for p in self.pairs if p.regressions]

    @property
    def recompiled(self) -> list[Pair]:
        """The pairs whose compile count rose."""
        return [p for p in self.pairs if p.recompiles]

    @property
    def tripped(self) -> list[Pair]:
        """The pairs that trip the ``fail_on`` gates."""
        return [p for p in self.pairs if ("regression" in self.fail_on and p.regressions)
                or ("recompiles" in self.fail_on and p.recompiles)]

    @property
    def missing(self) -> list[str]:
        """The base's rows the new run does not have, when a gate is set: what was not
        measured cannot pass a gate (``check`` trips on them)."""
        return list(self.only_base) if self.fail_on else []

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``schema_version`` 1)."""
        return envelope("compare", {
            "base": _side(self.base), "new": _side(self.new),
            "threshold": self.threshold, "alpha": self.alpha, "fail_on": list(self.fail_on),
            "machine": self.machine.to_dict(),
            "summary": {"pairs": len(self.pairs), "regressions": len(self.regressions),
                        "recompiles": len(self.recompiled),
                        "tripped": len(self.tripped) + len(self.missing),
                        "latency_not_gated": sum(not p.latency_gated for p in self.pairs)},
            "pairs": [p.to_dict() for p in self.pairs],
            "only_in_base": self.only_base, "only_in_new": self.only_new, "notes": self.notes,
        })

    def check(self, gate: str | None = None) -> None:
        """Raise :class:`GateError` (exit 1) naming the pairs that trip ``fail_on`` and the
        base's rows missing from the new run; ``gate``: how ``fail_on`` was given (the
        command's ``Resolved.given_as``; default ``--fail-on WHAT``)."""
        tripped, missing = self.tripped, self.missing
        if tripped or missing:
            gate = gate or f"--fail-on {','.join(self.fail_on)}"
            said = f" ({self.machine.said})" if self.machine.said else ""
            parts = [f"{p.label}: {', '.join(p.regressions or ['compiles rose'])}"
                     for p in tripped]
            if missing:
                parts.append("not in new (not measured, so not compared): " + ", ".join(missing))
            raise GateError(f"{gate}: " + "; ".join(parts) + said)


def _side(side: Side) -> dict[str, Any]:
    return {"path": side.path, "kind": side.kind, "device": side.device, "torch": side.torch,
            "samples": side.has_samples}

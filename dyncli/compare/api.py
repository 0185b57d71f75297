"""``dyncli compare``: join two benchmark runs by (model, strategy), test the changes, gate CI.

Per pair of records (see docs/compare.md for the method):

- **compiled latency**: per variation present in both runs (same index and shapes), the ratio
  of medians new/base; the change is their geometric mean minus 1, and base/new are the
  geometric means of those medians (so that base→new and the change agree). The variation
  whose ratio moved most is kept (:class:`Driver`) to name what drives a change. The p-value is a two-sided
  stratified Mann-Whitney U test (:func:`dyncli.stats.stratified_mann_whitney_p`): new compiled
  samples against base ones within each variation, the variations' U statistics summed, so
  shapes of different cost are never compared with each other.
- **speedup**: the relative change of the median speedup; its p-value tests the per-call
  ratios eager[i]/compiled[i] (the interleaved pairs) the same way.
- **compiles**, **compile seconds**, **time to first result** (the first variation's first
  call: compile plus one run): differences; one number per run, so no p-value.

A pair is a regression when latency rose or speedup fell by more than ``threshold`` with
p < ``alpha``, when compiles rose, or when it passed in the base and fails in the new run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from dyncli.bench.core import strategy as table
from dyncli.compare.load import Record, Side, read
from dyncli.config import CompareConfig, config_or_options
from dyncli.errors import GateError, UsageError
from dyncli.install import pip_extra
from dyncli.output import envelope


@dataclass
class Change:
    """One measure of one pair: base and new values, relative change, p-value."""

    base: float | None
    new: float | None
    change: float | None = None  # relative (0.05 = +5%); absolute for compiles
    p_value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this measure."""
        return {"base": _clean(self.base), "new": _clean(self.new),
                "change": _clean(self.change), "p_value": _clean(self.p_value)}


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
        return (f"variation {self.variation}: {_ms(self.base_ms)}→{_ms(self.new_ms)} ms "
                f"({_pct(self.change)})")

    def to_dict(self) -> dict[str, Any]:
        """The ``latency_driver`` object of the JSON document."""
        return {"variation": self.variation, "base_ms": _clean(self.base_ms),
                "new_ms": _clean(self.new_ms), "change": _clean(self.change)}


def _ms(x: float) -> str:
    """Milliseconds with 4 significant digits (0.0297, 16.01, 641.4)."""
    return f"{x:.4g}" if x < 1e4 else f"{x:.0f}"


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

    @property
    def label(self) -> str:
        """``model/strategy`` (or the model alone when a side has no strategies)."""
        return f"{self.model}/{self.strategy}" if self.strategy else self.model

    @property
    def driven(self) -> str:
        """``, most in variation …`` when one variation drives the latency change, else ""."""
        return _driven(self)

    @property
    def recompiles(self) -> bool:
        """Whether the new run compiled more often than the base."""
        return self.compiles.change is not None and self.compiles.change > 0

    def to_dict(self) -> dict[str, Any]:
        """The ``pairs[]`` entry of the JSON document."""
        strategy, compile_mode = table.split(self.strategy) if self.strategy else (None, None)
        return {"model": self.model, "strategy": strategy, "compile_mode": compile_mode,
                "base_status": self.base_status, "new_status": self.new_status,
                "speedup": self.speedup.to_dict(), "latency_ms": self.latency_ms.to_dict(),
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``schema_version`` 1)."""
        return envelope("compare", {
            "base": _side(self.base), "new": _side(self.new),
            "threshold": self.threshold, "alpha": self.alpha, "fail_on": list(self.fail_on),
            "summary": {"pairs": len(self.pairs), "regressions": len(self.regressions),
                        "recompiles": len(self.recompiled), "tripped": len(self.tripped)},
            "pairs": [p.to_dict() for p in self.pairs],
            "only_in_base": self.only_base, "only_in_new": self.only_new, "notes": self.notes,
        })

    def check(self) -> None:
        """Raise :class:`GateError` (exit 1) naming the pairs that trip ``fail_on``."""
        tripped = self.tripped
        if tripped:
            raise GateError(f"--fail-on {','.join(self.fail_on)}: " + "; ".join(
                f"{p.label}: {', '.join(p.regressions or ['compiles rose'])}" for p in tripped))


def _side(side: Side) -> dict[str, Any]:
    return {"path": side.path, "kind": side.kind, "device": side.device, "torch": side.torch,
            "samples": side.has_samples}


def _clean(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def run(base: str | Path, new: str | Path, *, config: CompareConfig | None = None,
        **options: Any) -> Comparison:
    """Compare two benchmark files (dyncli JSON, dyncli CSV or the PyTorch harness CSV).

    ``options`` are the ``[compare]`` config keys (``threshold=0.05``, ``alpha=0.01``,
    ``fail_on=["regression"]``), validated as ``autodyn.toml`` is; or pass ``config``.
    Raises :class:`~dyncli.errors.InputError` (exit 2) for a file that cannot be read and
    ``UsageError``/``ConfigError`` for bad options; never for a regression: the result's
    ``tripped`` lists what trips ``fail_on`` and :meth:`Comparison.check` raises for it.
    """
    cfg: CompareConfig = config_or_options("compare", config, options, where="dyncli.compare.run")
    gates, threshold, alpha = tuple(cfg.fail_on), cfg.threshold, cfg.alpha
    if not threshold >= 0:
        raise UsageError("--threshold must be >= 0 (0.05 = 5%)")
    if not 0 < alpha <= 1:
        raise UsageError("--alpha must be in (0, 1]")
    b, n = read(base), read(new)
    if b.has_samples and n.has_samples and find_spec("scipy") is None:
        raise UsageError("dyncli compare needs scipy for the p-values of raw samples",
                         hint=f"{pip_extra('compare')}  (scipy and matplotlib, no torch)")
    pairs, only_b, only_n = _join(b, n)
    comparison = Comparison(b, n, threshold, alpha, [], only_b, only_n, [], gates)
    for rb, rn in pairs:
        comparison.pairs.append(_compare(rb, rn, threshold, alpha, b, n))
    for side, other in ((b, n), (n, b)):
        if not side.has_samples:
            comparison.notes.append(
                f"{'base' if side is b else 'new'} ({side.path}) is a {side.kind} without raw "
                "samples: no p-values, so latency and speedup changes are shown but never "
                "marked as regressions (compiles and failures still are)")
        if side.left_out:
            comparison.notes.append(
                f"{'base' if side is b else 'new'} ({side.path}): {side.left_out} run"
                f"{'' if side.left_out == 1 else 's'} left out (no model name or strategy "
                "of the expected type)")
        if side.device and other.device and side is b and side.device != other.device:
            comparison.notes.append(f"devices differ: base ran on {b.device}, new on {n.device}")
    return comparison


def _join(b: Side, n: Side) -> tuple[list[tuple[Record, Record]], list[str], list[str]]:
    """Pairs by (model, strategy); a ``None`` strategy (harness CSV) joins every strategy."""
    pairs: list[tuple[Record, Record]] = []
    used_b: set[Any] = set()
    used_n: set[Any] = set()
    for kb, rb in b.records.items():
        for kn, rn in n.records.items():
            if kb[0] == kn[0] and (kb[1] == kn[1] or kb[1] is None or kn[1] is None):
                pairs.append((rb, rn))
                used_b.add(kb)
                used_n.add(kn)

    def label(key: tuple[str, str | None], rec: Record) -> str:
        return f"{rec.model}/{key[1]}" if key[1] else rec.model
    only_b = [label(k, r) for k, r in b.records.items() if k not in used_b]
    only_n = [label(k, r) for k, r in n.records.items() if k not in used_n]
    return pairs, only_b, only_n


def _rel(base: float | None, new: float | None) -> float | None:
    if base is None or new is None or not (math.isfinite(base) and math.isfinite(new)) or base <= 0:
        return None
    return new / base - 1.0


def _diff(base: float | None, new: float | None) -> float | None:
    return None if base is None or new is None else new - base


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass
class _Latency:
    change: float | None = None
    p_value: float | None = None
    speed_p: float | None = None
    note: str = ""
    base_ms: float | None = None  # geometric mean of the matched variations' medians
    new_ms: float | None = None
    driver: Driver | None = None


def _shape_text(shape: str) -> str:
    """``{"0": [8, 32]}`` -> ``[8, 32]``; several inputs joined by ``,``."""
    try:
        value = json.loads(shape)
    except ValueError:
        return shape
    if isinstance(value, dict):
        return ", ".join(json.dumps(v) for v in value.values())
    return json.dumps(value)


def _latency(rb: Record, rn: Record) -> _Latency:
    """Latency change, its p, the speedup p, a note, from the raw samples of matched variations."""
    from statistics import median

    from dyncli.stats import mann_whitney_p, stratified_mann_whitney_p

    keys = [k for k in rb.variations if k in rn.variations
            and len(rb.variations[k].compiled) >= 2 and len(rn.variations[k].compiled) >= 2]
    if not keys:
        if not (rb.has_samples and rn.has_samples):
            return _Latency()
        # different shape plans: pool all samples of each side (a coarser test)
        pooled_b = [x for v in rb.variations.values() for x in v.compiled]
        pooled_n = [x for v in rn.variations.values() for x in v.compiled]
        mb, mn = median(pooled_b), median(pooled_n)
        ratio = mn / mb - 1.0 if mb > 0 else None
        return _Latency(ratio, mann_whitney_p(pooled_b, pooled_n), None,
                        "no variation of the same shape in both runs: latency samples pooled",
                        mb if mb > 0 else None, mn if mb > 0 else None)
    medians: list[tuple[str, float, float]] = []
    latency: list[tuple[list[float], list[float]]] = []
    speed: list[tuple[list[float], list[float]]] = []
    for k in keys:
        vb, vn = rb.variations[k], rn.variations[k]
        mb = median(vb.compiled)
        if not mb > 0:
            continue
        medians.append((k, mb, median(vn.compiled)))
        latency.append((vb.compiled, vn.compiled))
        # interleaved calls: eager[i] and compiled[i] saw the same moment of the machine
        speed.append(([e / c for e, c in zip(vb.eager, vb.compiled, strict=False) if c > 0],
                      [e / c for e, c in zip(vn.eager, vn.compiled, strict=False) if c > 0]))
    if not medians or any(not n > 0 for _, _, n in medians):
        return _Latency()
    speed_p = stratified_mann_whitney_p(speed)
    base_ms = _geomean([b for _, b, _ in medians])
    new_ms = _geomean([n for _, _, n in medians])
    driver = None
    if len(medians) > 1:
        k, b, n = max(medians, key=lambda m: abs(math.log(m[2] / m[1])))
        index = k.split(":", 1)[0]
        driver = Driver(f"{index} {_shape_text(rb.variations[k].shape)}", b, n)
    # geomean(new)/geomean(base) is the geometric mean of the per-variation ratios
    return _Latency(new_ms / base_ms - 1.0, stratified_mann_whitney_p(latency),
                    None if speed_p != speed_p else speed_p, "", base_ms, new_ms, driver)


def _compare(rb: Record, rn: Record, threshold: float, alpha: float, b: Side, n: Side) -> Pair:
    lat = _latency(rb, rn)
    lat_base, lat_new, lat_change = lat.base_ms, lat.new_ms, lat.change
    if lat_change is None:
        lat_base, lat_new = rb.compiled_ms, rn.compiled_ms
        lat_change = _rel(rb.compiled_ms, rn.compiled_ms)
    note, speed_p = lat.note, lat.speed_p
    pair = Pair(
        rn.model if rn.strategy else rb.model, rn.strategy or rb.strategy, rb.status, rn.status,
        speedup=Change(rb.speedup, rn.speedup, _rel(rb.speedup, rn.speedup), speed_p),
        latency_ms=Change(lat_base, lat_new, lat_change, lat.p_value),
        compiles=Change(_f(rb.compiles), _f(rn.compiles),
                        _diff(_f(rb.compiles), _f(rn.compiles))),
        compile_s=Change(rb.compile_s, rn.compile_s, _rel(rb.compile_s, rn.compile_s)),
        first_result_s=Change(rb.first_result_s, rn.first_result_s,
                              _rel(rb.first_result_s, rn.first_result_s)),
        latency_driver=lat.driver,
    )
    if note:
        pair.notes.append(note)
    missing = [name for name, side, rec in (("base", b, rb), ("new", n, rn))
               if not rec.has_samples]
    if missing:
        pair.notes.append(f"no p-value: {' and '.join(missing)} "
                          f"{'has' if len(missing) == 1 else 'have'} no raw samples")
    _verdicts(pair, threshold, alpha)
    return pair


def _f(x: int | None) -> float | None:
    return None if x is None else float(x)


def _significant(p: float | None, alpha: float) -> bool:
    return p is not None and math.isfinite(p) and p < alpha


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def _pstr(p: float | None) -> str:
    return "p<0.001" if p is not None and p < 0.001 else f"p={p:.2g}" if p is not None else ""


def _driven(pair: Pair) -> str:
    """``, most in variation 3 [8, 32]: 0.0297→16.01 ms (+53808.1%)`` when one variation
    moved much more than the geometric mean (its ratio at least twice as far from 1 in log
    terms, and by over 5%), else nothing: a uniform change has no single driver."""
    d, change = pair.latency_driver, pair.latency_ms.change
    if d is None or change is None or change <= -1:
        return ""
    if abs(math.log1p(d.change)) < max(2 * abs(math.log1p(change)), math.log(1.05)):
        return ""  # no variation moved twice as far as the mean, or by more than 5%
    return f", most in {d.describe()}"


def _verdicts(pair: Pair, threshold: float, alpha: float) -> None:
    lat, sp = pair.latency_ms, pair.speedup
    if lat.change is not None and _significant(lat.p_value, alpha):
        if lat.change > threshold:
            pair.regressions.append(f"latency {_pct(lat.change)} ({_pstr(lat.p_value)})"
                                    + _driven(pair))
        elif lat.change < -threshold:
            pair.improvements.append(f"latency {_pct(lat.change)} ({_pstr(lat.p_value)})"
                                     + _driven(pair))
    if sp.change is not None and _significant(sp.p_value, alpha):
        if sp.change < -threshold:
            pair.regressions.append(f"speedup {_pct(sp.change)} ({_pstr(sp.p_value)})")
        elif sp.change > threshold:
            pair.improvements.append(f"speedup {_pct(sp.change)} ({_pstr(sp.p_value)})")
    c = pair.compiles
    if pair.recompiles:
        pair.regressions.append(f"compiles {c.base:.0f} -> {c.new:.0f}")
    elif c.change is not None and c.change < 0:
        pair.improvements.append(f"compiles {c.base:.0f} -> {c.new:.0f}")
    if pair.base_status == "pass" and pair.new_status != "pass":
        pair.regressions.append(f"status pass -> {pair.new_status}")
    elif pair.base_status != "pass" and pair.new_status == "pass":
        pair.improvements.append(f"status {pair.base_status} -> pass")

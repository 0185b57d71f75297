"""Whether the machine changed between the two runs, and so what ``compare`` may gate. Pure.

A compiled latency measured on a busy machine is slower for reasons no code change made
(issue #34: identical code, a few minutes apart, "REGRESSION latency +151.5%"). Two runs carry
what is needed to tell: every variation's eager calls, interleaved with its compiled calls
(same shape, same moments), and each bench document's ``load`` — the load average, the share
of the CPU other processes used, and an eager probe on one fixed shape at moments across the
run (:mod:`dyncli.bench.core.machine`). The rule (docs/compare.md, "When the machine
changed"):

* a pair's **eager moved** when its eager latency changed, base to new, by more than the
  threshold (either way, in log terms) with p < alpha: what moved eager moved compiled too;
* the **probes are apart** when every eager probe of one run is slower than every probe of the
  other, by more than the threshold between their medians;
* a pair's **eager is unsteady** when it changed by more than the threshold without p < alpha:
  shown neither to have moved nor to have stayed (a busy machine's calls of a few ms split
  into fast and descheduled ones, and twenty samples a side rarely prove either way, while
  the compiled calls beside them may: a fresh-clone CI run read identical code as "latency
  +83.4% (p=0.0023)" that way);
* then the pair's compiled latency is shown and not gated (gated only where eager stayed
  within the threshold and the probes agree); its speedup (compiled against eager in the
  same window, as PyTorch's dashboard compares) is gated as always. So a change the eager
  probe explains never exits 1, and a compiled path that really got slower still does: its
  speedup falls.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from dyncli.words import counted


def _num(x: Any) -> float | None:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


@dataclass(frozen=True)
class Probe:
    """One run's record of its machine: the ``load`` object of a bench document."""

    cores: int | None = None
    load_min: float | None = None
    load_max: float | None = None
    others_cpu_share: float | None = None
    eager_probe_ms: tuple[float, ...] = ()

    @classmethod
    def from_load(cls, load: dict[str, Any] | None) -> Probe | None:
        """The probe of a document's ``load`` (None when the document has none)."""
        if not isinstance(load, dict):
            return None
        cores = load.get("cores")
        probes = load.get("eager_probe_ms")
        return cls(cores if isinstance(cores, int) and not isinstance(cores, bool) else None,
                    _num(load.get("load_min")), _num(load.get("load_max")),
                    _num(load.get("others_cpu_share")),
                    tuple(p for x in (probes if isinstance(probes, list) else [])
                          if (p := _num(x)) is not None and p > 0))

    @property
    def median_ms(self) -> float | None:
        """The median eager probe (ms)."""
        return statistics.median(self.eager_probe_ms) if self.eager_probe_ms else None

    def describe(self) -> str:
        """``load 0.4-0.9 on 2 cores, others used 3% of the CPU``."""
        parts = []
        if self.load_min is not None and self.load_max is not None:
            parts.append(f"load {self.load_min:.1f}-{self.load_max:.1f}"
                         + (f" on {self.cores} cores" if self.cores else ""))
        if self.others_cpu_share is not None:
            parts.append(f"others used {self.others_cpu_share:.0%} of the CPU")
        return ", ".join(parts) or "no load recorded"


def eager_moved(change: float | None, p_value: float | None, threshold: float,
                alpha: float) -> bool:
    """Whether eager changed by more than ``threshold`` (either way) with p < ``alpha``."""
    if change is None or change <= -1 or p_value is None or not p_value < alpha:
        return False
    return eager_unsteady(change, threshold)


def eager_unsteady(change: float | None, threshold: float) -> bool:
    """Whether eager changed by more than ``threshold`` (either way), significant or not."""
    return change is not None and (change <= -1 or abs(math.log1p(change)) > math.log1p(threshold))


def eager_state(change: float | None, p_value: float | None, threshold: float,
                alpha: float) -> str | None:
    """``moved`` (:func:`eager_moved`), ``unsteady`` (beyond the threshold, not
    significantly) or None (within it): what a pair's eager says of the machine."""
    if eager_moved(change, p_value, threshold, alpha):
        return "moved"
    return "unsteady" if eager_unsteady(change, threshold) else None


def p_text(p: float | None) -> str:
    """``p<0.001`` / ``p=0.04`` / "" (no p-value)."""
    return "" if p is None else "p<0.001" if p < 0.001 else f"p={p:.2g}"


def probes_apart(base: Probe | None, new: Probe | None,
                 threshold: float) -> tuple[bool, float | None]:
    """Whether every probe of one run is slower than every probe of the other, beyond the
    threshold between medians; and the medians' relative change (None without probes)."""
    if base is None or new is None or not base.eager_probe_ms or not new.eager_probe_ms:
        return False, None
    mb, mn = base.median_ms, new.median_ms
    assert mb is not None and mn is not None
    change = mn / mb - 1.0
    apart = (min(new.eager_probe_ms) > max(base.eager_probe_ms)
             or max(new.eager_probe_ms) < min(base.eager_probe_ms))
    return apart and abs(math.log1p(change)) > math.log1p(threshold), change


@dataclass(frozen=True)
class Moved:
    """A pair whose eager latency moved between the runs."""

    label: str
    change: float
    p_value: float | None


@dataclass
class Machine:
    """What compare concluded about the machines of the two runs."""

    base: Probe | None = None
    new: Probe | None = None
    probes_apart: bool = False
    probe_change: float | None = None  # median eager probe, new/base - 1
    moved: list[Moved] = field(default_factory=list)
    unsteady: list[Moved] = field(default_factory=list)  # eager beyond the threshold, p >= alpha
    pairs: int = 0  # pairs compared (with eager samples or not)

    @property
    def changed(self) -> bool:
        """Whether the machine changed between the runs (any signal)."""
        return self.probes_apart or bool(self.moved)

    def gates_latency(self, moved: bool) -> bool:
        """Whether a pair's compiled latency is gated (its eager stayed within the threshold,
        and the probes are not apart); ``moved``: its eager moved or was unsteady."""
        return not (moved or self.probes_apart)

    @property
    def said(self) -> str | None:
        """The line compare prints first (:meth:`headline`) when the machine changed or a
        pair's eager was unsteady; None when eager agrees everywhere."""
        return self.headline() if self.changed or self.unsteady else None

    def headline(self) -> str:
        """One sentence: what changed, by how much, and what is gated instead."""
        if not (self.changed or self.unsteady):
            return "the machine did not change between runs (eager agrees)"
        what = []
        for moves, how in ((self.moved, "eager itself moved"),
                           (self.unsteady, "eager changed, not significantly,")):
            if moves:
                big = max(moves, key=lambda m: abs(math.log1p(max(m.change, -0.999))))
                what.append(f"{how} in {len(moves)} of {self.pairs} pairs "
                            f"(up to {big.change * 100:+.1f}%"
                            f"{'' if big.p_value is None else ', ' + p_text(big.p_value)})")
        if self.probe_change is not None and (self.probes_apart or self.moved):
            assert self.base is not None and self.new is not None
            what.append(f"eager probe {self.base.median_ms:.4g} → {self.new.median_ms:.4g} ms "
                        f"({self.probe_change * 100:+.1f}%)")
        if self.base is not None and self.new is not None:
            what.append(f"base {self.base.describe()}; new {self.new.describe()}")
        n = len(self.moved) + len(self.unsteady)
        scope = "every pair" if self.probes_apart else \
            f"the {counted(n, 'pair')} whose eager " + \
            ("moved" if not self.unsteady else "was unsteady" if not self.moved
             else "moved or was unsteady")
        return (("MACHINE CHANGED" if self.changed else "MACHINE MAY HAVE CHANGED")
                + " between runs: " + "; ".join(what) + f". Compiled latency of {scope} is "
                "shown, not gated; the gate is the speedup (compiled against eager in the same "
                "window)")

    def to_dict(self) -> dict[str, Any]:
        """The ``machine`` object of the JSON document."""
        def side(p: Probe | None) -> dict[str, Any] | None:
            return None if p is None else {
                "cores": p.cores, "load_min": p.load_min, "load_max": p.load_max,
                "others_cpu_share": p.others_cpu_share, "eager_probe_ms": list(p.eager_probe_ms)}
        return {"changed": self.changed, "probes_apart": self.probes_apart,
                "probe_change": self.probe_change,
                "eager_moved": [{"pair": m.label, "change": m.change, "p_value": m.p_value}
                                for m in self.moved],
                "eager_unsteady": [{"pair": m.label, "change": m.change, "p_value": m.p_value}
                                   for m in self.unsteady],
                "base": side(self.base), "new": side(self.new), "said": self.said}


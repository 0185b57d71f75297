"""``dyncli compare``: join two benchmark runs by (model, strategy, mode), test the changes,
gate CI. Nothing in both files is an error (exit 2); a base row the new run lacks trips a gate.

Per pair of records (see docs/compare.md for the method): compiled latency, eager latency and
the speedup's p-value from the raw samples (:mod:`.latency`); compiles, compile seconds and
time to first result as differences (one number per run, so no p-value).

A pair is a regression when its speedup fell, or its compiled latency rose, by more than
``threshold`` with p < ``alpha``, when compiles rose, or when it passed in the base and fails
in the new run. Compiled latency is gated only where the machine did not change between the
runs (:mod:`.machine`): a change the eager probe explains never trips the gate.
"""

from __future__ import annotations

import math
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from dyncli.compare.latency import latency
from dyncli.compare.load import Record, Side, read
from dyncli.compare.machine import Machine, Moved, Probe, eager_state, p_text, probes_apart
from dyncli.compare.result import Change, Comparison, Driver, Pair, pct, row_name
from dyncli.config import CompareConfig, config_or_options
from dyncli.errors import InputError, UsageError
from dyncli.install import pip_extra
from dyncli.words import counted, noun

__all__ = ["Change", "Comparison", "Driver", "Pair", "run"]


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
    if not pairs:  # a gate that compared nothing must not pass
        raise _nothing_compared(b, n)
    machine = Machine(Probe.from_load(b.load), Probe.from_load(n.load), pairs=len(pairs))
    machine.probes_apart, machine.probe_change = probes_apart(machine.base, machine.new,
                                                              threshold)
    comparison = Comparison(b, n, threshold, alpha, [], only_b, only_n, [], gates, machine)
    for rb, rn in pairs:
        comparison.pairs.append(_compare(rb, rn, threshold, alpha, b, n, machine))
    for side, other in ((b, n), (n, b)):
        if not side.has_samples:
            comparison.notes.append(
                f"{'base' if side is b else 'new'} ({side.path}) is a {side.kind} without raw "
                "samples: no p-values, so latency and speedup changes are shown but never "
                "marked as regressions (compiles and failures still are)")
        if side.left_out:
            comparison.notes.append(
                f"{'base' if side is b else 'new'} ({side.path}): {counted(side.left_out, 'run')}"
                " left out (no model name or strategy "
                "of the expected type)")
        if side.device and other.device and side is b and side.device != other.device:
            comparison.notes.append(f"devices differ: base ran on {b.device}, new on {n.device}")
    return comparison


def _join(b: Side, n: Side) -> tuple[list[tuple[Record, Record]], list[str], list[str]]:
    """Pairs by (model, strategy, mode); a ``None`` strategy (harness CSV) joins every strategy,
    a ``None`` mode (a file that does not say) every mode."""
    pairs: list[tuple[Record, Record]] = []
    used_b: set[Any] = set()
    used_n: set[Any] = set()
    for kb, rb in b.records.items():
        for kn, rn in n.records.items():
            if kb[0] == kn[0] and (kb[1] == kn[1] or kb[1] is None or kn[1] is None) \
                    and (rb.mode == rn.mode or rb.mode is None or rn.mode is None):
                pairs.append((rb, rn))
                used_b.add(kb)
                used_n.add(kn)
    only_b = [row_label(r) for k, r in b.records.items() if k not in used_b]
    only_n = [row_label(r) for k, r in n.records.items() if k not in used_n]
    return pairs, only_b, only_n


def row_label(rec: Record) -> str:
    """The record's name in every line (``result.row_name``)."""
    return row_name(rec.model, rec.strategy, rec.mode)


def _nothing_compared(b: Side, n: Side) -> InputError:
    """No row of one side met one of the other: what each side holds, in one line."""
    def held(side: Side) -> str:
        rows = [row_label(r) for r in side.records.values()]
        shown = ", ".join(rows[:6]) + (f" and {len(rows) - 6} more" if len(rows) > 6 else "")
        return shown or "no runs"
    return InputError(
        f"nothing compared: no (model, strategy, mode) is in both files; base ({b.path}) has "
        f"{held(b)}; new ({n.path}) has {held(n)}",
        hint="compare joins runs of the same model (without timm:/hf:), strategy and mode: "
             "bench the same model and --strategy on both sides")


def _rel(base: float | None, new: float | None) -> float | None:
    if base is None or new is None or not (math.isfinite(base) and math.isfinite(new)) or base <= 0:
        return None
    return new / base - 1.0


def _diff(base: float | None, new: float | None) -> float | None:
    return None if base is None or new is None else new - base


def _compare(rb: Record, rn: Record, threshold: float, alpha: float, b: Side, n: Side,
             machine: Machine) -> Pair:
    lat = latency(rb, rn)
    lat_base, lat_new, lat_change = lat.base_ms, lat.new_ms, lat.change
    if lat_change is None:
        lat_base, lat_new = rb.compiled_ms, rn.compiled_ms
        lat_change = _rel(rb.compiled_ms, rn.compiled_ms)
    pair = Pair(
        rn.model if rn.strategy else rb.model, rn.strategy or rb.strategy, rb.status, rn.status,
        speedup=Change(rb.speedup, rn.speedup, _rel(rb.speedup, rn.speedup), lat.speed_p),
        latency_ms=Change(lat_base, lat_new, lat_change, lat.p_value),
        compiles=Change(_f(rb.compiles), _f(rn.compiles),
                        _diff(_f(rb.compiles), _f(rn.compiles))),
        compile_s=Change(rb.compile_s, rn.compile_s, _rel(rb.compile_s, rn.compile_s)),
        first_result_s=Change(rb.first_result_s, rn.first_result_s,
                              _rel(rb.first_result_s, rn.first_result_s)),
        latency_driver=lat.driver, mode=rn.mode or rb.mode,
    )
    if lat.eager is not None:
        pair.eager_ms = lat.eager
    eager = pair.eager_ms
    state = eager_state(eager.change, eager.p_value, threshold, alpha)
    if state is not None:
        assert eager.change is not None
        (machine.moved if state == "moved" else machine.unsteady).append(
            Moved(pair.label, eager.change, eager.p_value))
    pair.latency_gated = machine.gates_latency(state is not None)
    if lat.note:
        pair.notes.append(lat.note)
    missing = [name for name, side, rec in (("base", b, rb), ("new", n, rn))
               if not rec.has_samples]
    if missing:
        pair.notes.append(f"no p-value: {' and '.join(missing)} "
                          f"{noun(len(missing), 'has', 'have')} no raw samples")
    _verdicts(pair, threshold, alpha, state)
    return pair


def _f(x: int | None) -> float | None:
    return None if x is None else float(x)


def _significant(p: float | None, alpha: float) -> bool:
    return p is not None and math.isfinite(p) and p < alpha


def _verdicts(pair: Pair, threshold: float, alpha: float, state: str | None) -> None:
    """``state``: what the pair's eager said of the machine (:func:`.machine.eager_state`)."""
    lat, sp = pair.latency_ms, pair.speedup
    if lat.change is not None and _significant(lat.p_value, alpha) \
            and abs(lat.change) > threshold:
        said = f"latency {pct(lat.change)} ({p_text(lat.p_value)})" + pair.driven
        if not pair.latency_gated:
            eager = pair.eager_ms
            change = eager.change
            if change is not None and state == "moved":
                why = f"eager moved {pct(change)} ({p_text(eager.p_value)}) too, the " \
                      "machine changed"
            elif change is not None and state == "unsteady":
                p = ", ".join(x for x in (p_text(eager.p_value), "not significant") if x)
                why = f"eager changed {pct(change)} ({p}) too, the machine may have changed"
            else:
                why = "the eager probes are apart, the machine changed"
            pair.notes.append(f"{said} not gated: {why}")
        elif lat.change > 0:
            pair.regressions.append(said)
        else:
            pair.improvements.append(said)
    if sp.change is not None and _significant(sp.p_value, alpha):
        if sp.change < -threshold:
            pair.regressions.append(f"speedup {pct(sp.change)} ({p_text(sp.p_value)})")
        elif sp.change > threshold:
            pair.improvements.append(f"speedup {pct(sp.change)} ({p_text(sp.p_value)})")
    c = pair.compiles
    if pair.recompiles:
        pair.regressions.append(f"compiles {c.base:.0f} -> {c.new:.0f}")
    elif c.change is not None and c.change < 0:
        pair.improvements.append(f"compiles {c.base:.0f} -> {c.new:.0f}")
    if pair.base_status == "pass" and pair.new_status != "pass":
        pair.regressions.append(f"status pass -> {pair.new_status}")
    elif pair.base_status != "pass" and pair.new_status == "pass":
        pair.improvements.append(f"status {pair.base_status} -> pass")

"""compare's machine rule (issue #34) on edited bench documents: compiled latency is gated only
where eager agrees between the runs; the speedup is always gated. The same rule on real runs
beside a CPU hog: tests/integration/test_compare_busy_machine.py."""

from __future__ import annotations

import json
from pathlib import Path

import compare_docs as docs
import pytest

from dyncli.compare import api, render
from dyncli.compare.machine import Probe, eager_moved, eager_unsteady, probes_apart
from dyncli.errors import GateError


def _pairs(result: api.Comparison) -> dict[str, api.Pair]:
    return {p.label: p for p in result.pairs}


def test_a_machine_twice_as_slow_for_eager_and_compiled_is_no_regression(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), None, 2.5, eager=2.5))
    result = api.run(a, b, fail_on=["regression"])
    assert not result.regressions and not result.tripped
    result.check()  # exit 0
    assert result.machine.changed and len(result.machine.moved) == 4
    for pair in result.pairs:
        assert pair.latency_ms.change == pytest.approx(1.5)  # reported...
        assert not pair.latency_gated  # ...not gated
        assert pair.eager_ms.change == pytest.approx(1.5)
        assert any("latency +150.0%" in n and "not gated: eager moved +150.0%" in n
                   for n in pair.notes)
    doc = result.to_dict()
    assert doc["machine"]["changed"] is True
    assert doc["machine"]["said"].startswith("MACHINE CHANGED between runs: eager itself moved "
                                             "in 4 of 4 pairs")
    assert doc["summary"]["latency_not_gated"] == 4
    assert all(p["latency_gated"] is False and p["eager_ms"]["change"] == pytest.approx(1.5)
               for p in doc["pairs"])


def test_a_slower_compiled_path_on_a_slower_machine_still_trips(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    runs = docs.scaled(docs.base_runs(), None, 2.0, eager=2.0)
    b = docs.write(tmp_path / "b.json", docs.scaled(runs, "resnet18", 1.5))
    result = api.run(a, b, fail_on=["regression"])
    assert {p.model for p in result.regressions} == {"resnet18"}
    slow = _pairs(result)["resnet18/static"]
    assert not slow.latency_gated
    assert [r.split(" (")[0] for r in slow.regressions] == ["speedup -33.3%"]
    with pytest.raises(GateError, match=r"resnet18/static: speedup -33\.3%.*MACHINE CHANGED"):
        result.check()


def test_eager_unchanged_keeps_the_latency_gate(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    result = api.run(a, b)
    assert not result.machine.changed
    slow = _pairs(result)["resnet18/static"]
    assert slow.latency_gated and slow.regressions[0].startswith("latency +50.0%")


def test_probes_apart_stop_the_latency_gate_for_every_pair(tmp_path: Path) -> None:
    # eager samples equal (a suite whose models ran quiet), the documents' probes apart
    a = docs.write(tmp_path / "a.json", docs.base_runs(), docs.load([0.050, 0.052, 0.055]))
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.2),
                   docs.load([0.13, 0.16, 0.21], lo=4.1, hi=6.8))
    result = api.run(a, b)
    assert result.machine.probes_apart and result.machine.changed
    assert not any(p.latency_gated for p in result.pairs)
    headline = result.machine.headline()
    assert "eager probe 0.052 → 0.16 ms (+207.7%)" in headline
    assert "base load 0.3-0.8 on 2 cores" in headline and "new load 4.1-6.8 on 2 cores" in headline
    assert "Compiled latency of every pair is shown, not gated" in headline


def test_overlapping_probes_are_the_same_machine() -> None:
    base = Probe.from_load(docs.load([0.05, 0.09, 0.06]))
    new = Probe.from_load(docs.load([0.07, 0.12, 0.08]))
    assert probes_apart(base, new, 0.05)[0] is False
    assert probes_apart(base, Probe.from_load(docs.load([0.0505])), 0.05)[0] is False  # +1%
    assert probes_apart(None, new, 0.05) == (False, None)
    assert Probe.from_load({"eager_probe_ms": ["x", None, -1, True]}) == Probe()
    assert Probe.from_load("not a dict") is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "p", "moved"), [
    (0.5, 0.001, True), (-0.4, 0.001, True), (0.04, 0.001, False), (0.5, 0.2, False),
    (None, 0.001, False), (0.5, None, False)])
def test_eager_moved_needs_size_and_significance(change: float | None, p: float | None,
                                                 moved: bool) -> None:
    assert eager_moved(change, p, 0.05, 0.01) is moved


@pytest.mark.parametrize(("change", "unsteady"), [
    (0.5, True), (-0.4, True), (0.04, False), (-0.04, False), (None, False), (-1.0, True)])
def test_eager_unsteady_is_size_alone(change: float | None, unsteady: bool) -> None:
    assert eager_unsteady(change, 0.05) is unsteady


# A busy machine's calls of a few ms land fast or descheduled (x2.2): identical code, whose
# new run was descheduled more often, in a pattern a fresh-clone CI run met (round 31: compiled
# "+83.4% (p=0.0023)", eager not significant). Found by searching such patterns with this rule's
# own functions; the test checks the pattern still has that shape before it asks anything.
_EAGER_SLOTS = [1, 2.2, 2.2, 1, 2.2, 1, 1, 2.2, 2.2, 1]
_COMPILED_SLOTS = [2.2, 1, 1, 2.2, 2.2, 2.2, 2.2, 1, 2.2, 1]


def _descheduled(runs: list[dict[str, object]]) -> list[dict[str, object]]:
    out = json.loads(json.dumps(runs))
    for r in out:
        for v in r["variations"]:
            v["eager_samples_ms"] = [x * m for x, m in zip(v["eager_samples_ms"], _EAGER_SLOTS,
                                                            strict=True)]
            v["compiled_samples_ms"] = [x * m for x, m in zip(v["compiled_samples_ms"],
                                                               _COMPILED_SLOTS, strict=True)]
    return out


def test_unsteady_eager_stops_the_latency_gate_not_the_speedup(tmp_path: Path) -> None:
    runs = [docs.run("m", "static", 0, batches=(8, 9))]
    a = docs.write(tmp_path / "a.json", runs)
    b = docs.write(tmp_path / "b.json", _descheduled(runs))
    result = api.run(a, b, fail_on=["regression"])
    (pair,) = result.pairs
    lat, eager, speed = pair.latency_ms, pair.eager_ms, pair.speedup
    assert lat.change is not None and eager.change is not None and speed.change is not None
    # the shape of the case: compiled moved significantly, eager as far but not significantly,
    # the per-call speedup not significantly
    assert lat.change > 0.05 and lat.p_value is not None and lat.p_value < 0.01
    assert eager.change > 0.05 and eager.p_value is not None and eager.p_value >= 0.01
    assert speed.p_value is not None and speed.p_value >= 0.01
    result.check()  # exit 0: nothing shows the code changed
    assert not pair.regressions and not pair.latency_gated
    assert not result.machine.changed and len(result.machine.unsteady) == 1
    assert any(n.startswith(f"latency +{lat.change * 100:.1f}% (p=")
               and "not gated: eager changed +" in n and "not significant) too, the machine may "
               "have changed" in n for n in pair.notes), pair.notes
    said = result.machine.said
    assert said is not None and said.startswith(
        "MACHINE MAY HAVE CHANGED between runs: eager changed, not significantly, in 1 of 1 "
        "pairs (up to +")
    assert "Compiled latency of the 1 pair whose eager was unsteady is shown, not gated" in said
    doc = result.to_dict()
    assert doc["machine"]["changed"] is False and doc["machine"]["said"] == said
    assert [u["pair"] for u in doc["machine"]["eager_unsteady"]] == ["m/static"]
    assert doc["machine"]["eager_moved"] == [] and doc["summary"]["latency_not_gated"] == 1
    assert f"⚠️ **{said}**" in render.to_markdown(result).splitlines()[:8]

    # a compiled path 2.5x slower on top of the same noise still trips, on the speedup (x1.5
    # and x2 do not: p = 0.03 and 0.02 on these per-call ratios; as large a noise made the
    # identical code's compiled latency +112%, so no gate on them could tell either apart)
    c = docs.write(tmp_path / "c.json", docs.scaled(_descheduled(runs), "m", 2.5))
    slow = api.run(a, c, fail_on=["regression"])
    assert [r.split(" (")[0] for r in slow.pairs[0].regressions] == ["speedup -70.5%"]
    with pytest.raises(GateError, match=r"m/static: speedup -70\.5%.*MACHINE MAY HAVE CHANGED"):
        slow.check()


def test_the_table_and_markdown_say_it_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), None, 2.5, eager=2.5))
    result = api.run(a, b)
    render.print_table(result)
    out = capsys.readouterr().out
    assert out.startswith("MACHINE CHANGED between runs")
    assert "ok (machine)" in out
    md = render.to_markdown(result).splitlines()
    assert md[0] == "### dyncli compare ✅"
    assert any(line.startswith("⚠️ **MACHINE CHANGED") for line in md[:8])
    json.dumps(result.to_dict(), allow_nan=False)

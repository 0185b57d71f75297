"""compare's machine rule (issue #34) on edited bench documents: compiled latency is gated only
where eager agrees between the runs; the speedup is always gated. The same rule on real runs
beside a CPU hog: tests/integration/test_compare_busy_machine.py."""

from __future__ import annotations

import json
from pathlib import Path

import compare_docs as docs
import pytest

from dyncli.compare import api, render
from dyncli.compare.machine import Probe, eager_moved, probes_apart
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

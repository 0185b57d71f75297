"""A bench stopped by Ctrl-C or SIGTERM: what was not timed is not measured, never a pass.

Round 26: under the same-window driver a strategy's walk compiles its shapes and the timing
comes after the last strategy; a run stopped in between showed ``pass`` with "-" timings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest_bench import sample_result

from dyncli.bench.core import recommend
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status
from dyncli.bench.render_files import write_plan
from dyncli.compare import api as compare
from dyncli.errors import GateError
from dyncli.output import Output


def _untimed(runs: list[RunResult], label: str) -> None:
    for run in runs:
        if run.label == label:
            for v in run.variations:
                v.eager_samples, v.compiled_samples = [], []


def test_a_run_not_timed_is_interrupted_and_one_not_started_is_listed() -> None:
    result = sample_result()
    result.stream_ids = [0, 1, 0]
    _untimed(result.runs, "dynamic")  # its walk compiled; the timing never came
    result.stop(["static", "dynamic", "automatic@max-autotune-no-cudagraphs"],
                "examples/model.py:build", "inference")
    runs = {r.label: r for r in result.runs}
    assert result.interrupted and runs["static"].status == Status.PASS  # timed whole: measured
    assert runs["dynamic"].status == Status.INTERRUPTED
    assert runs["dynamic"].error == "not measured: stopped before it was timed (0 of 2 shapes timed)"
    late = runs["automatic@max-autotune-no-cudagraphs"]
    assert (late.status, late.error) == (Status.INTERRUPTED, "not measured: stopped before it started")
    assert late.compile_mode == "max-autotune-no-cudagraphs" and late.mode == "inference"
    doc = result.to_dict()
    assert [r["status"] for r in doc["runs"]] == ["pass", "interrupted", "interrupted"]


def test_a_run_timed_in_part_is_interrupted_and_keeps_what_was_timed() -> None:
    result = sample_result()
    result.runs[1].variations[1].eager_samples = []
    result.stop(["static", "dynamic"], "m", "inference")
    dynamic = result.runs[1]
    assert dynamic.status == Status.INTERRUPTED and dynamic.variations[0].timed
    assert "(1 of 2 shapes timed)" in (dynamic.error or "")


def test_the_recommendation_and_compare_never_take_it_as_measured(tmp_path: Path) -> None:
    result = sample_result()
    result.stream_ids = [0, 1, 1, 0]
    result.settings["sizes"] = [8, 10, 10, 8]
    result.runs[1].variations[1].eager_samples = []  # dynamic: half timed, then Ctrl-C
    result.stop(["static", "dynamic"], "examples/model.py:build", "inference")
    recommend.apply(result)
    rec = result.recommendation
    assert rec is None or rec.strategy != "dynamic"
    base = sample_result()
    (tmp_path / "base.json").write_text(json.dumps(base.to_dict()))
    (tmp_path / "new.json").write_text(json.dumps(result.to_dict()))
    c = compare.run(tmp_path / "base.json", tmp_path / "new.json", fail_on=["regression"])
    pair = next(p for p in c.pairs if p.strategy == "dynamic")
    assert pair.regressions == ["status pass -> interrupted"] and c.tripped == [pair]


def test_a_run_stopped_before_any_shape_was_known_says_so() -> None:
    """Round 27: stopped before the stream was planned and before any variation: "(0 of 0
    shapes timed)"."""
    result = sample_result()
    result.stream_ids, result.runs[1].variations = [], []
    result.stop(["static", "dynamic"], "m", "inference")
    assert result.runs[1].error == "not measured: stopped before it was timed (no shape timed)"


def test_nothing_timed_prints_one_line_not_a_table_of_dashes(capsys: object) -> None:
    from dyncli.bench.render import print_result
    from dyncli.output import Output

    result = sample_result()
    result.stream_ids = [0, 1]
    _untimed(result.runs, "static")
    _untimed(result.runs, "dynamic")
    result.runs[1].compiles = 0
    result.stop(["static", "dynamic", "automatic"], "examples/model.py:build", "inference")
    print_result(result, Output())
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "strategies side by side" not in out and "speedup median" not in out
    assert "no strategy timed a shape, so there is nothing to set side by side " \
           "(compiles made before that: static 2)" in " ".join(out.split())
    for label in ("static", "dynamic", "automatic"):
        assert f"{label}: interrupted: not measured" in out
    sample = sample_result()  # one strategy timed: the table, its "-" cells the others'
    _untimed(sample.runs, "dynamic")
    sample.stop(["static", "dynamic"], "examples/model.py:build", "inference")
    print_result(sample, Output())
    assert "strategies side by side" in capsys.readouterr().out  # type: ignore[attr-defined]


def _stopped(untimed: str | None) -> BenchResult:
    """sample_result's static and dynamic over a 4-request stream, stopped by Ctrl-C with
    ``untimed`` (if any) not timed, and recommended as the run does at its end."""
    result = sample_result()
    result.stream_ids, result.shapes_source = [0, 1, 1, 0], "sizes"
    result.settings["sizes"] = [8, 10, 10, 8]
    if untimed:
        _untimed(result.runs, untimed)
    result.stop(["static", "dynamic"], "examples/model.py:build", "inference")
    recommend.apply(result)
    return result


def test_emit_after_ctrl_c_says_the_run_was_interrupted_and_writes_no_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # round 34: "Error: --emit: no recommendation to write (no strategy passed)", exit 1
    result = _stopped("dynamic")
    assert result.recommendation is not None  # static's, the one measured: not the best of both
    why = recommend.no_plan(result)
    assert why == ("no plan written: the run was interrupted (Ctrl-C) before dynamic was "
                   "measured, and a plan is the best of every strategy asked for; run it to "
                   "the end to write one")
    plan = tmp_path / "plan.toml"
    write_plan(result, "toml", str(plan), Output())  # a warning, not an error: the run exits 130
    assert not plan.exists()
    assert f"Warning: --emit: {why}" in " ".join(capsys.readouterr().err.split())


def test_emit_after_ctrl_c_once_every_strategy_was_measured_writes_the_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _stopped(None)  # stopped after both were timed (in a replay, the end's probe)
    assert result.interrupted and recommend.no_plan(result) is None
    rec = result.recommendation
    assert rec is not None
    plan = tmp_path / "plan.toml"
    write_plan(result, "toml", str(plan), Output())
    assert plan.read_text().strip()
    assert (f"plan (toml) for {rec.strategy} written to {plan} (every strategy was measured "
            "before Ctrl-C)") in " ".join(capsys.readouterr().err.split())


def test_emit_with_nothing_passed_and_no_ctrl_c_is_an_error(tmp_path: Path) -> None:
    result = sample_result()  # no recommendation (eager failed too), and no Ctrl-C
    result.stream_ids, result.shapes_source, result.recommendation = [0, 1], "sizes", None
    for run in result.runs:
        run.status = Status.FAIL_TO_COMPILE
    with pytest.raises(GateError, match=r"^--emit: no recommendation to write \(no strategy "
                       r"passed\)$"):
        write_plan(result, "toml", str(tmp_path / "plan.toml"), Output())
    assert not (tmp_path / "plan.toml").exists()

"""--nproc pieces without torch: rank plans, error classification, summaries, JSON and table."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from dyncli.bench import render_ranks
from dyncli.bench.core.result import BenchResult, Environment, RankResult, RankStep, RunResult
from dyncli.bench.core.status import short_error
from dyncli.bench.distributed import summarize
from dyncli.bench.rank_worker import collective_status, rank_plan
from dyncli.config import BenchConfig


def test_same_plan_on_every_rank() -> None:
    cfg = BenchConfig(variations=4, rank_shapes="same", seed=3)
    plans = [rank_plan(cfg, r, 8, None) for r in range(3)]
    assert plans[0] == plans[1] == plans[2]
    assert len({v.batch_size for v in plans[0]}) == 4


def test_skewed_only_rank_zero_varies() -> None:
    cfg = BenchConfig(variations=4, rank_shapes="skewed")
    zero, one = rank_plan(cfg, 0, 8, None), rank_plan(cfg, 1, 8, None)
    assert len({v.batch_size for v in zero}) == 4
    assert [v.batch_size for v in one] == [8, 8, 8, 8]
    assert [v.index for v in one] == [v.index for v in zero]


def test_independent_plans_differ_but_are_seeded() -> None:
    cfg = BenchConfig(variations=5, rank_shapes="independent", spread=0.5)
    zero, one = rank_plan(cfg, 0, 16, None), rank_plan(cfg, 1, 16, None)
    assert zero != one and len(zero) == len(one) == 5
    assert zero[0].batch_size == one[0].batch_size == 16  # the base comes first everywhere
    assert rank_plan(cfg, 1, 16, None) == one


def test_collective_errors_are_classified() -> None:
    gloo = RuntimeError("\n[gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 3000ms "
                        "for recv operation to complete")
    assert collective_status(gloo) == "timeout"
    assert short_error(gloo).startswith("RuntimeError: [gloo/")
    peer = RuntimeError("[gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]")
    assert collective_status(peer) == "rank_failed"


def _rank(rank: int, compiles: int, wait: float, busy: float, status: str = "pass",
          error: str = "") -> RankResult:
    return RankResult(rank, status, error, compiles, 1.5 * compiles, 2.0, 0.25, wait, busy,
                      [RankStep(0, 8, None, compiles, 2.0, 0.25, wait)])


def test_summary_across_ranks() -> None:
    run = RunResult("m", "automatic", "inference")
    run.ranks = [_rank(0, 2, 10.0, 5.0), _rank(1, 1, 900.0, 3.0)]
    summarize(run)
    assert (run.status, run.compiles, run.divergent) == ("pass", 2, True)
    assert run.total_wait_ms == 910.0 and run.slowest_rank == 0
    same = RunResult("m", "static", "inference", ranks=[_rank(0, 1, 0, 1), _rank(1, 1, 0, 1)])
    assert same.divergent is False and RunResult("m", "s", "inference").divergent is None


def test_worst_rank_status_wins_and_names_the_rank() -> None:
    run = RunResult("m", "automatic", "inference")
    run.ranks = [_rank(0, 1, 3000.0, 1.0, "timeout", "rank 0 waited longer than the timeout"),
                 _rank(1, 1, 0.0, 1.0, "rank_failed", "Connection closed by peer")]
    summarize(run)
    assert run.status == "timeout"
    assert run.error == "rank 0: rank 0 waited longer than the timeout"


def test_saved_rank_round_trips() -> None:
    rank = _rank(1, 2, 5.0, 1.0)
    assert RankResult.from_dict(json.loads(json.dumps(rank.to_dict()))) == rank


def _result() -> BenchResult:
    env = Environment("0.1.0", "2.14.1", "3.11.0", "cpu", "Test CPU", "float32", 1)
    result = BenchResult("examples/model.py:build", env, {"nproc": 2})
    auto = RunResult("examples/model.py:build", "automatic", "inference")
    auto.ranks = [_rank(0, 2, 10.0, 5.0), _rank(1, 1, 900.0, 3.0)]
    coll = RunResult("examples/model.py:build", "collectives", "inference")
    coll.ranks = [_rank(r, 0, 0.0, 0.0, "fail_to_compile", "InternalTorchDynamoError: boom")
                  for r in (0, 1)]
    for run in (auto, coll):
        summarize(run)
        result.runs.append(run)
    return result


def test_json_has_ranks_side_by_side() -> None:
    doc = _result().to_dict()
    auto, coll = doc["runs"]
    assert auto["divergent"] is True and auto["nproc"] == 2
    assert [(r["rank"], r["compiles"], r["wait_ms"]) for r in auto["ranks"]] == [
        (0, 2, 10.0), (1, 1, 900.0)]
    assert set(auto["ranks"][0]) >= {"rank", "compiles", "compile_time_s", "first_step_s",
                                      "step_ms", "wait_ms"}
    assert coll["status"] == "fail_to_compile"
    assert coll["error"] == "rank 0: InternalTorchDynamoError: boom (and 1 other rank)"


def test_single_process_json_keeps_its_shape() -> None:
    result = _result()
    for run in result.runs:
        run.ranks = []
    assert "ranks" not in result.to_dict()["runs"][0]


def test_tables_show_every_rank() -> None:
    console = Console(width=120, record=True)
    result = _result()
    console.print(render_ranks.rank_table(result.runs[0]))
    console.print(render_ranks.summary_table(result))
    text = console.export_text()
    assert "rank 0" in text and "rank 1" in text and "DIVERGENT" in text
    assert "fail_to_compile" in text and "2 1" in text


def test_launcher_failures_become_rank_statuses(tmp_path: Path) -> None:
    """A rank that saved a result and died, one that died silently, one the launcher stopped."""
    from types import SimpleNamespace

    from dyncli.bench.distributed import STOPPED, _rank_result

    saved = _rank(0, 1, 5.0, 1.0)
    (tmp_path / "rank0.json").write_text(json.dumps(saved.to_dict()))
    log = tmp_path / "logs" / "run_x" / "attempt_0" / "1"
    log.mkdir(parents=True)
    (log / "stderr.log").write_text("noise\nRuntimeError: NCCL watchdog timeout\n\n")
    killed = SimpleNamespace(exitcode=-6, message="To enable traceback see: https://…")
    logs = str(tmp_path / "logs")
    zero = _rank_result(str(tmp_path), logs, 0, killed)
    one = _rank_result(str(tmp_path), logs, 1, killed)
    two = _rank_result(str(tmp_path), logs, 2, None)
    assert zero.status == "rank_failed" and zero.steps == saved.steps  # what it measured stays
    assert one.error == "rank 1 process failed (exit code -6): RuntimeError: NCCL watchdog timeout"
    assert one.last_lines == ["noise", "RuntimeError: NCCL watchdog timeout"]
    assert two.error == STOPPED
    run = RunResult("m", "static", "inference", ranks=[two, one])
    summarize(run)
    assert run.error.startswith("rank 1: rank 1 process failed")  # the cause, not the victim

"""bench --nproc 2 for real: gloo ranks on CPU launched by torch's elastic launcher.

Tiny model, three shapes, two timed steps: each test is one or two launches of two ranks.
Every launch runs under a process-group timeout, so a broken collective ends the test
instead of hanging it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dyncli.bench import torch_compat
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

pytestmark = [pytest.mark.slow, pytest.mark.long]  # long: see pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{ROOT / 'examples' / 'model.py'}:build"
QUICK = {"device": "cpu", "nproc": 2, "variations": 3, "repeat": 2, "warmup": 0, "timeout": 120.0,
         "fresh_cache": False}  # tests/conftest.py: the session's warm compile cache


def test_skewed_ranks_diverge_and_compiler_collectives_fail_on_gloo(tmp_path: Path) -> None:
    """The acceptance command as a user runs it: rank 0 compiles more; collectives is torch's
    failure; exit 0."""
    out = tmp_path / "d.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "dyncli", "bench", EXAMPLE, "--device", "cpu", "--nproc", "2",
         "--rank-shapes", "skewed", "--strategy", "automatic,collectives", "--variations", "3",
         "--repeat", "2", "--warmup", "0", "--timeout", "120", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr
    assert "rank 0" in proc.stdout and "strategies side by side (across ranks)" in proc.stdout
    auto, coll = json.loads(out.read_text())["runs"]
    ranks = {r["rank"]: r for r in auto["ranks"]}
    assert auto["status"] == "pass" and auto["divergent"] is True
    assert ranks[0]["compiles"] > ranks[1]["compiles"] >= 1
    assert all(r["step_ms"] > 0 and r["first_step_s"] > 0 for r in ranks.values())
    assert ranks[1]["wait_ms"] > 0  # every step ends in the all_reduce
    assert [s["batch_size"] for s in ranks[1]["steps"]] == [8, 8, 8]
    if torch.__version__.startswith("2.14."):
        # torch 2.14.1: run_compiler_collective joins the gloo group's device types as strings.
        assert coll["status"] == "fail_to_compile"
        assert "InternalTorchDynamoError: TypeError: sequence item 0: expected str instance, " \
               "torch.device found" in coll["error"]
    elif torch_compat.strategy_unsupported("collectives"):  # torch 2.4
        assert coll["status"] == "not_applicable" and "needs torch >= 2.5" in coll["error"]
    else:
        assert coll["status"] in ("pass", "fail_to_compile") and coll["ranks"]


@pytest.mark.timing  # a deadline: 3 s against a rank 15 s late
def test_a_rank_stuck_in_the_collective_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1 comes 15 s late to the first all_reduce; rank 0 gives up after the 3 s timeout."""
    monkeypatch.setenv("DYNCLI_RANK_DELAY", "1:15")
    cfg = BenchConfig(**{**QUICK, "variations": 2, "timeout": 3.0, "strategy": ["static"]})
    result = run_bench(EXAMPLE, cfg)
    run = result.runs[0]
    ranks = {r.rank: r for r in run.ranks}
    assert run.status == "timeout"
    assert ranks[0].status == "timeout"
    assert "rank 0 waited longer than the process-group timeout" in ranks[0].error
    assert ranks[0].wait_ms >= 2500
    assert ranks[1].status in ("rank_failed", "timeout")


def test_a_dead_rank_is_a_status_with_its_last_lines() -> None:
    """The launcher's child failure: rank 1 exits while building; rank 0 loses its peer."""
    models = Path(__file__).resolve().parent / "conftest_bench.py"
    cfg = BenchConfig(**{**QUICK, "variations": 2, "timeout": 60.0, "strategy": ["static"]})
    run = run_bench(f"{models}:rank_one_dies", cfg).runs[0]
    ranks = {r.rank: r for r in run.ranks}
    assert run.status == "rank_failed"
    assert ranks[1].status == "rank_failed" and "exit code 7" in ranks[1].error
    assert "simulated crash" in run.error and run.error.startswith("rank 1: ")
    assert any("simulated crash" in line for line in ranks[1].last_lines)
    assert ranks[0].status in ("rank_failed", "timeout")  # stopped, or lost its peer


@pytest.mark.gpu
def test_compiler_collectives_on_nccl() -> None:
    """On CUDA with NCCL compiler collectives are the real measurement: ranks agree."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices (one per rank)")
    cfg = BenchConfig(**{**QUICK, "device": "cuda", "rank_shapes": "skewed",
                         "strategy": ["automatic", "collectives"]})
    auto, coll = run_bench(EXAMPLE, cfg).runs
    assert auto.divergent is True
    assert coll.status == "pass" and coll.divergent is False

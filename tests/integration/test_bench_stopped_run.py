"""Ctrl-C between a strategy's compiles and its timing, on real torch.compile (round 26).

Under the same-window driver each strategy's walk compiles its shapes and the timing comes in
one pass after the last strategy. Stopped in the second strategy's walk (the progress hook
raises what SIGINT/SIGTERM raise there), the first had compiled and was never timed: it read
``pass`` with "-" timings. It must read ``interrupted`` (not measured), as must the strategy
stopped mid-walk and the one never started; the JSON the run writes as it goes says so too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.bench import drivers, torch_compat
from dyncli.bench.core.result import BenchResult, Hooks
from dyncli.bench.core.status import Status
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig
from tests.cli.waiting import default_sigint

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"


def test_a_strategy_compiled_but_not_timed_is_interrupted_not_pass() -> None:
    if not torch_compat.can_isolate_recompiles():
        pytest.skip("the same-window driver needs torch >= 2.13 (isolate_recompiles)")
    cfg = BenchConfig(strategy=["static", "automatic", "dynamic"], device="cpu", variations=2,
                      repeat=2, warmup=0)
    written: list[dict] = []

    def progress(strategy: str, _done: int, _total: int) -> None:
        if strategy == "automatic":  # static's walk is done, its timing still to come
            raise KeyboardInterrupt

    hooks = Hooks(progress=progress, run_done=lambda r: written.append(r.to_dict()))
    result: BenchResult = run_bench(MODEL, cfg, hooks)
    assert result.measured is not None and result.measured.driver == drivers.SAME_WINDOW
    assert result.interrupted
    runs = {r.label: r for r in result.runs}
    assert runs["static"].status == Status.INTERRUPTED  # it read pass, with "-" timings
    assert set(runs) == {"static", "automatic", "dynamic"}
    assert all(r.status == Status.INTERRUPTED for r in runs.values()), \
        {k: r.status for k, r in runs.items()}
    assert runs["static"].compiles >= 1 and not any(v.timed for v in runs["static"].variations)
    assert runs["static"].error == "not measured: stopped before it was timed (0 of 2 shapes timed)"
    assert runs["dynamic"].error == "not measured: stopped before it started"
    assert not result.ran and result.recommendation is None
    assert [r["status"] for r in written[-1]["runs"]] == ["interrupted"] * 3


MODEL_SIGINT = """
import signal
import torch


class StoppedAtFirstCall(torch.nn.Linear):
    def forward(self, x):
        signal.raise_signal(signal.SIGINT)  # a real Ctrl-C at the process's first model call
        return super().forward(x)


def build():
    return StoppedAtFirstCall(4, 4), (torch.randn(3, 4),)
"""


def test_ctrl_c_in_the_device_warm_up_writes_every_run_interrupted(tmp_path: Path) -> None:
    # round 26: it exited 130 with no --json file at all. --warm-cache and no stream: no compiler
    # warm-up, so the first model call is the device warm-up's (nothing compiles: ~1 s)
    from typer.testing import CliRunner

    from dyncli.cli import app

    # Ctrl-C as a terminal's foreground process gets it: Python's handler. A pytest started as
    # a shell's background job (`pytest … &`, as one runs it beside a CPU hog, or .ci/run's
    # steps side by side) inherits SIGINT ignored and Python keeps that (tests/cli/waiting.py):
    # the model's SIGINT was then dropped, bench measured all 16 variations, not 130: read
    # as a failure "under load" (round 28)
    (tmp_path / "m.py").write_text(MODEL_SIGINT)
    out = tmp_path / "out.json"
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        r = CliRunner().invoke(app, ["bench", f"{tmp_path / 'm.py'}:build", "--device", "cpu",
                                     "--strategy", "automatic,dynamic", "--warm-cache",
                                     "--json", str(out)], env={"COLUMNS": "120", "TERM": "dumb"})
    finally:
        signal.signal(signal.SIGINT, before)
    assert r.exit_code == 130, r.output
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True and "device_warmup" not in doc  # it did not finish
    assert [(run["strategy"], run["status"], run["error"]) for run in doc["runs"]] == [
        (s, "interrupted", "not measured: stopped before it started")
        for s in ("automatic", "dynamic")]
    assert not any(run["variations"] for run in doc["runs"])


def test_ctrl_c_with_emit_says_the_run_was_interrupted_and_exits_130(tmp_path: Path) -> None:
    # round 34: "Error: --emit: no recommendation to write (no strategy passed)" and exit 1.
    # A real SIGINT in a real `python -m dyncli` process (the model raises it at the first
    # call, the device warm-up's: nothing compiles), started with Ctrl-C's default action
    (tmp_path / "m.py").write_text(MODEL_SIGINT)
    proc = subprocess.run(
        [sys.executable, "-m", "dyncli", "bench", "m.py:build", "--device", "cpu",
         "--strategy", "automatic,dynamic", "--warm-cache", "--sizes", "3,3,5",
         "--emit", "toml", "--emit-file", "plan.toml", "--json", "out.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=default_sigint,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "dumb"})
    assert proc.returncode == 130, proc.stderr
    assert not (tmp_path / "plan.toml").exists()
    err = " ".join(proc.stderr.split())
    assert ("Warning: --emit: no plan written: the run was interrupted (Ctrl-C) before "
            "automatic, dynamic were measured, and a plan is the best of every strategy asked "
            "for; run it to the end to write one") in err, proc.stderr
    assert "no strategy passed" not in err and "Traceback" not in err
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["interrupted"] is True

"""--buckets auto and --emit on real torch.compile: the chosen buckets are measured, the
predicted total beats pow2 and no padding, and the emitted plan compiles as predicted.

One CLI run (module-scoped) of the tiny example MLP on a stream of 11 distinct batch sizes,
automatic beside pad: the probe that chooses the buckets runs after automatic has compiled, in
the same process, and must leave automatic's compiled code alone (a reset after the probe made
automatic compile 4 graphs instead of 2, in the same-window pass).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emitted import serve_emitted

from dyncli.bench.core import recommend
from dyncli.bench.core.result import BenchResult

pytestmark = [pytest.mark.slow, pytest.mark.long]  # long: see pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
SIZES = [1, 1, 2, 3, 3, 5, 6, 7, 9, 1, 11, 12, 2, 1, 4, 10, 3]


@pytest.fixture(scope="module")
def auto(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchResult, Path, str]:
    out = tmp_path_factory.mktemp("auto")
    cmd = [sys.executable, "-m", "dyncli", "bench", MODEL, "--device", "cpu",
           "--sizes", ",".join(map(str, SIZES)), "--strategy", "automatic,pad", "--buckets", "auto",
           "--max-buckets", "3", "--repeat", "3", "--warmup", "0", "--warm-cache",
           "--json", str(out / "r.json"), "--emit", "python", "--emit-file",
           str(out / "plan.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads((out / "r.json").read_text())
    return BenchResult.from_dict(doc), out, proc.stdout + proc.stderr


def _run(result: BenchResult, strategy: str) -> Any:
    return next(r for r in result.runs if r.strategy == strategy)


def test_chosen_buckets_are_measured_and_beat_pow2_and_no_padding(auto: Any) -> None:
    result, _, stdout = auto
    pad = _run(result, "pad")
    assert pad.status == "pass", pad.error
    info = pad.buckets
    assert info is not None and info.max_buckets == 3
    chosen, plans = info.chosen, info.plans
    assert 1 <= len(chosen) <= 3 and chosen[-1] == max(SIZES)
    assert plans["auto"].total_s <= plans["pow2"].total_s + 1e-9
    assert plans["auto"].total_s <= plans["none"].total_s + 1e-9
    assert pad.plan is not None and pad.plan.buckets == chosen  # what the run measured
    # the reported pad run ran at the chosen buckets, not at the probe's powers of two
    assert {v.padded_to.batch for v in pad.variations} <= set(chosen)
    assert pad.stream is not None and pad.stream.compiles == len(
        {v.padded_to.batch for v in pad.variations})
    assert "pad buckets — auto" in stdout
    # the probe's compiles are charged as the stream's are, min(wall, CPU), with their wall
    # kept beside; the measured pass is set beside the probe's prediction (round 35)
    assert info.compile_wall_s_each is not None
    assert info.compile_s_each <= info.compile_wall_s_each + 1e-9
    assert f"{plans['auto'].total_s:.2f} s predicted" in stdout
    assert f"{pad.stream.total_s:.2f} s measured (" in stdout


def test_emitted_plans_compile_as_predicted(auto: Any, tmp_path: Path) -> None:
    import torch

    result, out, _ = auto
    assert (out / "plan.py").exists()  # what --emit wrote, for the recommended strategy
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from model import build
    finally:
        sys.path.pop(0)
    model, _ = build()
    plan = recommend.plan_for(result, "pad")  # the pad plan, whichever won
    compiles = serve_emitted(plan, model.eval(), [torch.randn(b, 32) for b in SIZES], tmp_path)
    assert compiles == _run(result, "pad").stream.compiles


def test_the_probe_leaves_the_strategies_before_it_compiled(auto: Any, tmp_path: Path) -> None:
    import torch

    result, _, output = auto
    assert "more time(s) in the same-window pass" not in output
    automatic = _run(result, "automatic")
    assert automatic.status == "pass" and automatic.stream is not None
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from model import build
    finally:
        sys.path.pop(0)
    model, _ = build()
    # plain torch serving automatic's plan (after a reset) compiles what bench counted
    plain = serve_emitted(recommend.plan_for(result, "automatic"), model.eval(),
                          [torch.randn(b, 32) for b in SIZES], tmp_path)
    assert automatic.compiles == automatic.stream.compiles == plain

"""The compile-mode axis on real torch.compile, on CPU: crossed with the strategies, measured
where CPU can run them, emitted and applied.

The tiny MLP of ``examples/model.py`` over the stream 2, 5, 2: ``reduce-overhead`` records
CUDA graphs and is not_applicable on CPU ("CUDA graphs need CUDA"); ``max-autotune-no-cudagraphs``
autotunes inductor's CPU kernels and is measured — a few seconds for this model (1.4 s for its
first compile on a 2-core machine at load 12, against 32 s for the default mode's cold one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from emitted import serve_emitted

import dyncli
from dyncli.bench.core import recommend
from dyncli.bench.core.emit import emit
from dyncli.bench.core.status import Status

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
SIZES = [2, 5, 2]
MODES = ["default", "reduce-overhead", "max-autotune-no-cudagraphs"]


def test_modes_cross_the_strategy_and_the_measured_plan_applies(tmp_path: Path) -> None:
    result = dyncli.bench.run(MODEL, strategy=["dynamic"], compile_mode=MODES, sizes=SIZES,
                              device="cpu", repeat=2, warmup=0, fresh_cache=False)
    plain, graphs, tuned = result.runs
    assert [r.label for r in result.runs] == [
        "dynamic", "dynamic@reduce-overhead", "dynamic@max-autotune-no-cudagraphs"]
    assert graphs.status == Status.NOT_APPLICABLE
    assert graphs.error == "mode reduce-overhead: CUDA graphs need CUDA (device cpu)"
    assert not graphs.variations and graphs.compiles == 0
    for run in (plain, tuned):
        assert run.status == Status.PASS, run.error
        assert run.compiles == 1  # dynamic=True: one graph for every size
        assert all(v.timed for v in run.variations)
    assert tuned.plan is not None and tuned.plan.compile_kwargs()["mode"] == \
        "max-autotune-no-cudagraphs"
    doc = result.to_dict()
    assert [r["compile_mode"] for r in doc["runs"]] == MODES
    assert not any("cudagraphs" in r for r in doc["runs"])  # CPU: absent, not zero
    assert not any("cudagraphs" in v for r in doc["runs"] for v in r["variations"])
    rec = result.recommendation
    assert rec is not None  # eager or either measured run: the not_applicable one is not
    assert rec.strategy != "dynamic@reduce-overhead"
    assert "not considered (did not pass): dynamic@reduce-overhead" in rec.reason

    plan = recommend.plan_for(result, "dynamic@max-autotune-no-cudagraphs")
    assert plan.compile_mode == "max-autotune-no-cudagraphs"
    assert 'compile_mode = ["max-autotune-no-cudagraphs"]' in emit(plan, "toml")
    assert "torch.compile(mode='max-autotune-no-cudagraphs')" in emit(plan, "env")
    from dyncli.bench.models import build

    model = build(MODEL, device="cpu", batch_size=None, seq_len=None, hf_config={},
                  training=False).model.eval()
    inputs = [torch.randn(b, 32) for b in SIZES]
    assert serve_emitted(plan, model, inputs, tmp_path) == tuned.compiles  # applied


def test_each_mode_in_a_process_of_its_own_reads_back_with_its_mode() -> None:
    result = dyncli.bench.run(MODEL, strategy=["static"],
                              compile_mode=["max-autotune-no-cudagraphs", "reduce-overhead"],
                              sizes=[2, 5], device="cpu", repeat=2, warmup=0, fresh_cache=False,
                              process_each=True)
    tuned, graphs = result.runs
    assert (tuned.label, tuned.status, tuned.compiles) == (
        "static@max-autotune-no-cudagraphs", Status.PASS, 2)
    assert tuned.plan is not None and tuned.plan.compile_mode == "max-autotune-no-cudagraphs"
    assert (graphs.compile_mode, graphs.status) == ("reduce-overhead", Status.NOT_APPLICABLE)

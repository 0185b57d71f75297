"""The compile-mode axis on real torch.compile, on CPU: crossed with the strategies, measured
where CPU can run them, emitted and applied.

The tiny MLP of ``examples/model.py`` over the stream 2, 5, 2: ``reduce-overhead`` records
CUDA graphs and is not_applicable on CPU ("CUDA graphs need CUDA"); ``max-autotune-no-cudagraphs``
autotunes inductor's CPU kernels and is measured — a few seconds for this model (1.4 s for its
first compile on a 2-core machine at load 12, against 32 s for the default mode's cold one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from emitted import serve_emitted

import dyncli
from dyncli.bench.core import recommend
from dyncli.bench.core.apply import from_dims
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
    from dyncli.bench.graph_watch import GraphWatch

    gw = GraphWatch()  # the GPU test's watch, entered the same way: after serving's reset
    assert serve_emitted(plan, model, inputs, tmp_path, around=lambda: gw) == tuned.compiles
    assert not gw.lost and gw.recordings == 0  # watching to the end (no CUDA graphs on CPU)


def test_a_graph_watch_across_a_dynamo_reset_reads_unknown_not_zero() -> None:
    """torch._dynamo.reset() clears every registered callback: on the H200 a watch entered
    before serving's reset read 0 recordings where torch recorded 1."""
    from dyncli.bench.graph_watch import GraphWatch

    with GraphWatch() as kept:
        pass
    assert kept.recordings == 0 and not kept.lost
    with GraphWatch() as gw:
        torch._dynamo.reset()
    assert gw.lost and gw.recordings is None


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
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



def test_an_emitted_cuda_graph_plan_pads_to_its_capture_sizes_and_sets_torchs_config(
        tmp_path: Path) -> None:
    """The emitted module of a reduce-overhead plan with capture sizes and a re-record limit,
    imported and served on CPU: its compile kwargs swapped for a backend that records what
    torch's inductor config holds and which shapes reach the graph while it compiles (CUDA
    graphs themselves: the gpu tests below)."""
    import importlib.util

    from dyncli.bench.core.apply import Plan
    from dyncli.bench.models import build

    plan = Plan("dynamic", inputs=from_dims({"0": (0,)}, {}), compile_mode="reduce-overhead",
                capture_sizes=(4, 8), rerecord_limit=2, pad_dims=("batch",))
    path = tmp_path / "emitted_plan.py"
    path.write_text(emit(plan, "python"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.PLAN["torch_compile"] == {"backend": "inductor", "mode": "reduce-overhead",
                                         "dynamic": True}
    seen: list[tuple] = []

    def spy(gm: Any, example_inputs: Any) -> Any:
        import torch._inductor.config as inductor

        seen.append((inductor.triton.cudagraph_capture_sizes,
                     inductor.triton.cudagraph_dynamic_shape_rerecord_limit,
                     tuple(example_inputs[0].shape)))
        return gm.forward

    mod.PLAN["torch_compile"] = {"backend": spy, "dynamic": True}
    model = build(MODEL, device="cpu", batch_size=None, seq_len=None, hf_config={},
                  training=False).model.eval()
    torch._dynamo.reset()
    serve = mod.compile_for_traffic(model)
    try:
        with torch.no_grad():
            for b in (3, 5, 9, 2):
                x = torch.randn(b, 32)
                torch.testing.assert_close(serve(x), model(x))  # padded, then cut back
    finally:
        torch._dynamo.reset()
    import torch._inductor.config as inductor

    assert seen and all(s[:2] == ((4, 8), 2) for s in seen)
    assert inductor.triton.cudagraph_capture_sizes is None  # patched only while serving


# ---------------------------------------------------------------- on a GPU (skipped elsewhere)

BENCH_IN_A_PROCESS = """
import json, sys
import dyncli
options = json.loads(sys.argv[1])
result = dyncli.bench.run(options.pop("model"), device="cuda", repeat=2, warmup=0,
                          fresh_cache=False, process_each=False, **options)
print("=== done ===", file=sys.stderr, flush=True)
print(json.dumps(result.to_dict()))
"""


def _bench_logged(options: dict) -> tuple[dict, int]:
    """bench in a process of its own under TORCH_LOGS=cudagraphs: its document, and the
    ``Recording function=`` lines torch logged while bench ran."""
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", BENCH_IN_A_PROCESS,
                           json.dumps({"model": MODEL} | options)],
                          capture_output=True, text=True, timeout=600, check=False,
                          env=os.environ | {"TORCH_LOGS": "cudagraphs"})
    assert done.returncode == 0, done.stderr[-3000:]
    logged = done.stderr.split("=== done ===", 1)[0].count("Recording function=")
    return json.loads(done.stdout), logged


@pytest.mark.gpu
def test_recordings_equal_torchs_own_log_and_memory_is_measured() -> None:
    doc, logged = _bench_logged({"strategy": ["automatic"], "compile_mode": ["reduce-overhead"],
                                 "sizes": [2, 5, 8, 5, 2]})
    runs = doc["runs"]
    assert [r["status"] for r in runs] == ["pass"]
    counted = runs[0]["cudagraphs"]["recordings"]
    assert counted >= 3  # a graph per size at least
    assert counted == logged
    for r in runs:
        assert r["cudagraphs"]["pool_bytes"] > 0 and r["peak_memory_bytes"] > 0
        assert sum(v["cudagraphs"]["recordings"] for v in r["variations"]) == \
            r["cudagraphs"]["recordings"]


@pytest.mark.gpu
def test_a_capture_sizes_plan_records_only_its_sizes_and_applies(tmp_path: Path) -> None:
    doc, logged = _bench_logged({"strategy": ["dynamic"], "compile_mode": ["reduce-overhead"],
                                 "capture_sizes": [8], "sizes": [2, 5, 8, 5, 2]})
    run = doc["runs"][0]
    assert run["status"] == "pass", run.get("error")
    assert run["cudagraphs"]["recordings"] == logged == 1  # every size padded up to 8
    assert {v["padded_to"]["batch"] for v in run["variations"]} == {8}

    from dyncli.bench.core.apply import Plan
    from dyncli.bench.graph_watch import GraphWatch
    from dyncli.bench.models import build

    plan = Plan.from_dict(run["plan"])
    assert plan.capture_sizes == (8,) and plan.compile_mode == "reduce-overhead"
    model = build(MODEL, device="cuda", batch_size=None, seq_len=None, hf_config={},
                  training=False).model.cuda().eval()
    inputs = [torch.randn(b, 32, device="cuda") for b in [2, 5, 8, 5, 2, 8, 3]]
    gw = GraphWatch()
    serve_emitted(plan, model, inputs, tmp_path, around=lambda: gw)  # watched after its reset
    assert gw.recordings == 1  # the emitted module pads up to 8 and captures only 8

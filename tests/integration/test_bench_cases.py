"""Real torch.compile on tiny CPU models: failures as statuses, recompile limit, training,
HF models with batch and sequence varied, keyword inputs, Ctrl-C keeping partial results,
and the acceptance command line with its JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from dyncli.bench import torch_compat
from dyncli.bench.core.result import BenchResult, Call, Hooks
from dyncli.bench.render_files import write_files
from dyncli.bench.runner import run_bench
from dyncli.cli import app
from dyncli.config import BenchConfig

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "conftest_bench.py"
EXAMPLE = f"{ROOT / 'examples' / 'model.py'}:build"
QUICK = {"device": "cpu", "repeat": 2, "warmup": 0, "fresh_cache": False}  # tests/conftest.py


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_eager_failure_is_a_status_and_the_rest_go_on() -> None:
    cfg = BenchConfig(variations=5, strategy=["dynamic"], **QUICK)
    result = run_bench(f"{MODELS}:failing_at_ten", cfg)
    run = result.runs[0]
    by_batch = {v.batch_size: v for v in run.variations}
    assert by_batch[10].status == "eager_fail_to_run"
    assert "refuses a batch of 10" in by_batch[10].detail
    assert all(v.status == "pass" for b, v in by_batch.items() if b != 10)
    assert run.status == "eager_fail_to_run"
    assert result.ran and result.failed


def test_out_of_memory_is_a_status_and_the_rest_go_on() -> None:
    cfg = BenchConfig(variations=5, strategy=["dynamic"], **QUICK)
    result = run_bench(f"{MODELS}:oom_above_eight", cfg)
    run = result.runs[0]
    by_batch = {v.batch_size: v.status for v in run.variations}
    assert len(by_batch) == 5 and any(b > 8 for b in by_batch) and any(b <= 8 for b in by_batch)
    assert {b: a for b, a in by_batch.items() if b > 8} == {b: "OOM" for b in by_batch if b > 8}
    assert all(a == "pass" for b, a in by_batch.items() if b <= 8)
    assert run.status == "OOM"
    assert result.ran and result.failed


def test_model_fail_to_load_is_recorded_and_nothing_ran() -> None:
    result = run_bench(f"{MODELS}:broken", BenchConfig(strategy=["static", "dynamic"], **QUICK))
    assert [r.status for r in result.runs] == ["model_fail_to_load"] * 2
    assert "weights file missing" in result.runs[0].error
    assert not result.ran


def test_recompile_limit_hit_is_detected() -> None:
    cfg = BenchConfig(variations=4, strategy=["static"], **QUICK)
    limit = torch_compat.recompile_limit_setting().rsplit(".", 1)[1]  # cache_size_limit < 2.7
    with torch._dynamo.config.patch(**{limit: 2}):
        result = run_bench(EXAMPLE, cfg)
    run = result.runs[0]
    assert run.recompile_limit_hit
    assert limit in run.limit_messages[0]
    assert run.compiles == 2  # later shapes silently ran eager
    assert [v.recompiled for v in run.variations] == [True, True, False, False]


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_training_mode_automatic() -> None:
    cfg = BenchConfig(variations=3, strategy=["automatic"], mode="training", **QUICK)
    result = run_bench(EXAMPLE, cfg)
    run = result.runs[0]
    assert run.status == "pass", [v.detail for v in run.variations]
    assert run.compiles == 2
    assert all(v.timed for v in run.variations)


def _plain_dynamic_compiles(hf_config: dict[str, int], shapes: list[tuple[int, int]]) -> int:
    """Graphs plain ``torch.compile(dynamic=True)`` makes of the same BertModel on ``shapes``."""
    import torch._dynamo
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(use_cache=False, **hf_config)).eval()
    graphs = [0]
    inductor = torch._dynamo.lookup_backend("inductor")

    def counting(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        # counted once inductor returns, as bench counts: under dynamic=True torch 2.14 on
        # enters the backend twice for this frame, the first attempt raising and dynamo
        # restarting its analysis (compile id 0/0_1), and installs one graph
        compiled = inductor(gm, example_inputs, **kwargs)
        graphs[0] += 1
        return compiled

    torch._dynamo.reset()
    fn = torch.compile(model, backend=counting, dynamic=True)
    with torch.no_grad():
        for b, s in shapes:
            fn(input_ids=torch.randint(0, 97, (b, s)),
               attention_mask=torch.ones(b, s, dtype=torch.long))
    torch._dynamo.reset()
    return graphs[0]


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_hf_model_varies_batch_and_seq_with_ids_in_vocab() -> None:
    calls: list[Call] = []
    hf = {"num_hidden_layers": 1, "hidden_size": 32, "num_attention_heads": 2,
          "intermediate_size": 64, "vocab_size": 97}
    cfg = BenchConfig(variations=3, strategy=["dynamic"], vary=["batch", "seq"], batch_size=3,
                      seq_len=16, hf_config=hf, **QUICK)
    result = run_bench("hf:BertModel", cfg, Hooks(tap=calls.append))
    run = result.runs[0]
    assert run.status == "pass", [v.detail for v in run.variations]
    # one graph from torch 2.11 on; torch 2.4 specializes a batch of 2 against the 2 heads
    # (duck sizing) and compiles 3: bench counts what torch compiles
    assert run.compiles == _plain_dynamic_compiles(
        hf, [(v.batch_size, v.seq_len) for v in run.variations])
    if torch_compat.installed() >= (2, 11):
        assert run.compiles == 1
    shapes = [(v.batch_size, v.seq_len) for v in run.variations]
    assert shapes[0] == (3, 16) and len(set(shapes)) == 3
    for v in run.variations:
        assert v.shapes["input_ids"] == [v.batch_size, v.seq_len]
        assert v.shapes["attention_mask"] == [v.batch_size, v.seq_len]
    for c in calls:
        ids, mask = c.kwargs["input_ids"], c.kwargs["attention_mask"]
        assert int(ids.max()) < 97 and int(ids.min()) >= 0
        assert bool((mask == 1).all())


def test_keyword_inputs_and_masks() -> None:
    calls: list[Call] = []
    cfg = BenchConfig(variations=3, strategy=["mark-dynamic"], **QUICK)
    result = run_bench(f"{MODELS}:keyword_inputs", cfg, Hooks(tap=calls.append))
    assert result.runs[0].status == "pass"
    assert result.dims["batch"] == {"features": [0], "mask": [0]}
    for c in calls:
        assert c.kwargs["mask"].dtype == torch.bool and bool(c.kwargs["mask"].all())
        assert c.kwargs["features"].shape[0] == c.kwargs["mask"].shape[0]
    # --batch-size re-bases a user model's inputs (example batch 6 -> 9)
    rebased = run_bench(f"{MODELS}:keyword_inputs", BenchConfig(
        variations=2, strategy=["dynamic"], batch_size=9, **QUICK))
    assert rebased.runs[0].variations[0].shapes == {"features": [9, 12], "mask": [9, 12]}


def test_ctrl_c_keeps_what_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "partial.json"

    def tap(call: Call) -> None:
        if call.strategy == "dynamic" and call.variation == 1:
            raise KeyboardInterrupt

    def run_done(partial: BenchResult) -> None:
        write_files(partial, str(out), None, None)

    cfg = BenchConfig(variations=3, strategy=["static", "dynamic"], **QUICK)
    result = run_bench(EXAMPLE, cfg, Hooks(tap=tap, run_done=run_done))
    assert result.interrupted
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True
    assert [r["strategy"] for r in doc["runs"]] == ["static", "dynamic"]
    # static's walk compiled its 3 shapes; under the same-window driver their timing comes
    # after the last strategy, so Ctrl-C left it not measured: interrupted, never pass
    # (round 26); its compiles are kept
    static = doc["runs"][0]
    assert len(static["variations"]) == 3 and static["compiles"] >= 1
    if doc["measured"]["driver"] == "same-window":
        assert static["status"] == "interrupted" and static["error"].startswith("not measured")
    else:  # timed in its own walk, before dynamic began: measured
        assert static["status"] == "pass"
        assert all(v["compiled_samples_ms"] for v in static["variations"])
    assert doc["runs"][1]["status"] == "interrupted" and len(doc["runs"][1]["variations"]) == 1


def test_acceptance_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, [
        "bench", EXAMPLE, "--strategy", "static,automatic,mark-dynamic,dynamic",
        "--variations", "5", "--device", "cpu", "--repeat", "3", "--json", str(out),
        "--csv", "out.csv", "--plot", "out.png"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["command"] == "bench"
    assert doc["environment"]["device"] == "cpu"
    assert {r["strategy"]: r["compiles"] for r in doc["runs"]} == {
        "static": 5, "automatic": 2, "mark-dynamic": 1, "dynamic": 1}
    assert all(v["accuracy"] == "pass" for r in doc["runs"] for v in r["variations"])
    assert len((tmp_path / "out.csv").read_text().splitlines()) == 1 + 4 * 5
    assert (tmp_path / "out.png").read_bytes()[:4] == b"\x89PNG"
    assert "strategies side by side" in result.stdout
    assert "static · inference · 5 compiles" in result.stdout


def test_compile_failure_is_a_status(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_inductor(self: object, gm: object, example_inputs: object) -> object:
        raise RuntimeError("inductor exploded")

    # inductor as torch.compile(model) runs it, which is what every strategy compiles through
    monkeypatch.setattr(torch._TorchCompileInductorWrapper, "__call__", failing_inductor)
    cfg = BenchConfig(variations=2, strategy=["dynamic", "static"], **QUICK)
    # one process: the patched backend lives in this one (below torch 2.13 two strategies
    # would otherwise run a process each, which the patch does not reach)
    result = run_bench(EXAMPLE, cfg, process_each=False)
    for run in result.runs:
        assert run.status == "fail_to_compile"
        assert run.compiles == 0
        assert all(v.status == "fail_to_compile" for v in run.variations)
        assert "inductor exploded" in run.variations[0].detail
    assert not result.ran

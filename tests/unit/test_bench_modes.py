"""The compile-mode axis without torch: options, labels, plans in every form, compare's join.

A compile mode is a row of ``strategy.MODES``; each (strategy, mode) is a run named by its
label (``automatic@reduce-overhead``; the strategy alone under the default mode, so documents
from before modes read and join unchanged).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import compare_docs as docs
import pytest

from dyncli import compare
from dyncli.bench.core import settings
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan, from_dims, plan_of
from dyncli.bench.core.emit import emit
from dyncli.bench.core.graphs import parse_bytes
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.config import BenchConfig, ConfigError, read_toml, resolve
from dyncli.errors import UsageError

INPUTS = from_dims({"0": (0,)}, {})


def test_modes_are_torchs_names_and_the_options_choices() -> None:
    assert table.MODE_NAMES == ("default", "reduce-overhead", "max-autotune-no-cudagraphs",
                                "max-autotune")
    graphs = {m.name for m in table.MODES if m.cuda_graphs}
    assert graphs == {"reduce-overhead", "max-autotune"}


def test_compile_mode_resolves_from_every_layer(tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text('[bench]\ncompile_mode = ["max-autotune"]\n')
    assert resolve("bench", cwd=tmp_path, environ={}).config.compile_mode == ["max-autotune"]
    env = {"DYNCLI_BENCH_COMPILE_MODE": "default,reduce-overhead"}
    r = resolve("bench", cwd=tmp_path, environ=env)
    assert r.config.compile_mode == ["default", "reduce-overhead"]
    r = resolve("bench", {"compile_mode": ["reduce-overhead"]}, cwd=tmp_path, environ=env)
    assert r.config.compile_mode == ["reduce-overhead"]
    assert BenchConfig().compile_mode == ["default"]
    with pytest.raises(ConfigError, match=re.escape(
            "bench.compile_mode: expected one of default, reduce-overhead, "
            "max-autotune-no-cudagraphs, max-autotune, got 'fast'")):
        resolve("bench", {"compile_mode": ["fast"]}, cwd=tmp_path, environ={})


@pytest.mark.parametrize(("options", "message"), [
    ({"compile_mode": []}, "bench.compile_mode: give at least one compile mode"),
    ({"capture_sizes": [8, 16]}, "bench.capture_sizes: only a mode that records CUDA graphs"),
    ({"rerecord_limit": 4}, "bench.rerecord_limit: only a mode that records CUDA graphs"),
    ({"compile_mode": ["reduce-overhead"], "capture_sizes": [0]},
     "bench.capture_sizes: at most 1000 sizes in [1,"),
    ({"memory_budget": "lots"}, "bench.memory_budget: expected a size like 2GiB"),
    ({"compile_mode": ["default", "reduce-overhead"], "nproc": 2},
     "bench.nproc 2: ranks run one compile mode"),
])
def test_mode_options_that_cannot_be(options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        settings.check(BenchConfig(**options))


def test_memory_budget_sizes() -> None:
    assert parse_bytes("2GiB") == 2 << 30
    assert parse_bytes("512 MiB") == 512 << 20
    assert parse_bytes("1.5GB") == 1_500_000_000
    assert parse_bytes("1048576") == 1 << 20
    for bad in ("", "2 GiBs", "-1", "1e9", "x" * 100):
        with pytest.raises(ValueError):
            parse_bytes(bad)


def test_labels_name_a_run_and_split_back() -> None:
    assert table.label("automatic") == "automatic"
    assert table.label("automatic", "reduce-overhead") == "automatic@reduce-overhead"
    assert table.split("automatic@reduce-overhead") == ("automatic", "reduce-overhead")
    assert table.split("static") == ("static", "default")
    # ties between runs go to the simpler strategy, then the simpler mode
    assert table.simplest(["static@reduce-overhead", "automatic@max-autotune",
                           "automatic@reduce-overhead"]) == "automatic@reduce-overhead"
    run = RunResult("m", "static", "inference", compile_mode="max-autotune-no-cudagraphs")
    assert run.label == "static@max-autotune-no-cudagraphs"


@pytest.mark.parametrize(("plan", "version", "device", "reason"), [
    (Plan("automatic", compile_mode="reduce-overhead"), "2.15.0", "cpu",
     "mode reduce-overhead: CUDA graphs need CUDA (device cpu)"),
    (Plan("automatic", compile_mode="max-autotune"), "2.15.0", "cpu",
     "mode max-autotune: CUDA graphs need CUDA"),
    (Plan("automatic", compile_mode="max-autotune-no-cudagraphs"), "2.15.0", "cpu", None),
    (Plan("automatic", compile_mode="reduce-overhead", rerecord_limit=4), "2.11.0+cu130", "cuda",
     "cudagraph_dynamic_shape_rerecord_limit needs torch >= 2.15 (this is 2.11.0+cu130)"),
    (Plan("automatic", compile_mode="reduce-overhead", capture_sizes=(8,)), "2.6.0", "cuda",
     "cudagraph_capture_sizes needs torch >= 2.8"),
    (Plan("static", compile_mode="reduce-overhead", capture_sizes=(8,)), "2.15.0", "cuda",
     "static graphs have no size key"),
    (Plan("dynamic", compile_mode="reduce-overhead", capture_sizes=(8,), rerecord_limit=2),
     "2.15.0", "cuda", None),
])
def test_what_a_plan_needs(plan: Plan, version: str, device: str, reason: str | None) -> None:
    got = plan.unsupported(version, device)
    assert (got is None) if reason is None else (got is not None and got.startswith(reason))


def test_a_plan_carries_its_mode_and_cuda_graph_config_in_every_form(tmp_path: Path) -> None:
    plan = Plan("automatic", inputs=INPUTS, compile_mode="reduce-overhead",
                capture_sizes=(16, 32, 64), rerecord_limit=3, pad_dims=("batch",))
    assert plan.compile_kwargs() == {"backend": "inductor", "mode": "reduce-overhead"}
    assert plan.inductor_config() == {"triton.cudagraph_capture_sizes": [16, 32, 64],
                                      "triton.cudagraph_dynamic_shape_rerecord_limit": 3}
    assert plan.pad_buckets() == [16, 32, 64]  # inputs padded up to the capture sizes
    assert Plan.from_dict(json.loads(json.dumps(plan.as_dict()))) == plan

    text = emit(plan, "python")
    literal = ast.literal_eval(text.split("PLAN = ", 1)[1].split("\n\n\n", 1)[0])
    assert literal["torch_compile"]["mode"] == "reduce-overhead"
    assert literal["inductor_config"] == plan.inductor_config()
    assert literal["pad_buckets"] == [16, 32, 64]

    env = emit(plan, "env")
    assert "torch.compile(mode='reduce-overhead')" in env
    assert "torch._inductor.config.triton.cudagraph_capture_sizes = (16, 32, 64)" in env
    assert "torch._inductor.config.triton.cudagraph_dynamic_shape_rerecord_limit = 3" in env
    assert "padding inputs up to the capture sizes" in env

    (tmp_path / "plan.toml").write_text(emit(plan, "toml"))
    bench = read_toml(tmp_path / "plan.toml", "plan")["bench"]
    assert bench == {"strategy": ["automatic"], "compile_mode": ["reduce-overhead"],
                     "capture_sizes": [16, 32, 64], "rerecord_limit": 3}
    cfg = BenchConfig(**bench)  # the table measures the same plan again
    settings.check(cfg)
    again = plan_of("automatic", {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
                    {"batch": {"0": [0]}}, pad_dims=("batch",))
    assert again == plan


def test_a_plan_without_cuda_graphs_is_unchanged() -> None:
    plan = Plan("static", inputs=INPUTS, compile_mode="max-autotune-no-cudagraphs")
    assert "inductor_config" not in plan.as_dict()
    assert plan.pad_buckets() is None
    assert plan.compile_kwargs()["mode"] == "max-autotune-no-cudagraphs"
    assert 'compile_mode = ["max-autotune-no-cudagraphs"]' in emit(plan, "toml")
    # capture sizes in the settings reach only a mode that records CUDA graphs
    s = {"compile_mode": ["default", "reduce-overhead"], "capture_sizes": [8]}
    assert plan_of("automatic", s, {}).capture_sizes is None
    assert plan_of("automatic", s, {}, compile_mode="reduce-overhead").capture_sizes == (8,)


def test_runs_read_back_with_their_mode_and_old_ones_as_default() -> None:
    doc = docs.document([docs.run("m", "automatic", 0)])
    old = BenchResult.from_dict(doc).runs[0]
    assert old.compile_mode == "default" and old.label == "automatic"
    run = RunResult("m", "automatic", "inference", compile_mode="reduce-overhead")
    d = run.to_dict()
    assert d["compile_mode"] == "reduce-overhead" and "cudagraphs" not in d  # absent, not zero
    assert RunResult.from_dict(d).compile_mode == "reduce-overhead"


def _moded(runs: list[dict], mode: str) -> list[dict]:
    out = json.loads(json.dumps(runs))
    for r in out:
        r["compile_mode"] = mode
    return out


def test_compare_joins_by_mode_and_reads_a_document_without_modes_as_default(
        tmp_path: Path) -> None:
    old = docs.write(tmp_path / "old.json", docs.base_runs())  # no compile_mode anywhere
    runs = _moded(docs.base_runs(1), "default") + _moded(docs.base_runs(2), "reduce-overhead")
    new = docs.write(tmp_path / "new.json", runs)
    c = compare.run(old, new)
    assert sorted(p.label for p in c.pairs) == ["hf:BertModel/automatic", "hf:BertModel/static",
                                                "resnet18/automatic", "resnet18/static"]
    assert all(p.to_dict()["compile_mode"] == "default" for p in c.pairs)
    assert sorted(c.only_new) == sorted(f"{m}/{s}@reduce-overhead"
                                        for m in ("resnet18", "hf:BertModel")
                                        for s in ("static", "automatic"))
    both = compare.run(new, new)
    pair = next(p for p in both.pairs if p.strategy == "static@reduce-overhead")
    assert pair.to_dict()["strategy"] == "static"
    assert pair.to_dict()["compile_mode"] == "reduce-overhead"


def test_compare_reads_the_mode_column_of_a_dyncli_csv(tmp_path: Path) -> None:
    head = "name,strategy,compile_mode,speedup,abs_latency\n"
    (tmp_path / "a.csv").write_text(head + "m,static,,2.0,1.0\nm,static,reduce-overhead,3.0,0.5\n")
    (tmp_path / "b.csv").write_text("name,strategy,speedup,abs_latency\nm,static,2.0,1.0\n")
    c = compare.run(tmp_path / "b.csv", tmp_path / "a.csv")
    assert [p.label for p in c.pairs] == ["m/static"]
    assert c.only_new == ["m/static@reduce-overhead"]


@pytest.mark.parametrize(("version", "applicable"), [
    ("2.11.0+cu130", False), ("2.12.0", False), ("2.13.0", True), ("2.15.0", True)])
def test_a_per_dim_sources_list_needs_the_torch_that_reads_it(version: str, applicable: bool) -> None:
    """``L['x']:0`` on torch 2.11 or 2.12 matches nothing (their is_dynamic_source matches the
    whole name): measured there, the sources strategy would report plain torch as the list's
    (round 20). It is not_applicable, with the whole-input list that torch reads."""
    plan = Plan("sources", inputs=INPUTS, sources=("L['x']:0", "L['mask']:0", "L['n']"))
    got = plan.unsupported(version, "cpu")
    if applicable:
        assert got is None
    else:
        assert got is not None and "needs torch >= 2.13" in got
        assert got.endswith("give whole inputs: L['x'],L['mask'],L['n']"), got
    # a whole-input list runs on every release that has the strategy
    assert Plan("sources", inputs=INPUTS, sources=("L['x']",)).unsupported(version, "cpu") is None

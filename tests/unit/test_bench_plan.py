"""bench's plan forms: the values from a run reach generated text only through quoting."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st

from dyncli.bench.core import apply as plan_mod
from dyncli.bench.core import strategy as table
from dyncli.bench.core.emit import EMIT_FORMS, emit

NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


def _plan(source: str, strategy: str = "sources") -> plan_mod.Plan:
    return plan_mod.Plan(strategy, inputs=(plan_mod.PlanInput(source, (0,)),),
                         sources=(source, "L['y']:0"), job_id=source)


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_python_form_is_exactly_the_module_whatever_the_names(name: str) -> None:
    for strategy in ("sources", "pgo", "mark-dynamic", "pad"):
        text = emit(_plan(name, strategy), "python")
        tree = ast.parse(text)
        assigned = [t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)]
        # the plan literal is the only place a name can land, and the module's one assignment
        assert assigned == ["PLAN"]
        plan = next(ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign))
        assert plan == _plan(name, strategy).as_dict()
        if strategy == "sources":
            assert plan["compiler_config"] == {"dynamic_sources": f"{name},L['y']:0"}
        if strategy == "pgo":
            assert plan["env"]["TORCH_COMPILE_JOB_ID"] == name


@settings(max_examples=60, deadline=None)
@given(NAMES.filter(lambda s: "\x00" not in s))
def test_env_form_sets_exactly_the_variable_in_sh(name: str) -> None:
    text = emit(_plan(name), "env")
    script = text + 'printf "%s" "$TORCH_COMPILE_DYNAMIC_SOURCES"\n'
    out = subprocess.run(["sh", "-c", script], capture_output=True, timeout=10, check=True)
    assert out.stdout.decode("utf-8", "surrogateescape") == f"{name},L['y']:0"


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_toml_form_round_trips(name: str) -> None:
    doc = tomllib.loads(emit(_plan(name), "toml"))
    assert doc["bench"]["dynamic_sources"] == [name, "L['y']:0"]
    assert doc["bench"]["strategy"] == ["sources"]


def test_apply_document_per_strategy() -> None:
    pad = plan_mod.Plan("pad", inputs=plan_mod.from_dims({"0": (0,)}, {}), buckets=(4, 16))
    assert pad.as_dict()["pad_buckets"] == [4, 16]
    assert pad.as_dict()["torch_compile"] == {"backend": "inductor", "dynamic": False}
    assert "buckets = \"4,16\"" in emit(pad, "toml")
    assert "padding inputs to buckets" in emit(pad, "env")
    pgo = plan_mod.Plan("pgo", job_id="svc")
    assert pgo.requires() and "profiling" in pgo.requires()[0]
    assert "export TORCH_COMPILE_JOB_ID=\"svc\"" in emit(pgo, "env")
    warm = plan_mod.Plan("static", start="warm")
    assert any("save_cache_artifacts" in s for s in warm.as_dict()["requires"])
    assert plan_mod.Plan("eager").compile_kwargs() == {}
    assert "mode" not in plan_mod.Plan("static").compile_kwargs()
    assert plan_mod.Plan("static", compile_mode="reduce-overhead").compile_kwargs()["mode"] \
        == "reduce-overhead"
    with pytest.raises(ValueError, match="no plan to emit"):
        emit(plan_mod.Plan("collectives"), "python")  # measured under ranks, never emitted
    with pytest.raises(ValueError, match="unknown strategy"):
        plan_mod.Plan("nonexistent")
    with pytest.raises(ValueError):
        emit(plan_mod.Plan("static"), "yaml")


def test_apply_document_reads_back_into_the_same_plan() -> None:
    for p in (plan_mod.Plan("pad", inputs=plan_mod.from_dims({"0": (0,)}, {"1": (1,)}),
                            buckets=(4, 16), predicted_compiles=2, pad_dims=("batch",),
                            pad_outputs=((0, None), (0, 1))),
              plan_mod.Plan("sources", sources=("L['x']:0", "L['n']")),
              plan_mod.Plan("pgo", job_id="svc", start="warm"),
              plan_mod.Plan("static", compile_mode="max-autotune-no-cudagraphs"),
              plan_mod.Plan("pad", buckets=None)):
        back = plan_mod.Plan.from_dict(p.as_dict())
        assert back == p
        assert emit(back, "python") == emit(p, "python")


@pytest.mark.parametrize("row", table.TABLE, ids=lambda r: r.name)
def test_every_row_makes_a_plan_whose_forms_say_what_the_row_does(row: table.Strategy) -> None:
    """A plan is its row: each field of the row reaches the plan, and every form of it."""
    p = plan_mod.Plan(row.name, inputs=plan_mod.from_dims({"0": (0,)}, {}),
                      sources=("L['x']:0",), job_id="svc")
    d = p.as_dict()
    assert d["torch_compile"].get("dynamic") == (row.dynamic if row.compiles else None)
    assert bool(d["torch_compile"]) == row.compiles
    assert d["stance"] == row.stance
    assert (d["pad_buckets"] is not None) == row.pads
    assert bool(d["mark_dynamic"]) == row.marks
    for s in row.settings:
        config = d["dynamo_config" if s.module == "dynamo" else "compiler_config"]
        assert s.key in config and (s.env is None or s.env in d["env"])
    if not row.recommendable:
        return
    env, toml = emit(p, "env"), emit(p, "toml")
    for s in row.settings:
        assert (s.env in env) if s.env else (s.key in env)  # said, or named as code-only
    assert tomllib.loads(toml)["bench"]["strategy"] == [row.name if row.compiles else "automatic"]
    assert set(EMIT_FORMS) == {"python", "env", "toml"}


def test_toml_for_eager_says_so_and_carries_the_traffic(tmp_path: Path) -> None:
    """Round 26: an eager recommendation wrote ``strategy = ["automatic"]`` with no word and
    no stream, dtype or mode, so measuring again from it measured other traffic."""
    eager = plan_mod.Plan("eager")
    bare = emit(eager, "toml")
    assert "# recommended: eager (serve the model without torch.compile)" in bare
    assert "strategy line is automatic, torch.compile's default" in bare
    assert tomllib.loads(bare)["bench"] == {"strategy": ["automatic"]}
    settings = {"strategy": ["static", "automatic"], "compile_mode": ["default"],
                "sizes": [1, 3, 8, 8, 16], "requests": 200, "mode": "training",
                "dtype": "bfloat16", "device": "cpu", "seed": 3, "variations": 4,
                "buckets": "pow2", "dynamic_sources": [], "warmup": 1, "repeat": 3,
                "batch_size": None, "hf_config": {"n": 1}}
    text = emit(eager, "toml", settings)
    assert "strategy line is what it was chosen over" in text
    assert tomllib.loads(text)["bench"] == {
        "strategy": ["static", "automatic"], "sizes": [1, 3, 8, 8, 16], "requests": 200,
        "mode": "training", "dtype": "bfloat16", "device": "cpu", "hf_config": {"n": 1},
        "warmup": 1, "repeat": 3}
    # a --shapes file is written absolute (bench reads it from the working directory); the
    # seeded plan's keys only when no stream file or sizes say the traffic
    shaped = tomllib.loads(emit(plan_mod.Plan("automatic"), "toml",
                                {**settings, "sizes": [], "shapes": "traffic.csv"}))["bench"]
    assert shaped["shapes"] == str(Path("traffic.csv").resolve()) and "seed" not in shaped
    assert shaped["strategy"] == ["automatic"]
    seeded = tomllib.loads(emit(eager, "toml", {**settings, "sizes": []}))["bench"]
    assert (seeded["seed"], seeded["variations"]) == (3, 4)


def test_toml_says_a_setting_it_cannot_write_instead_of_raising() -> None:
    """Round 27: a --shapes path that is not UTF-8 (a surrogate-escaped byte, as Python names
    it) raised ValueError out of --emit toml after the whole run; TOML has no such string."""
    text = emit(plan_mod.Plan("eager"), "toml", {"strategy": ["automatic"],
                                                 "shapes": "/tmp/traffic-\udcff.csv",
                                                 "mode": "training"})
    doc = tomllib.loads(text)["bench"]
    assert "shapes" not in doc and doc["mode"] == "training"
    assert "# shapes: not written (TOML cannot hold it: a name that is not UTF-8); give " \
           "--shapes again" in text


def test_toml_carries_the_hf_config_and_matmul_precision_the_run_measured() -> None:
    """Round 35: the toml left out ``hf_config`` ("give it again"), so ``dyncli bench
    hf:Qwen2Model --config plan.toml`` of a one-layer run measured transformers' default
    Qwen2 config (32 layers, hidden size 4096) without a word; and ``matmul_precision``,
    which changes every float32 matmul."""
    hf = {"num_hidden_layers": 1, "hidden_act": "gelu", "layer_norm_eps": 1e-06, "tie": True,
          "odd.key": 2, 'q"uote': "a\nb"}
    settings = {"strategy": ["automatic"], "sizes": [1, 2], "hf_config": hf,
                "matmul_precision": "high"}
    text = emit(plan_mod.Plan("dynamic"), "toml", settings)
    bench = tomllib.loads(text)["bench"]
    assert bench["hf_config"] == hf and bench["matmul_precision"] == "high"
    assert "hf_config = {num_hidden_layers = 1, " in text  # bare keys where TOML allows them
    # what TOML cannot hold (a null from --hf-config pad_token_id=null) is said, not dropped
    text = emit(plan_mod.Plan("dynamic"), "toml", {**settings, "hf_config": {"pad_token_id": None}})
    assert "hf_config" not in tomllib.loads(text)["bench"]
    assert "# hf_config: not written (TOML cannot hold one of its values); give --hf-config " \
        "again" in text.splitlines()
    # unset: nothing written
    assert "hf_config" not in emit(plan_mod.Plan("dynamic"), "toml", {**settings, "hf_config": {}})

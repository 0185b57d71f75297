"""bench's plan forms: the values from a run reach generated text only through quoting."""

from __future__ import annotations

import ast
import subprocess

import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st

from dyncli.bench.core import apply as plan_mod

NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


def _plan(source: str, strategy: str = "sources") -> plan_mod.Plan:
    return plan_mod.Plan(strategy, inputs=(plan_mod.PlanInput(source, (0,)),),
                         sources=(source, "L['y']:0"), job_id=source)


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_python_form_is_exactly_the_module_whatever_the_names(name: str) -> None:
    for strategy in ("sources", "pgo", "mark-dynamic", "pad"):
        text = _plan(name, strategy).emit("python")
        tree = ast.parse(text)
        assigned = [t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)]
        # the constants block is the only place a name can land, as a literal
        assert assigned[:3] == ["STRATEGY", "COMPILE_KWARGS", "DYNAMO_CONFIG"]
        ns: dict[str, object] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                ns[node.targets[0].id] = ast.literal_eval(node.value)
        if strategy == "sources":
            assert ns["COMPILER_CONFIG"] == {"dynamic_sources": f"{name},L['y']:0"}
        if strategy == "pgo":
            assert ns["ENV"]["TORCH_COMPILE_JOB_ID"] == name


@settings(max_examples=60, deadline=None)
@given(NAMES.filter(lambda s: "\x00" not in s))
def test_env_form_sets_exactly_the_variable_in_sh(name: str) -> None:
    text = _plan(name).emit("env")
    script = text + 'printf "%s" "$TORCH_COMPILE_DYNAMIC_SOURCES"\n'
    out = subprocess.run(["sh", "-c", script], capture_output=True, timeout=10, check=True)
    assert out.stdout.decode("utf-8", "surrogateescape") == f"{name},L['y']:0"


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_toml_form_round_trips(name: str) -> None:
    doc = tomllib.loads(_plan(name).emit("toml"))
    assert doc["bench"]["dynamic_sources"] == [name, "L['y']:0"]
    assert doc["bench"]["strategy"] == ["sources"]


def test_apply_document_per_strategy() -> None:
    pad = plan_mod.Plan("pad", inputs=plan_mod.from_dims({"0": (0,)}, {}), buckets=(4, 16))
    assert pad.as_dict()["pad_buckets"] == [4, 16]
    assert pad.as_dict()["torch_compile"] == {"backend": "inductor", "dynamic": False}
    assert "buckets = \"4,16\"" in pad.emit("toml")
    assert "padding inputs to buckets" in pad.emit("env")
    pgo = plan_mod.Plan("pgo", job_id="svc")
    assert pgo.requires() and "profiling" in pgo.requires()[0]
    assert "export TORCH_COMPILE_JOB_ID=\"svc\"" in pgo.emit("env")
    warm = plan_mod.Plan("static", start="warm")
    assert any("save_cache_artifacts" in s for s in warm.as_dict()["requires"])
    assert plan_mod.Plan("eager").compile_kwargs() == {}
    with pytest.raises(ValueError):
        plan_mod.Plan("collectives")
    with pytest.raises(ValueError):
        plan_mod.Plan("static").emit("yaml")


def test_apply_document_reads_back_into_the_same_plan() -> None:
    for p in (plan_mod.Plan("pad", inputs=plan_mod.from_dims({"0": (0,)}, {"1": (1,)}),
                            buckets=(4, 16), predicted_compiles=2),
              plan_mod.Plan("sources", sources=("L['x']:0", "L['n']")),
              plan_mod.Plan("pgo", job_id="svc", start="warm"),
              plan_mod.Plan("pad", buckets=None)):
        back = plan_mod.Plan.from_dict(p.as_dict())
        assert back.as_dict() == p.as_dict()
        assert back.emit("python") == p.emit("python")

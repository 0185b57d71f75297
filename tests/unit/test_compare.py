"""dyncli compare on synthetic bench documents and CSVs: joins, statistics, verdicts, gates."""

from __future__ import annotations

import json
from pathlib import Path

import compare_docs as docs
import pytest

from dyncli.compare import api, render
from dyncli.compare.load import model_key, read
from dyncli.errors import ConfigError, GateError, InputError, UsageError

HARNESS_CSV = """dev,name,batch_size,speedup,abs_latency,compilation_latency,compression_ratio
cpu,resnet18,8,1.9,1.05,12.5,1.0
cpu,resnet18,8,2.1,0.95,12.7,1.0
cpu,BertModel,4,1.5,3.0,20.0,1.0
"""


def _pairs(result: api.Comparison) -> dict[str, api.Pair]:
    return {p.label: p for p in result.pairs}


def test_same_file_has_no_change_and_no_regression(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    result = api.run(a, a, fail_on=["regression", "recompiles"])
    assert len(result.pairs) == 4 and not result.only_base and not result.only_new
    for pair in result.pairs:
        assert pair.latency_ms.change == pytest.approx(0.0)
        assert pair.latency_ms.p_value == pytest.approx(1.0)
        assert pair.compiles.change == 0 and not pair.regressions
    result.check()  # does not raise


def test_compiled_samples_scaled_by_1_5_is_a_regression_of_that_model_only(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    result = api.run(a, b, fail_on=["regression"])
    pairs = _pairs(result)
    slow = pairs["resnet18/static"]
    assert slow.latency_ms.change == pytest.approx(0.5)
    assert slow.latency_ms.p_value < 0.001
    assert slow.speedup.change == pytest.approx(1 / 1.5 - 1, rel=0.05)
    assert any(r.startswith("latency +50.0%") for r in slow.regressions)
    assert any(r.startswith("speedup -33") for r in slow.regressions)
    assert {p.model for p in result.regressions} == {"resnet18"}
    with pytest.raises(GateError, match="resnet18/static") as err:
        result.check()
    assert "BertModel" not in err.value.message and err.value.exit_code == 1


def test_noise_from_the_same_distribution_is_not_a_regression(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs(seed=0))
    b = docs.write(tmp_path / "b.json", docs.base_runs(seed=100))
    result = api.run(a, b)
    assert not result.regressions
    assert all(abs(p.latency_ms.change or 0) < 0.05 for p in result.pairs)


def test_small_significant_change_under_threshold_is_not_a_regression(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.03))
    result = api.run(a, b)
    assert not result.regressions
    assert api.run(a, b, threshold=0.01).regressions


def test_faster_is_an_improvement(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "hf:BertModel", 0.5))
    pair = _pairs(api.run(a, b))["hf:BertModel/static"]
    assert not pair.regressions and pair.improvements[0].startswith("latency -50.0%")


def test_more_compiles_and_a_new_failure_are_regressions(tmp_path: Path) -> None:
    runs = docs.base_runs()
    a = docs.write(tmp_path / "a.json", runs)
    new = json.loads(json.dumps(runs))
    new[1]["compiles"] = 3  # resnet18/automatic
    new[3]["status"] = "fail_to_compile"  # BertModel/automatic
    b = docs.write(tmp_path / "b.json", new)
    result = api.run(a, b, fail_on=["recompiles"])
    pairs = _pairs(result)
    assert pairs["resnet18/automatic"].regressions == ["compiles 2 -> 3"]
    assert pairs["hf:BertModel/automatic"].regressions == ["status pass -> fail_to_compile"]
    assert [p.label for p in result.tripped] == ["resnet18/automatic"]
    with pytest.raises(GateError, match="resnet18/automatic: compiles 2 -> 3"):
        result.check()


def test_models_and_strategies_in_one_file_only_are_listed(tmp_path: Path) -> None:
    runs = docs.base_runs()
    a = docs.write(tmp_path / "a.json", runs[:3])
    b = docs.write(tmp_path / "b.json", [*runs[1:], docs.run("vit", "static", 9)])
    result = api.run(a, b)
    assert result.only_base == ["resnet18/static"]
    assert result.only_new == ["hf:BertModel/automatic", "vit/static"]
    assert len(result.pairs) == 2


def test_harness_csv_joins_by_model_and_says_it_has_no_samples(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    csv_path = tmp_path / "harness.csv"
    csv_path.write_text(HARNESS_CSV)
    side = read(csv_path)
    assert side.kind == "harness-csv" and not side.has_samples
    assert side.records[("resnet18", None, None)].speedup == pytest.approx(2.0)
    assert side.records[("resnet18", None, None)].compile_s == pytest.approx(12.6)
    result = api.run(csv_path, a)
    assert sorted(p.label for p in result.pairs) == [
        "hf:BertModel/automatic", "hf:BertModel/static", "resnet18/automatic", "resnet18/static"]
    assert all(p.latency_ms.p_value is None and not any("latency" in r for r in p.regressions)
               for p in result.pairs)
    assert any("harness-csv without raw samples" in n for n in result.notes)
    assert all("no p-value: base has no raw samples" in p.notes for p in result.pairs)


def test_dyncli_csv_keeps_strategies(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("dev,name,batch_size,speedup,abs_latency,compilation_latency,strategy,"
                    "unique_graphs,status\n"
                    "cpu,resnet18,8,2.0,1.0,3.0,static,4,pass\n"
                    "cpu,resnet18,9,2.2,1.1,1.0,static,4,pass\n"
                    "cpu,resnet18,8,1.5,1.2,2.0,automatic,2,pass\n")
    side = read(path)
    assert side.kind == "dyncli-csv"
    static = side.records[("resnet18", "static", None)]
    assert static.compiles == 4 and static.compile_s == pytest.approx(4.0)
    assert static.speedup == pytest.approx(2.1)


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("", "is empty"),
    ("{not json", "not valid JSON"),
    ('{"command": "diagnose", "runs": []}', "not a dyncli bench result"),
    ("a,b\n1,2\n", "neither a dyncli bench JSON nor a benchmark CSV"),
])
def test_unreadable_inputs_exit_2_naming_the_file(tmp_path: Path, content: str | None,
                                                  message: str) -> None:
    good = docs.write(tmp_path / "a.json", docs.base_runs())
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    with pytest.raises(InputError, match=message) as err:
        api.run(good, bad)
    assert str(bad) in err.value.message and err.value.exit_code == 2


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    with pytest.raises(ConfigError, match=r"compare\.fail_on: expected one of regression, recompiles"):
        api.run(a, a, fail_on=["slower"])
    with pytest.raises(UsageError, match="alpha"):
        api.run(a, a, alpha=0)


def test_pooled_samples_when_the_shapes_differ(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", [docs.run("m", "static", 0)])
    b = docs.write(tmp_path / "b.json", [docs.run("m", "static", 1, compiled_ms=2.0,
                                                  batches=(11, 12, 13, 14))])
    pair = api.run(a, b).pairs[0]
    assert "pooled" in pair.notes[0]
    assert pair.latency_ms.p_value is not None and pair.latency_ms.p_value < 0.01
    assert pair.regressions


def test_json_document_and_markdown(tmp_path: Path) -> None:
    a = docs.write(tmp_path / "a.json", docs.base_runs())
    b = docs.write(tmp_path / "b.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    result = api.run(a, b, fail_on=["regression"])
    doc = result.to_dict()
    assert doc["command"] == "compare" and doc["schema_version"] == 1
    assert doc["summary"] == {"pairs": 4, "regressions": 2, "recompiles": 0, "tripped": 2,
                              "latency_not_gated": 0}
    assert doc["machine"]["changed"] is False and doc["machine"]["said"] is None
    json.dumps(doc, allow_nan=False)
    md = render.to_markdown(result)
    lines = md.splitlines()
    assert lines[0] == "### dyncli compare ❌"
    table = [ln for ln in lines if ln.startswith("| ")]
    assert table[0].startswith("| model | strategy | speedup")
    assert table[1].startswith("| resnet18 | static") and "**REGRESSION" in table[1]
    assert len(table) == 5


def test_model_key_drops_source_prefixes() -> None:
    assert model_key("timm:convnext_tiny") == "convnext_tiny"
    assert model_key("hf:BertModel") == "BertModel"
    assert model_key("examples/model.py:build") == "examples/model.py:build"


def test_same_join_name_from_two_sources_keeps_both(tmp_path: Path) -> None:
    runs = [docs.run("efficientnet_b0", "static", 0), docs.run("timm:efficientnet_b0", "static", 1)]
    side = read(docs.write(tmp_path / "a.json", runs))
    assert sorted(side.records) == [("efficientnet_b0", "static", "inference"),
                                   ("timm:efficientnet_b0", "static", "inference")]


def test_two_files_with_no_row_in_common_are_an_error_naming_both_sides(tmp_path: Path) -> None:
    """Round 26: two results of different models printed an empty table and exited 0, even
    with --fail-on regression: a CI gate that compared nothing passed."""
    a = docs.write(tmp_path / "a.json", [docs.run("m1.py:build", "static", 0)])
    b = docs.write(tmp_path / "b.json", [docs.run("m2.py:build", "static", 1),
                                         docs.run("m2.py:build", "automatic", 2)])
    for gates in ([], ["regression"]):
        with pytest.raises(InputError) as err:
            api.run(a, b, fail_on=gates)
        assert err.value.exit_code == 2
        assert err.value.message == (
            f"nothing compared: no (model, strategy, mode) is in both files; base ({a}) has "
            f"m1.py:build/static; new ({b}) has m2.py:build/static, m2.py:build/automatic")


def test_the_same_model_in_another_mode_is_not_compared(tmp_path: Path) -> None:
    training = docs.run("resnet18", "static", 1)
    training["mode"] = "training"
    a = docs.write(tmp_path / "a.json", [docs.run("resnet18", "static", 0)])
    b = docs.write(tmp_path / "b.json", [training])
    with pytest.raises(InputError, match=r"has resnet18/static; new .* has "
                                         r"resnet18/static \(training\)$"):
        api.run(a, b)


def test_a_base_row_missing_in_the_new_run_trips_the_gate(tmp_path: Path) -> None:
    runs = docs.base_runs()
    a = docs.write(tmp_path / "a.json", runs)
    b = docs.write(tmp_path / "b.json", [*runs[1:], docs.run("vit", "static", 9)])
    listed = api.run(a, b)  # no gate: listed, exit 0
    assert listed.only_base == ["resnet18/static"] and listed.missing == []
    listed.check()
    assert "only in base (not compared): resnet18/static" in render._footer(listed)
    gated = api.run(a, b, fail_on=["regression"])
    assert gated.missing == ["resnet18/static"] and gated.to_dict()["summary"]["tripped"] == 1
    with pytest.raises(GateError) as err:
        gated.check()
    assert err.value.message == ("--fail-on regression: not in new (not measured, so not "
                                 "compared): resnet18/static")
    assert render.to_markdown(gated).startswith("### dyncli compare ❌")
    # a model only the new run has (the PR added it) is no failure
    api.run(b, b, fail_on=["regression"]).check()
    assert not api.run(a, docs.write(tmp_path / "c.json", [*runs, docs.run("vit", "static", 9)]),
                       fail_on=["regression"]).missing


def test_one_files_inference_and_training_rows_of_a_model_stay_apart(tmp_path: Path) -> None:
    """Round 27: rows joined by mode, but a file's rows were keyed by (model, strategy): a
    CSV's inference and training rows of one model became one record (medians across both),
    and a document's training run replaced its inference run."""
    header = "dev,name,batch_size,speedup,abs_latency,compilation_latency,strategy,mode,unique_graphs\n"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(header + "cpu,m,1,2.0,1.0,1.0,automatic,inference,2\n"
                          "cpu,m,1,1.1,10.0,5.0,automatic,training,2\n")
    b.write_text(header + "cpu,m,1,2.0,1.0,1.0,automatic,inference,2\n"
                          "cpu,m,1,1.1,10.0,5.0,automatic,training,4\n")
    result = api.run(a, b, fail_on=["recompiles"])
    pairs = _pairs(result)
    assert sorted(pairs) == ["m/automatic", "m/automatic (training)"]
    assert pairs["m/automatic"].latency_ms.base == pytest.approx(1.0)
    assert pairs["m/automatic (training)"].latency_ms.base == pytest.approx(10.0)
    assert [p.label for p in result.tripped] == ["m/automatic (training)"]
    assert [(p["mode"], p["compiles"]["new"]) for p in result.to_dict()["pairs"]] == [
        ("inference", 2), ("training", 4)]
    training = docs.run("resnet18", "static", 1, compiles=4)
    training["mode"] = "training"
    doc = docs.write(tmp_path / "a.json", [docs.run("resnet18", "static", 0), training])
    assert sorted(p.label for p in api.run(doc, doc).pairs) == [
        "resnet18/static", "resnet18/static (training)"]
    # the table's model cell and the markdown row say which row is the training one
    assert [render.cells(p)[0] for p in result.pairs] == ["m", "m (training)"]

"""What ran eagerly, how strategies were kept apart, which caches served a compile (issue #32
items 1 and 5, issue #34 item 2): the torch-free parts, on synthetic results (no torch)."""

from __future__ import annotations

import json

from conftest_bench import sample_result, variation
from rich.console import Console

from dyncli.bench.core import caches, machine, recommend
from dyncli.bench.core.caches import CacheState
from dyncli.bench.core.measured import (
    PROCESS_EACH,
    SAME_WINDOW,
    SEQUENTIAL,
    Measured,
    apart_reason,
    eager_detail,
    eager_share,
)
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status, worst
from dyncli.bench.render import comparison_table, print_result, stream_table, variation_table
from dyncli.output import Output, to_json_text

LIMIT = "torch._dynamo hit config.recompile_limit (8)\n   function: 'forward' (m.py:3)"


def _text(renderable: object) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def test_ran_eager_is_a_failure_between_compile_and_accuracy_failures() -> None:
    assert Status.RAN_EAGER.failed and Status.parse("ran_eager") is Status.RAN_EAGER
    assert worst([Status.PASS, Status.RAN_EAGER, Status.FAIL_ACCURACY]) is Status.RAN_EAGER
    assert worst([Status.RAN_EAGER, Status.FAIL_TO_COMPILE]) is Status.FAIL_TO_COMPILE


def test_eager_detail_says_what_ran_and_why() -> None:
    assert eager_detail(1, [], 0) is None  # a compiled graph served it
    assert eager_detail(0, [], 0) == "no compiled graph served this shape: torch ran it eagerly"
    assert eager_detail(0, [LIMIT], 0).endswith(
        "torch ran it eagerly after torch._dynamo hit config.recompile_limit (8)")
    assert eager_detail(0, [LIMIT], 1).endswith("after torch._dynamo hit config.recompile_limit (8)")
    assert eager_detail(2, [LIMIT], 0) == ("a frame ran eagerly: torch._dynamo hit "
                                           "config.recompile_limit (8)")  # one frame of several
    assert eager_detail(2, [LIMIT], 1) is None  # the limit came before, this call compiled


def test_eager_share_counts_requests_not_shapes() -> None:
    statuses = {0: Status.PASS, 1: Status.RAN_EAGER}
    assert eager_share(statuses, [0, 0, 0, 1]) == 0.25
    assert eager_share(statuses, []) == 0.0


def _ran_eager_result() -> BenchResult:
    result = sample_result()
    result.settings["sizes"] = [8, 10]
    result.shapes_source = "sizes"
    result.stream_ids = [0, 1, 1, 1]
    static = result.runs[0]
    static.variations[1].status = Status.RAN_EAGER
    static.variations[1].compiled_samples = [0.5, 0.5, 0.5]  # "fast": it must still not win
    static.status, static.eager_share = Status.RAN_EAGER, 0.75
    return result


def test_a_strategy_that_ran_eagerly_is_not_costed_or_recommended() -> None:
    result = _ran_eager_result()
    recommend.apply(result)
    static, dynamic = result.runs
    assert static.stream is None and dynamic.stream is not None
    assert result.recommendation is not None
    assert result.recommendation.strategy != "static"
    rows = _text(stream_table(result))
    assert "ran_eager 75%" in rows
    assert "ran_eager 75%" in _text(comparison_table(result))


def test_the_share_and_the_measured_state_round_trip_through_json() -> None:
    result = _ran_eager_result()
    result.runs[0].variations[0].cache_hits = {"fxgraph": 1, "aotautograd": 1}
    result.measured = Measured(PROCESS_EACH, apart_reason("2.11.0"),
                               CacheState("warm", "/tmp/ind", "/tmp/ind/triton"))
    doc = json.loads(to_json_text(result.to_dict()))
    assert doc["measured"] == {"driver": "process-each", "why": apart_reason("2.11.0"),
                               "caches": {"state": "warm", "inductor_dir": "/tmp/ind",
                                          "triton_dir": "/tmp/ind/triton"}}
    assert doc["runs"][0]["eager_share"] == 0.75
    assert doc["runs"][0]["variations"][0]["cache_hits"] == {"fxgraph": 1, "aotautograd": 1}
    assert "cache_hits" not in doc["runs"][1]["variations"][0]  # none: not written
    again = BenchResult.from_dict(doc)
    assert again.measured == result.measured and again.runs[0].eager_share == 0.75
    assert again.runs[0].variations[0].cache_hits == {"fxgraph": 1, "aotautograd": 1}
    assert json.loads(to_json_text(again.to_dict())) == doc


def test_cache_hits_read_and_add_up() -> None:
    assert caches.delta({"fxgraph": 3, "aotautograd": 1}, {"fxgraph": 5, "aotautograd": 1}) \
        == {"fxgraph": 2}
    assert caches.total([{"fxgraph": 1}, {}, {"fxgraph": 2, "aotautograd": 1}]) \
        == {"fxgraph": 3, "aotautograd": 1}
    assert caches.label({}) == "" and caches.label({"fxgraph": 0}) == ""
    assert caches.label({"fxgraph": 1}) == "FX graph hit"
    assert caches.label({"aotautograd": 1, "fxgraph": 1}) == "FX graph+AOTAutograd hits"
    assert caches.label({"fxgraph": 3}, count=True) == "3 FX graph hits"
    assert caches.label({"triton": 4, "fxgraph": 1}) == "FX graph+Triton kernel hits"
    assert caches.read_hits({"fxgraph": 2, "x": True, "y": -1, "z": "1"}) == {"fxgraph": 2}
    assert caches.read_hits(None) == {}


def test_a_cache_hit_is_shown_where_the_compile_seconds_are() -> None:
    result = sample_result()
    static = result.runs[0]
    static.variations[1].cache_hits = {"fxgraph": 1}
    table = _text(variation_table(static))
    assert "yes 0.50 s FX graph hit" in table  # the compile the hit served
    assert table.count("FX graph hit") == 1  # the compile from an empty cache says nothing
    assert "1.0 (1 FX graph hit)" in _text(comparison_table(result))


def test_how_strategies_were_measured_is_said_when_they_were_not_in_one_window(
        capsys: object) -> None:
    result = sample_result()
    result.measured = Measured(PROCESS_EACH, apart_reason("2.11.0"))
    print_result(result, Output())
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "strategies measured in separate processes, one each (torch 2.11.0 cannot" in out
    assert "isolate_recompiles came in 2.13" in " ".join(out.split())
    for quiet in (Measured(SAME_WINDOW), Measured(PROCESS_EACH, None)):
        assert not quiet.words(1)  # one strategy: nothing to compare
    assert Measured(SAME_WINDOW).words(3) == []
    assert Measured(SEQUENTIAL).words(2)[0].startswith("strategies measured one after")
    assert Measured(SEQUENTIAL, "why").words(2) == []  # drivers.choose warned with the why
    assert Measured(caches=CacheState("warm", "/c", "/c/triton")).words(1)[0].startswith(
        "caches: warm, the user's own (inductor /c, Triton /c/triton)")


def test_the_processes_loads_combine_and_their_eager_drift_is_across_them() -> None:
    a = {"cores": 2, "readings": 3, "load_min": 1.0, "load_max": 2.0,
         "others_cpu_share": 0.1, "steal_share": 0.0, "eager_probe_ms": [1.0, 1.1]}
    b = {"cores": 2, "readings": 2, "load_min": 3.0, "load_max": 4.5,
         "others_cpu_share": 0.4, "steal_share": None, "eager_probe_ms": [2.0, 2.2]}
    load = machine.combine([a, b])
    assert load["readings"] == 5 and load["processes"] == 2
    assert (load["load_min"], load["load_max"], load["others_cpu_share"]) == (1.0, 4.5, 0.4)
    assert load["eager_probe_ms"] == [1.0, 1.1, 2.0, 2.2] and load["eager_drift"] == 2.2
    assert load["own_load"] is None and load["others_load"] is None  # before round 29


def test_the_busiest_process_own_and_others_load_are_kept_together() -> None:
    a = {"cores": 2, "load_min": 1.0, "load_max": 2.0, "own_load": 1.8, "others_load": 0.2}
    b = {"cores": 2, "load_min": 2.0, "load_max": 3.5, "own_load": 1.1, "others_load": 2.4}
    load = machine.combine([a, b])
    assert (load["others_load"], load["own_load"]) == (2.4, 1.1)
    assert machine.load_warnings(load, None)[0].endswith("this run's own work about 1.1 of it")


def test_a_run_without_the_new_fields_reads_back_as_before() -> None:
    run = RunResult.from_dict({"model": "m", "strategy": "static",
                               "variations": [variation(0, 8, 2.0, 1.0, True).to_dict()]})
    assert run.eager_share is None and run.variations[0].cache_hits == {}
    assert "eager_share" not in run.to_dict()

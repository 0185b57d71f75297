"""Request streams and their cost model (dyncli.bench.core: stream_file, plan, cost, recommend): no torch."""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.bench.core import cost, plan, recommend, settings, stream_file
from dyncli.bench.core.cost import Candidate, CompileEvent
from dyncli.bench.core.result import BenchResult, Environment, Replay, RunResult
from dyncli.bench.core.stream_file import StreamError
from dyncli.bench.render_files import to_csv
from dyncli.config import BenchConfig
from dyncli.errors import InputError, UsageError
from tests.unit.conftest_bench import variation

ROOT = Path(__file__).resolve().parents[2]


def test_csv_counts_expand_in_order_and_blank_seq_is_base() -> None:
    text = "batch,seq,count\n8,,2\n1,16,1\n\n3,32,\n"
    assert stream_file.parse_stream(text, "t.csv") == [(8, None), (8, None), (1, 16), (3, 32)]


def test_jsonl_with_only_seq() -> None:
    text = '{"seq": 128, "count": 2}\n\n{"seq": 7}\n'
    assert stream_file.parse_stream(text, "t.jsonl") == [(None, 128), (None, 128), (None, 7)]


@pytest.mark.parametrize(("text", "message"), [
    ("size,count\n8,1\n", "t: line 1: the header needs a batch and/or seq column"),
    ("batch,count\n8,0\n", "t: line 2: count must be >= 1, got 0"),
    ("batch\n-1\n", "t: line 2: batch must be >= 0, got -1"),
    ("batch\neight\n", "t: line 2: batch must be an integer, got 'eight'"),
    ('{"batch": 8}\n{"batch": true}\n', "t: line 2: batch must be an integer, got True"),
    ('{"batch": 8}\n[1]\n', "t: line 2: expected an object"),
    ('{"batch": 8\n', "t: line 1: not JSON"),
    ("batch\n", "t: no requests"),
    ('{"count": 3}\n', "t: line 1: needs batch and/or seq"),
    ("batch\n" + "9" * 5000 + "\n", "t: line 2: batch '" + "9" * 39 + "… is above 2,147,483,647"),
    ("batch\n3000000000\n", "t: line 2: batch 3000000000 is above 2,147,483,647"),
    ("batch\n" + "x" * 100_000 + "\n", "t: line 2: batch must be an integer, got '" + "x" * 39 + "…"),
    ("batch,count\n8,10000001\n", "t: line 2: count 10000001 is above 10,000,000"),
    ("batch,count\n8,600000\n9,600000\n", "t: line 3: the stream passes 1,000,000 requests"),
    ('{"batch": ' + "9" * 5000 + "}\n", "t: line 1: not JSON (Exceeds the limit"),
    ('{"batch": ' + "[" * 100_000 + "\n", "t: line 1: not JSON (JSON nested too deeply"),
    # a misspelt count was ignored: every row counted once, the traffic mix silently changed
    ("batch,counts\n8,3\n", "t: line 1: unknown column 'counts'; did you mean count?"),
    ('{"batch": 8}\n{"batch": 8, "cnt": 3}\n', "t: line 2: unknown column 'cnt'; did you mean count?"),
    ('[{"batch": 8}]\n', "t: line 1: a JSON array; give JSON lines"),  # was a CSV header error
    ('{"batch": 8, "count": 1e300}\n', "t: line 1: count 1000000000000000052504760255204420248704… is above 10,000,000"),
])
def test_bad_streams_name_the_line(text: str, message: str) -> None:
    with pytest.raises(StreamError, match="^" + message.replace("(", r"\(").replace("[", r"\[")):
        stream_file.parse_stream(text, "t")


def test_columns_that_are_no_misspelling_are_left_alone() -> None:
    assert stream_file.parse_stream("timestamp,batch\n1,8\n", "t") == [(8, None)]
    assert stream_file.parse_stream('{"batch": 8, "model": "a"}\n', "t") == [(8, None)]
    # a column near batch/seq/count beside the real one is another column, not a misspelling
    assert stream_file.parse_stream("batch,batch_id,count\n8,1,2\n", "t") == [(8, None)] * 2
    assert stream_file.parse_stream('{"batch": 8, "batch_id": 7}\n', "t") == [(8, None)]


def test_requests_are_bounded_before_the_stream_is_built() -> None:
    with pytest.raises(StreamError, match=r"--requests 10,000,000,000 is above 1,000,000"):
        stream_file.fit([(8, None)], 10**10)
    assert len(stream_file.fit([(8, None), (1, None)], 1_000_000)) == 1_000_000


def test_sizes_allow_zero_and_one() -> None:
    assert stream_file.parse_sizes([1, 0, 3]) == [(1, None), (0, None), (3, None)]
    with pytest.raises(StreamError):
        stream_file.parse_sizes([-2])


def test_fit_cycles_and_cuts() -> None:
    s = [(1, None), (2, None), (3, None)]
    assert [b for b, _ in stream_file.fit(s, 7)] == [1, 2, 3, 1, 2, 3, 1]
    assert stream_file.fit(s, 2) == s[:2]
    assert stream_file.fit(s, None) == s


def test_distinct_first_sight_order() -> None:
    shapes, ids = stream_file.distinct([(8, None), (1, None), (8, None), (3, None), (1, None)])
    assert shapes == [(8, None), (1, None), (3, None)]
    assert ids == [0, 1, 0, 2, 1]


def test_compile_walk_default_and_eager_first() -> None:
    ids = [0, 0, 1, 0, 2]
    assert stream_file.compile_walk(ids, False) == ([0, 1, 2], [0, 2, 4])
    # eager_then_compile: request 0 runs eager, the compile at request 1 (shape 0 again)
    assert stream_file.compile_walk(ids, True) == ([0, 1, 2], [1, 2, 4])
    # a shape seen only at request 0 never reaches a compiled call in the stream
    assert stream_file.compile_walk([0, 1, 1], True) == ([1, 0], [None, 1])


def test_buckets_and_pad_waste() -> None:
    assert cost.parse_buckets("pow2") is None
    assert cost.parse_buckets("32, 8,16") == [8, 16, 32]
    with pytest.raises(StreamError):
        cost.parse_buckets("8,x")
    assert [cost.bucket_of(s, None) for s in (0, 1, 2, 3, 5, 16, 17)] == [1, 1, 2, 4, 8, 16, 32]
    assert cost.bucket_of(9, [8, 16]) == 16 and cost.bucket_of(17, [8, 16]) is None
    # 5 rows padded to 8 (3 added) and 8 rows unpadded: 3 / 13 real rows
    assert cost.pad_waste([(5, 1), (8, 1)], [(8, 1), (8, 1)]) == pytest.approx(3 / 13)
    assert cost.pad_waste([(2, 10)], [(2, 16)]) == pytest.approx(6 / 10)
    assert math.isinf(cost.pad_waste([(0, 1)], [(1, 1)]))


def test_cost_places_compiles_in_stream_order() -> None:
    # two shapes: 1 ms and 2 ms steady; a 0.5 s compile at request 0 and 0.25 s at request 2
    ids = [0, 0, 1, 1]
    c = cost.cost(ids, [1.0, 2.0], [CompileEvent(0, 0.5), CompileEvent(2, 0.25)])
    assert c.first_result_s == pytest.approx(0.501)
    assert c.total_s == pytest.approx(0.75 + 0.006)
    assert c.weighted_latency_ms == pytest.approx(1.5)
    assert c.compile_s == pytest.approx(0.75) and c.compiles == 2
    assert list(c.curve) == pytest.approx([0.501, 0.502, 0.754, 0.756])


def test_cost_override_for_an_eager_first_request() -> None:
    c = cost.cost([0, 0], [1.0], [CompileEvent(1, 0.5)], overrides={0: 0.01})
    assert c.first_result_s == pytest.approx(0.01)
    assert c.total_s == pytest.approx(0.01 + 0.501)


def test_break_even_within_the_stream_and_projected() -> None:
    eager = [1.0, 2.0, 3.0, 4.0]
    assert cost.break_even([2.5, 2.6, 2.7, 2.8], eager, 100.0, 1000.0) == (3, False)
    # crosses below, back above, below again: the last crossing counts
    assert cost.break_even([0.5, 2.5, 2.9, 3.0], eager, 100.0, 1000.0) == (3, False)
    # still behind by 1 s, 0.5 s cheaper per request: level after the 6th, below from the 7th
    assert cost.break_even([5.0, 5.0, 5.0, 5.0], eager, 500.0, 1000.0) == (7, True)
    assert cost.break_even([5.0, 5.0, 5.0, 5.0], eager, 1000.0, 1000.0) == (None, False)


def test_weighted_samples_weight_by_request_share() -> None:
    ids = [0, 0, 0, 1]
    out = cost.weighted_samples(ids, [[1.0, 2.0], [5.0, 6.0]])
    assert out == pytest.approx([0.75 * 1 + 0.25 * 5, 0.75 * 2 + 0.25 * 6])


def test_recommend_cheapest_that_passed_with_p_value() -> None:
    fast = tuple(1.0 + i * 0.01 for i in range(10))
    slow = tuple(2.0 + i * 0.01 for i in range(10))
    cands = [Candidate("static", 1.0, False, fast, 1.0, 0.5),
             Candidate("dynamic", 3.0, True, slow, 2.0, 1.0, break_even=50),
             Candidate("pad", 2.0, True, fast, 1.0, 1.5, break_even=20)]
    rec = cost.recommend(cands, 100)
    assert rec is not None and rec.strategy == "pad" and rec.runner_up == "dynamic"
    assert rec.p_value is not None and rec.p_value < 0.05
    assert "pad serves faster once compiled" in rec.reason
    assert "not considered (did not pass): static" in rec.reason
    same = cost.recommend([Candidate("a", 1.0, True, fast), Candidate("b", 1.1, True, fast)], 5)
    assert same is not None and "do not differ significantly" in same.reason
    assert cost.recommend([Candidate("x", 1.0, False)], 1) is None


def test_recommend_eager_says_when_compiling_pays_back() -> None:
    rec = cost.recommend([Candidate("eager", 0.1, True), Candidate("dynamic", 3.0, True,
                                                                     break_even=900)], 10)
    assert rec is not None and rec.strategy == "eager"
    assert "pays back only after 900 requests (dynamic)" in rec.reason


def _result(runs: list[RunResult], ids: list[int]) -> BenchResult:
    env = Environment("0", "2.14.1", "3.11", "cpu", "cpu", "float32", 2)
    r = BenchResult("m", env, {}, runs=runs, shapes_source="sizes")
    r.stream_ids, r.requests = ids, len(ids)
    return r


def test_apply_costs_runs_eager_and_recommends() -> None:
    # static compiles at each shape; dynamic once; eager is 2-2.5 ms, compiled 1 ms
    static = RunResult("m", "static", "inference")
    static.variations = [variation(0, 8, 2.0, 1.0, True), variation(1, 10, 2.5, 1.0, True)]
    dynamic = RunResult("m", "dynamic", "inference")
    dynamic.variations = [variation(0, 8, 2.0, 1.0, True), variation(1, 10, 2.5, 1.0, False)]
    dynamic.variations[1].first_call_s = 0.001  # no compile: its first call as its steady state
    for run in (static, dynamic):
        for v in run.variations:
            v.request = v.index * 2
        run.finish()
    ids = [0, 0, 1, 1]
    result = _result([static, dynamic], ids)
    recommend.apply(result)
    assert result.eager_stream is not None
    assert result.eager_stream.total_s == pytest.approx(0.009)
    assert dynamic.stream is not None and static.stream is not None
    # first call 0.5 s, of which 1 ms is the request itself
    assert dynamic.stream.compile_s == pytest.approx(0.499)
    assert static.stream.compile_s == pytest.approx(0.998)
    assert dynamic.stream.break_even is not None and dynamic.stream.break_even_projected
    rec = result.recommendation
    assert rec is not None and rec.strategy == "eager" and rec.runner_up == "dynamic"

    # the CSV carries each strategy's stream cost on its rows, for dashboards
    rows = list(csv.DictReader(io.StringIO(to_csv(result))))
    dyn = [r for r in rows if r["strategy"] == "dynamic"]
    assert len(dyn) == 2 and {r["stream_total_s"] for r in dyn} == {f"{dynamic.stream.total_s:.6g}"}
    assert dyn[0]["stream_requests"] == "4"
    assert dyn[0]["stream_first_result_s"] == f"{dynamic.stream.first_result_s:.6g}"
    assert dyn[0]["break_even_eager"] == str(dynamic.stream.break_even)
    assert dyn[0]["pad_waste"] == "" and dyn[0]["recommended"] == "False"


def test_apply_skips_runs_without_timings() -> None:
    run = RunResult("m", "pad", "inference", status="not_applicable", error="pad: no batch dim")
    ok = RunResult("m", "dynamic", "inference")
    ok.variations = [variation(0, 8, 2.0, 1.0, True)]
    ok.variations[0].request = 0
    result = _result([run, ok], [0, 0])
    recommend.apply(result)
    assert run.stream is None
    assert result.recommendation is not None
    assert "not considered (did not pass): pad" in result.recommendation.reason


def test_user_stream_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such shapes file"):
        plan.user_stream(BenchConfig(shapes=str(tmp_path / "nope.csv")))
    bad = tmp_path / "bad.csv"
    bad.write_text("batch\nx\n")
    with pytest.raises(InputError, match=r"bad.csv: line 2: batch must be an integer"):
        plan.user_stream(BenchConfig(shapes=str(bad)))
    with pytest.raises(UsageError, match="not both"):
        settings.check(BenchConfig(shapes=str(bad), sizes=[1]))
    assert plan.user_stream(BenchConfig(sizes=[0, 1])) == ([(0, None), (1, None)], "sizes")
    assert plan.user_stream(BenchConfig()) is None
    # a device with no end is read only up to the bound
    with pytest.raises(InputError, match=r"/dev/zero: over 64 MB"):
        plan.user_stream(BenchConfig(shapes="/dev/zero"))


def test_shipped_traffic_example_is_skewed_and_valid() -> None:
    requests, _source = plan.user_stream(
        BenchConfig(shapes=str(ROOT / "examples" / "traffic.csv"))) or ([], "")
    sizes = [b for b, _ in requests]
    assert len(sizes) == 160 and sizes.count(1) > len(sizes) / 2 and 0 in sizes
    assert len(set(sizes)) <= 8  # static stays under torch's recompile_limit


def test_traffic_and_costing_do_not_import_torch() -> None:
    code = ("import sys, dyncli.bench.core.cost, dyncli.bench.core.recommend; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr


def _stream_text(result: BenchResult) -> str:
    from rich.console import Console

    from dyncli.bench.render import stream_table

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(stream_table(result))
    return console.export_text()


def _dynamic_run() -> RunResult:
    """dynamic over two variations, each first seen at its own request (0 and 1)."""
    dynamic = RunResult("m", "dynamic", "inference")
    dynamic.variations = [variation(0, 8, 2.0, 1.0, True), variation(1, 10, 2.5, 1.0, False)]
    for v in dynamic.variations:
        v.request = v.index
    dynamic.finish()
    return dynamic


def test_stream_table_shows_pad_and_replay_columns_only_when_they_apply() -> None:
    dynamic = _dynamic_run()
    failed = RunResult("m", "static", "inference", status="fail_to_compile")
    result = _result([dynamic, failed], [0, 1])
    recommend.apply(result)
    text = _stream_text(result)
    header = next(line for line in text.splitlines() if "total s" in line)
    assert "pad waste" not in header and "replay" not in header
    static_row = next(line for line in text.splitlines() if line.strip().startswith("static"))
    assert static_row.split()[1] == "fail_to_compile"  # under "total s", not in a far column
    assert dynamic.stream is not None
    dynamic.stream.pad_waste = 0.25
    dynamic.replay = Replay(1.5, 1.25)
    text = _stream_text(result)
    assert "pad waste" in text and "replay meas/pred s" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("dynamic"))
    assert row.split()[-4:] == ["25%", "1.50", "/", "1.25"]
    # eager is replayed too (issue #32: "every strategy, eager included"): its own row says so,
    # and its replay reads back from the document as a run's does
    assert result.eager_stream is not None
    eager_row = next(line for line in text.splitlines() if line.strip().startswith("eager"))
    assert eager_row.split()[-3:] == ["-", "-", "-"]  # not replayed: no cell pretends it was
    result.eager_stream.replay = Replay(0.9, 1.0, interleaved=True)
    eager_row = next(line for line in _stream_text(result).splitlines()
                     if line.strip().startswith("eager"))
    assert eager_row.split()[-3:] == ["0.90", "/", "1.00"]
    back = type(result.eager_stream).from_dict(result.eager_stream.as_dict())
    assert back.replay == Replay(0.9, 1.0, interleaved=True)


def test_a_kept_replay_is_compared_with_the_cost_shown_after_re_costing() -> None:
    """A strategy a process each (torch < 2.13): eager replayed in the first child against
    that child's eager cost, then the parent priced eager from every child's samples; the
    replay kept the child's prediction (GPT-2 on 2.4.1: "0.14 / 0.57" beside a total of 0.38)."""
    result = _result([_dynamic_run()], [0, 1, 0])
    recommend.apply(result)
    assert result.eager_stream is not None and result.runs[0].stream is not None
    result.eager_stream.replay = Replay(0.14, 0.57, interleaved=True)  # the child's prediction
    result.runs[0].replay = Replay(9.0, 99.0, compiles=1, interleaved=True)
    recommend.apply(result)  # the parent's re-costing
    eager, run = result.eager_stream, result.runs[0]
    assert eager.replay == Replay(0.14, eager.total_s, interleaved=True)
    assert run.stream is not None and run.replay == Replay(9.0, run.stream.total_s, compiles=1,
                                                           interleaved=True)
    assert eager.total_s != 0.57 and run.stream.total_s != 99.0


def test_recommend_says_when_eager_is_faster_even_compiled() -> None:
    rec = cost.recommend([Candidate("eager", 0.1, True, weighted_latency_ms=0.03,
                                       samples=(0.03, 0.031, 0.029, 0.03)),
                             Candidate("automatic", 0.2, True, weighted_latency_ms=0.05,
                                       samples=(0.05, 0.051, 0.049, 0.05))], 3)
    assert rec is not None and rec.strategy == "eager"
    assert "eager is faster even than automatic once compiled" in rec.reason
    assert "eager serves" not in rec.reason


def test_no_recommendation_without_the_users_stream_only_break_evens() -> None:
    from dyncli.bench.render import payback_line

    dynamic = _dynamic_run()
    seeded = _result([dynamic], [0, 1])
    seeded.shapes_source = "plan"  # the quickstart: the measured variations, not traffic
    recommend.apply(seeded)
    assert seeded.recommendation is None and dynamic.stream is not None
    line = payback_line(seeded)
    assert "dynamic after" in line and "No recommendation" in line and "--requests N" in line
    seeded.settings["requests"] = 500  # --requests N: the user sized the stream
    recommend.apply(seeded)
    assert seeded.recommendation is not None
    assert seeded.recommendation.apply is not None
    assert seeded.recommendation.apply["strategy"] == seeded.recommendation.strategy


def test_a_shapes_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Round 27: Excel's "CSV UTF-8" begins with a BOM, which became part of the first column's
    name: "the header needs a batch and/or seq column, got \\ufeffbatch,count"."""
    for name, text in (("t.csv", "batch,count\r\n4,2\r\n8,1\r\n"),
                       ("t.jsonl", '{"batch": 4, "count": 2}\n{"batch": 8}\n')):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert [s[0] for s in plan.read_shapes(str(path))] == [4, 4, 8], name

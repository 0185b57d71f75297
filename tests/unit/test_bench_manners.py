"""Pricing every request as it runs, and bench's device manners (issue #32). No torch."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dyncli.bench import manners
from dyncli.bench.core import cost, recommend
from dyncli.bench.core.cost import CompileEvent
from dyncli.bench.core.result import BenchResult, Environment, RunResult
from tests.unit.conftest_bench import variation


class FakeClock:
    """Each timed reading returns the next of ``per_call_ms`` (ms per call) times the loops."""

    def __init__(self, per_call_ms: list[float]) -> None:
        self.per_call = iter(per_call_ms)
        self.loops = 0

    def synchronize(self) -> None:
        pass

    def start(self) -> int:
        self.loops = 0
        return 0

    def stop(self, token: int) -> float:
        return next(self.per_call) * self.loops


def counting(clock: FakeClock) -> Callable[[], None]:
    def fn() -> None:
        clock.loops += 1
    return fn


class FakeWall:
    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_settle_waits_until_the_latency_stops_falling() -> None:
    # calibration reads 10 ms/call twice (1 loop, then 2 reach 20 ms); then a device warming
    # up: 10, 8, 6.5, 6.0 and steady at 6.0 +- 1 %
    clock = FakeClock([10.0, 10.0, 10.0, 8.0, 6.5, 6.0, 6.05, 6.02, 6.01])
    out = manners.settle(clock, counting(clock), wall=FakeWall(0.01))
    assert out.settled and out.loops == 2
    assert out.readings_ms == [10.0, 8.0, 6.5, 6.0, 6.05, 6.02]
    assert out.as_dict()["rounds"] == 6 and out.as_dict()["last_ms"] == 6.02


def test_settle_is_bounded_by_rounds_and_seconds() -> None:
    drifting = [30.0] + [20.0 - i for i in range(19)]  # never three readings within 3 %
    clock = FakeClock(drifting)
    out = manners.settle(clock, counting(clock), max_rounds=5, wall=FakeWall(0.01))
    assert not out.settled and len(out.readings_ms) == 5
    clock = FakeClock(drifting)
    out = manners.settle(clock, counting(clock), max_s=0.25, wall=FakeWall(0.1))
    assert not out.settled and len(out.readings_ms) == 3  # 0.1 s a reading: stopped past 0.25
    assert out.seconds == pytest.approx(0.4)


def test_steady_needs_enough_readings_in_tolerance() -> None:
    assert not manners.steady([5.0, 5.0])
    assert manners.steady([9.0, 5.0, 5.1, 5.05])
    assert not manners.steady([5.0, 5.0, 5.3])


def test_a_caught_warning_is_one_line_of_dyncli_with_advice() -> None:
    tf32 = ("TensorFloat32 tensor cores for float32 matrix multiplication available but not "
            "enabled. Consider setting `torch.set_float32_matmul_precision('high')`")
    line = manners.own_line("torch", tf32)
    assert line.startswith("torch warned: TensorFloat32 tensor cores")
    assert "--matmul-precision high" in line
    assert manners.own_line("torch", "\n  first line\nsecond") == "torch warned: first line"


def test_a_new_shape_costs_its_first_call_once_where_nothing_compiles() -> None:
    # shapes 0 and 1, 1 ms and 2 ms steady; shape 1's first call is 50 ms: +48 ms at request 1
    c = cost.cost([0, 1, 1, 0], [1.0, 2.0], new_shape_s=[None, 0.048])
    assert c.total_s == pytest.approx(0.006 + 0.048)
    assert c.new_shape_s == pytest.approx(0.048) and c.compile_s == 0.0
    assert list(c.curve) == pytest.approx([0.001, 0.051, 0.053, 0.054])
    # where a compile sits, its first call already holds the new shape's cost
    c = cost.cost([0, 1], [1.0, 2.0], [CompileEvent(1, 0.5)], new_shape_s=[0.01, 0.048])
    assert c.total_s == pytest.approx(0.003 + 0.5 + 0.01)
    assert c.as_dict()["new_shape_s"] == pytest.approx(0.01)
    assert cost.StreamCost.from_dict(c.as_dict()).new_shape_s == pytest.approx(0.01)


def test_apply_charges_eager_and_strategies_their_new_shapes() -> None:
    run = RunResult("m", "dynamic", "inference")
    run.variations = [variation(0, 8, 2.0, 1.0, True), variation(1, 10, 2.5, 1.0, False)]
    run.variations[0].request, run.variations[1].request = 0, 1
    run.variations[1].first_call_s = 0.011  # no compile: 10 ms beyond its 1 ms steady state
    run.variations[1].eager_first_call_s = 0.0225  # eager's first call of shape 1: +20 ms
    run.finish()
    env = Environment("0", "2.15.0", "3.11", "cpu", "cpu", "float32", 2)
    result = BenchResult("m", env, {}, runs=[run], shapes_source="sizes")
    result.stream_ids, result.requests = [0, 1, 1], 3
    recommend.apply(result)
    assert result.eager_stream is not None and run.stream is not None
    assert result.eager_stream.new_shape_s == pytest.approx(0.020)
    assert result.eager_stream.total_s == pytest.approx(0.007 + 0.020)
    assert run.stream.new_shape_s == pytest.approx(0.010)
    assert run.stream.total_s == pytest.approx(0.003 + 0.499 + 0.010)


def test_the_bound_follows_the_streams_sizes_of_one_and_the_dims_as_they_change() -> None:
    """torch specializes a size of 0 or 1 on a dynamic dim: torch 2.4.1's GPT-2 over (batch,
    seq) (1, 17), (2, 33), (4, 64), (1, 9) compiled 2 graphs under dynamic and 3 under
    automatic, and bench warned of both ("implies at most 1", "at most 2"); unbacked
    specializes nothing; automatic makes a dim dynamic as it first changes."""
    from dyncli.bench.core import excess
    from dyncli.bench.core import strategy as table

    dynamic, automatic = table.find("dynamic"), table.find("automatic")
    unbacked, marks = table.find("unbacked"), table.find("mark-dynamic")
    gpt2 = [(1, 17), (2, 33), (4, 64), (1, 9)]
    assert excess.implied(dynamic, gpt2) == 2
    assert excess.implied(marks, gpt2) == 2
    assert excess.implied(automatic, gpt2) == 3  # (1, 17) static, then (b, s), then (1, s)
    assert excess.implied(unbacked, gpt2) == 2
    assert excess.excess(dynamic, 2, 1, {}, ["size mismatch at index 0. expected 1, actual 2"],
                         shapes=gpt2) is None
    assert excess.excess(automatic, 3, 1, {}, ["stride mismatch"], shapes=gpt2) is None
    # the stream of test_bench_stream.py: 4 static, 6 dynamic, 1 specialized (torch: 3)
    assert excess.implied(automatic, [(4, None), (6, None), (1, None), (8, None)]) == 3
    assert excess.implied(dynamic, [(4, None), (6, None), (8, None)]) == 1
    # the sequence changes at the second shape, the batch at the third: two recompiles
    assert excess.implied(automatic, [(2, 8), (2, 16), (4, 16), (4, 32)]) == 3
    assert excess.implied(automatic, [(2, 8), (4, 16), (2, 8)]) == 2  # the first shape again
    assert excess.implied(automatic, []) == 2 and excess.implied(dynamic, []) == 1
    assert excess.implied(table.find("static"), gpt2) is None
    # past the stream's own bound it still warns, and says where the bound came from
    line = excess.excess(dynamic, 3, 1, {}, ["- 0/2: L['x'].size()[1] < 64"], shapes=gpt2)
    assert line is not None and "at most 2 (1 frame(s) x 2 on this stream: sizes 0 and 1" in line


def test_the_warning_names_only_what_raised_the_bound_on_this_stream() -> None:
    """Round 34: torch 2.15's DistilBERT (one layer) over (batch, seq) (1, 16), (1, 24),
    (2, 16), … under unbacked compiled 7 graphs, and the warning said the bound of 3 came from
    "sizes 0 and 1 specialized", which unbacked does not do: the sequence and the batch
    changed at different shapes."""
    from dyncli.bench.core import excess
    from dyncli.bench.core import strategy as table

    unbacked, automatic = table.find("unbacked"), table.find("automatic")
    dynamic = table.find("dynamic")
    distil = [(1, 16), (1, 24), (2, 16), (1, 57), (4, 32), (1, 101)]
    assert excess.implied(unbacked, distil) == 3
    line = excess.excess(unbacked, 7, 1, {}, ["size mismatch"], shapes=distil)
    assert line is not None and "x 3 on this stream: each dim made dynamic as it first " \
        "changed)" in line and "sizes 0 and 1" not in line
    assert excess.raised_by(unbacked, distil) == ["each dim made dynamic as it first changed"]
    assert excess.raised_by(dynamic, distil) == ["sizes 0 and 1 specialized"]
    assert excess.raised_by(automatic, distil) == ["sizes 0 and 1 specialized",
                                                   "each dim made dynamic as it first changed"]
    assert excess.raised_by(automatic, [(4, None), (6, None), (1, None), (8, None)]) == [
        "sizes 0 and 1 specialized"]
    assert excess.raised_by(dynamic, [(4, None), (6, None)]) == []


def test_a_strategy_past_its_implied_compiles_says_why_in_torchs_words() -> None:
    from dyncli.bench.core import excess
    from dyncli.bench.core import strategy as table

    unbacked, static = table.find("unbacked"), table.find("static")
    # what torch 2.15 counted for HF BERT under unbacked (issue #32: 7 graphs, 2 due)
    gb = ("Could not guard on data-dependent expression u0 > 1 (unhinted: u0 > 1).  "
          "(Size-like symbols: u0)\n\nconsider using data-dependent friendly APIs")
    line = excess.excess(unbacked, 7, 1, {gb: 3}, ["tensor 'input_ids' size mismatch"])
    assert line is not None and line.startswith("unbacked compiled 7 graphs where its "
                                                "definition implies at most 2")
    assert "u0 > 1" in line and "friendly APIs" not in line
    assert excess.excess(unbacked, 2, 1, {gb: 1}, []) is None
    assert excess.excess(static, 9, 1, {}, []) is None  # one per shape: no bound
    assert excess.per_frame(table.find("dynamic")) == 1
    assert excess.per_frame(table.find("sources")) == 1
    line = excess.excess(table.find("dynamic"), 3, 1, {}, ["- 0/1: L['x'].size()[0] < 64"])
    assert line is not None and line.endswith("torch says '- 0/1: L['x'].size()[0] < 64'")
    # under two compile modes the run's label names it: the two lines read the same before
    line = excess.excess(table.find("automatic"), 3, 1, {}, ["size mismatch"],
                         "automatic@max-autotune-no-cudagraphs")
    assert line is not None and line.startswith("automatic@max-autotune-no-cudagraphs compiled 3")


def test_the_excess_warning_quotes_the_reason_its_bound_did_not_count() -> None:
    """Round 35, torch 2.4.1, a one-layer GPT-2 (n_embd 64) over (batch, seq) (1, 17), (2, 33),
    (4, 16), (4, 16), (1, 9), (2, 17): plain torch.compile in a fresh process compiles 3 graphs
    under dynamic=True and 4 under automatic, as bench did; the extra graph is the dynamic
    graph's guard on batch*seq against the hidden size (4 x 16 = 64). The warning quoted the
    last reason, a static entry's size mismatch that the bound counts."""
    from dyncli.bench.core import excess
    from dyncli.bench.core import strategy as table

    shapes = [(1, 17), (2, 33), (4, 16), (1, 9), (2, 17)]
    heads = ("Ne(L['self'].h[0].attn.num_heads*((64//L['self'].h[0].attn.num_heads)), "
             "L['input_ids'].size()[0]*L['input_ids'].size()[1])  # _dynamo/output_graph.py:452"
             " in init_ambient_guards")
    dynamic = ["tensor 'L['input_ids']' size mismatch at index 0. expected 1, actual 2",
               heads, "tensor 'L['input_ids']' size mismatch at index 0. expected 1, actual 4"]
    line = excess.excess(table.find("dynamic"), 3, 1, {}, dynamic, shapes=shapes)
    assert line is not None and "at most 2 (1 frame(s) x 2 on this stream: sizes 0 and 1 " \
        "specialized)" in line
    assert line.endswith(f"torch says '{excess.first_line(heads)}'")
    at = "  # _dynamo/output_graph.py:452 in init_ambient_guards"
    ratio = "Ne(L['input_ids'].size()[1], 4*L['input_ids'].size()[0])    " + at
    equal = "L['input_ids'].size()[1] == 4*L['input_ids'].size()[0]      " + at
    lower = "2 <= L['input_ids'].size()[0]                               " + at
    automatic = ["tensor 'L['input_ids']' size mismatch at index 0. expected 1, actual 2",
                 ratio, "tensor 'L['input_ids']' size mismatch at index 0. expected 1, actual 4",
                 equal, lower, "tensor 'L['input_ids']' stride mismatch at index 0. expected "
                 "17, actual 9"]
    line = excess.excess(table.find("automatic"), 4, 1, {}, automatic, shapes=shapes)
    assert line is not None and "at most 3" in line
    assert line.endswith(f"torch says '{excess.first_line(ratio)}'; '{excess.first_line(equal)}'")
    # the bound's own reasons only: the last is quoted, as before
    assert excess.telling([*automatic[:1], lower]) == [lower]
    assert excess.telling(["- 0/1: 2 <= L['x'].size()[0]", "tensor 'x' size mismatch"]) == [
        "tensor 'x' size mismatch"]
    assert excess.telling([]) == []

"""Request streams on real torch.compile: compile counts against torch's, the new strategies,
replay against the cost model, and padding an hf model's sequences.

One bench of seven strategies over the stream 4, 6, 1, 8 (module-scoped) feeds most tests.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dyncli.bench import collector, torch_compat
from dyncli.bench.core import machine, recommend
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.emit import emit
from dyncli.bench.core.result import BenchResult, PadTarget, RunResult
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig
from dyncli.errors import UsageError
from dyncli.sources import PER_DIM_SINCE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
HERE = Path(__file__).resolve().parent
SIZES = [4, 6, 1, 8]
# twelve distinct batch sizes of conftest_bench.py's wide_mlp, for the replay check
WIDE_SIZES = [24, 28, 32, 36, 40, 44, 20, 48, 26, 34, 38, 30]
STRATEGIES = ["static", "automatic", "dynamic", "unbacked", "eager-then-compile", "pgo", "pad",
              "mark-dynamic", "sources"]  # every recommendable strategy


@pytest.fixture(scope="module")
def stream() -> BenchResult:
    # (a per-dim entry needs torch 2.13: before it bench says not_applicable and names the
    # whole input, the list this torch reads; round 20)
    sources = ["L['x']:0"] if torch_compat.installed() >= PER_DIM_SINCE else ["L['x']"]
    cfg = BenchConfig(sizes=SIZES, strategy=STRATEGIES, device="cpu", repeat=2, warmup=0,
                      buckets="8", dynamic_sources=sources, fresh_cache=False)
    return run_bench(MODEL, cfg)


def _run(result: BenchResult, strategy: str) -> Any:
    return next(r for r in result.runs if r.strategy == strategy)


def _runs_here(strategy: str) -> None:
    """Skip a test of ``strategy`` on a torch too old for it (bench says not_applicable)."""
    why = torch_compat.strategy_unsupported(strategy)
    if why:
        pytest.skip(why)


def _torch_unique_graphs(strategy: str, sizes: list[int]) -> int:
    """Plain torch.compile (inductor) on the same shapes in the same order: torch's count."""
    import torch._dynamo
    import torch._dynamo.config as dynamo_config
    from torch._dynamo.utils import counters

    from dyncli.bench.models import build

    model = build(MODEL, device="cpu", batch_size=None, seq_len=None, hf_config={},
                  training=False).model.eval()
    torch._dynamo.reset()
    before = counters["stats"]["unique_graphs"]
    dynamic = {"static": False, "dynamic": True}.get(strategy)
    # automatic_dynamic_shapes_mark_as: torch >= 2.6 (where unbacked runs)
    mark_as = {"automatic_dynamic_shapes_mark_as": "unbacked"} if strategy == "unbacked" else {}
    # torch's own caches (tests/conftest.py): a cache hit is still a compile in torch's count
    with dynamo_config.patch(**mark_as), torch.no_grad():
        fn = torch.compile(model, dynamic=dynamic)
        gen = torch.Generator().manual_seed(0)
        for b in sizes:
            fn(torch.randn(b, 32, generator=gen))
    graphs = counters["stats"]["unique_graphs"] - before
    torch._dynamo.reset()
    return int(graphs)


@pytest.mark.parametrize("strategy", ["static", "automatic", "dynamic", "unbacked"])
def test_compile_count_equals_plain_torch_compile(stream: BenchResult, strategy: str) -> None:
    _runs_here(strategy)
    run = _run(stream, strategy)
    assert run.status == "pass"
    assert run.compiles == run.torch_unique_graphs
    assert run.compiles == _torch_unique_graphs(strategy, SIZES)


def test_unbacked_does_not_specialize_one(stream: BenchResult) -> None:
    # 4 (static), 6 (dims become dynamic), then 1: backed symbols specialize 1, unbacked do not
    _runs_here("unbacked")
    automatic, unbacked = _run(stream, "automatic"), _run(stream, "unbacked")
    by_batch = {v.batch_size: v for v in automatic.variations}
    assert by_batch[1].compiles == 1
    assert {v.batch_size: v.compiles for v in unbacked.variations}[1] == 0
    assert unbacked.compiles == automatic.compiles - 1


def test_torchs_own_specializations_are_no_excess(stream: BenchResult) -> None:
    # the stream 4, 6, 1, 8: automatic compiles 3 graphs and dynamic 2 (batch 1 specialized,
    # as torch does on a dynamic dim), which their rows imply on this stream; bench warned
    # "compiled 3 graphs where its definition implies at most 2" before round 34
    said = [w for w in stream.warnings if "where its definition implies" in w]
    assert said == [], said
    assert _run(stream, "automatic").compiles == 3


def test_unbacked_says_its_kernels_run_parallel_over_the_unbacked_batch(
        stream: BenchResult) -> None:
    # round 26: unbacked cost ~25 ms a call against 0.6 ms for dynamic (sizes 1-8, 2 busy
    # cores), unexplained: inductor takes an unbacked size as 8192 when deciding on threads, so
    # the gelu over 64 x u0 floats started the OpenMP team on every call (core/parallel.py)
    _runs_here("unbacked")
    import torch

    if torch.get_num_threads() < 2:
        pytest.skip("one thread: inductor makes no kernel parallel")
    said = [w for w in stream.warnings if "OpenMP-parallel over an unbacked size" in w]
    assert [w.split(":")[0] for w in said] == ["unbacked"], stream.warnings


def test_stream_costs_and_recommendation(stream: BenchResult) -> None:
    assert stream.requests == 4 and stream.shapes_source == "sizes"
    assert stream.eager_stream is not None
    for run in stream.runs:
        if torch_compat.strategy_unsupported(run.strategy):
            assert run.status == "not_applicable" and run.stream is None, run.strategy
            continue
        assert run.stream is not None, run.strategy
        assert run.stream.total_s >= run.stream.compile_s > 0
        assert len(run.stream.curve) == 4
    static = _run(stream, "static")
    assert [v.request for v in static.variations] == [0, 1, 2, 3]
    rec = stream.recommendation
    assert rec is not None and rec.strategy in {"eager", *STRATEGIES}
    totals = {r.strategy: r.stream.total_s for r in stream.runs if r.stream}
    totals["eager"] = stream.eager_stream.total_s
    assert rec.total_s == totals[rec.strategy]
    best = min(totals, key=totals.__getitem__)
    if rec.strategy != best:
        # the least predicted total within noise of others: the simplest of those leaders is
        # recommended (issue #18), the least total named as runner-up. On a busy machine
        # (CI's previous-release run beside two others, load ~6) eager 0.284 s was
        # recommended over pad 0.266 s; the assertion had been "the least total" alone.
        assert rec.runner_up == best and rec.runner_up_total_s == totals[best], rec
        assert recommend.simplest([rec.strategy, best]) == rec.strategy, rec
        assert "within noise of each other" in rec.reason, rec.reason


def test_the_emitted_plan_is_the_measured_plan_for_every_recommendable_strategy(
        stream: BenchResult) -> None:
    """recommendation.apply and --emit are the plan each run measured (with its predicted
    compiles), for every recommendable strategy; the JSON holds the same plan."""
    assert set(table.recommendable()) == {"eager", *STRATEGIES}
    for run in stream.runs:
        if torch_compat.strategy_unsupported(run.strategy):
            continue
        assert run.plan is not None and run.plan.strategy == run.strategy
        assert run.stream is not None
        emitted = recommend.plan_for(stream, run.strategy)
        assert emitted == replace(run.plan, predicted_compiles=run.stream.compiles)
        assert Plan.from_dict(emitted.as_dict()) == emitted
        assert RunResult.from_dict(run.to_dict()).plan == run.plan
        text = emit(emitted, "python")
        literal = next(n.value for n in ast.parse(text).body if isinstance(n, ast.Assign))
        assert ast.literal_eval(literal) == emitted.as_dict()  # the module's PLAN
    static = _run(stream, "static").plan
    assert recommend.plan_for(stream, "eager") == Plan("eager", inputs=static.inputs,
                                                       predicted_compiles=0)
    rec = stream.recommendation
    assert rec is not None and rec.apply is not None
    assert Plan.from_dict(rec.apply) == recommend.plan_for(stream, rec.strategy)


def test_eager_then_compile_first_call_is_eager(stream: BenchResult) -> None:
    _runs_here("eager-then-compile")
    run = _run(stream, "eager-then-compile")
    assert run.prime_s is not None and run.stream.first_result_s == pytest.approx(run.prime_s)
    # request 1 (batch 6) compiles, having seen 4 and 6: dynamic at once, no static compile
    first = run.variations[0]
    assert (first.batch_size, first.request, first.compiles) == (6, 1, 1)
    assert {v.batch_size: v.compiles for v in run.variations}[8] == 0


def test_pgo_warm_pass_starts_from_the_cold_profile(stream: BenchResult) -> None:
    _runs_here("pgo")
    run = _run(stream, "pgo")
    cold, warm = run.passes
    assert cold.name == "cold" and cold.state_files
    assert warm.name == "warm" and warm.state_loaded is True
    # cold: 4 static, 6 dynamic, 1 specialized; warm: 4 already dynamic, 1 specialized
    assert (cold.compiles, warm.compiles) == (3, 2)


def test_pad_buckets_waste_and_accuracy(stream: BenchResult) -> None:
    run = _run(stream, "pad")
    assert run.status == "pass"
    assert run.compiles == 1  # every size fits the one bucket of 8
    assert all(v.padded_to == PadTarget(8, None)
               for v in run.variations)
    assert run.stream.pad_waste == pytest.approx((4 + 2 + 7 + 0) / (4 + 6 + 1 + 8))


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_pad_above_largest_bucket_runs_unpadded_and_training_is_not_applicable() -> None:
    cfg = BenchConfig(sizes=[4, 12], strategy=["pad"], device="cpu", repeat=2, warmup=0,
                      buckets="8", fresh_cache=False)
    run = run_bench(MODEL, cfg).runs[0]
    assert run.status == "pass"
    big = next(v for v in run.variations if v.batch_size == 12)
    assert big.padded_to.unpadded and "ran unpadded" in big.detail
    training = run_bench(MODEL, BenchConfig(sizes=[4], strategy=["pad"], device="cpu",
                                            mode="training", repeat=2, warmup=0,
                                            fresh_cache=False))
    assert training.runs[0].status == "not_applicable"
    assert "training" in training.runs[0].error
    assert not training.failed


@pytest.fixture
def one_thread() -> Iterator[None]:
    """One intra-op thread: on a shared 2-core machine two threads wait on each other at every
    barrier whenever one is descheduled, and single calls then vary 0.8-36 ms."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.mark.long  # 600 requests replayed for every strategy: minutes on 2 cores
def test_replay_within_15_percent_of_prediction(one_thread: None) -> None:
    # 600 requests of ~1-2 ms over twelve distinct batch sizes (issue #32: streams with many
    # shapes, each new one's first call priced) against two compiles; 30 timed pairs per shape
    # for the means; eager's replay as well as the strategy's. Measurement and replay run at
    # different moments: another job starting in between (this machine is shared) moves one
    # and not the other, so up to three tries, and a skip, not a failure, when every try ran
    # on an overloaded machine or one that changed under it by bench's own signals, those of
    # its "may be unstable" warning: its eager probe (one shape timed at the start, after the
    # measurement and after the replay) moved by more than DRIFT (a quiet run here: 1.15), or
    # other processes took more than its busy share of the CPU (a
    # fresh-clone CI run, round 13, the long step's two workers: automatic 4.97 s predicted
    # against 4.28 s replayed in the third of three tries, 15.9 %).
    cfg = BenchConfig(sizes=WIDE_SIZES, requests=600, strategy=["automatic"], device="cpu",
                      repeat=30, warmup=1, replay=True)
    tries: list[dict[str, Any]] = []
    busy = []
    for _ in range(3):
        result = run_bench(f"{HERE / 'conftest_bench.py'}:wide_mlp", cfg)
        run, eager = result.runs[0], result.eager_stream
        assert run.replay is not None and run.stream is not None
        assert eager is not None and eager.replay is not None
        assert run.replay.predicted_s == pytest.approx(run.stream.total_s)
        assert eager.replay.predicted_s == pytest.approx(eager.total_s)
        assert run.replay.compiles == run.stream.compiles == 2
        assert run.replay.cache_hits == {}  # from an empty cache of its own: every compile cold
        if collector.generational():  # the plain replay counts full collections too
            assert run.replay.gc_full is not None and run.replay.gc_full >= 0
            assert 0 <= (run.replay.gc_full_s or 0.0) <= run.replay.measured_s
        replays = {"eager": eager.replay, "automatic": run.replay}
        tries.append({name: (r.predicted_s, r.measured_s) for name, r in replays.items()})
        load = result.load or {}
        drift, others = load.get("eager_drift"), load.get("others_cpu_share")
        busy.append(os.getloadavg()[0] > (os.cpu_count() or 1) + 1
                    or (drift is not None and drift > machine.DRIFT)
                    or (others is not None and others > machine.BUSY))
        if all(abs(r.predicted_s - r.measured_s) <= 0.15 * r.measured_s
               for r in replays.values()):
            return
    if all(busy):
        pytest.skip(f"machine overloaded or changed under every try (load "
                    f"{os.getloadavg()[0]:.1f}); tries: {tries}")
    pytest.fail(f"predicted vs measured off by more than 15 % in 3 tries: {tries}")


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_hf_sequences_padded_with_masks_pass_accuracy(tmp_path: Path) -> None:
    # hidden_size 32 equals the largest bucket: slicing must follow the eager output's shapes,
    # not "the first dim equal to the padded length" (that cut the pooler output's hidden dim)
    shapes = tmp_path / "seq.csv"
    shapes.write_text("seq,count\n5,3\n20,1\n")
    cfg = BenchConfig(vary=["seq"], shapes=str(shapes), strategy=["pad"], device="cpu",
                      repeat=2, warmup=0, buckets="8,32", fresh_cache=False,
                      hf_config={"num_hidden_layers": 1, "hidden_size": 32,
                                 "num_attention_heads": 2, "intermediate_size": 64})
    result = run_bench("hf:BertModel", cfg)
    pad = result.runs[0]
    assert pad.status == "pass", [v.detail for v in pad.variations]
    assert [v.padded_to.seq for v in pad.variations] == [8, 32]
    assert all(v.padded_to.batch == 4 for v in pad.variations)  # the batch never varied
    assert pad.stream.pad_waste == pytest.approx((3 * 3 + 12) / (3 * 5 + 20))
    assert result.requests == 4 and result.recommendation is not None


def test_shapes_whose_inputs_cannot_fit_are_refused_before_any_is_made(tmp_path: Path) -> None:
    """A batch of 10^8 in the traffic used to fill memory until the kernel killed the run."""
    shapes = tmp_path / "huge.csv"
    # ten distinct shapes of ~2*10^9 rows: ~2.5 TB of inputs, more than half of any machine
    shapes.write_text("batch,count\n8,3\n" + "".join(f"{2_000_000_000 - i},1\n" for i in range(10)))
    cfg = BenchConfig(shapes=str(shapes), strategy=["static"], device="cpu", repeat=2, warmup=0)
    with pytest.raises(UsageError, match=r"batch 2000000000: [\d.]+ GiB\), more than half"):
        run_bench(MODEL, cfg)

"""Every strategy measured as itself on every torch bench supports (issue #32 items 1 and 5).

Item 1's stream: an HF-style model (``input_ids``, ``attention_mask`` by keyword) over 20
requests of five batch sizes, ``static,automatic,dynamic,pad``. Side by side in one process
torch 2.11 compiles static 5 graphs, automatic 1, dynamic 1 and pad 1 of its 3 buckets, then
hits ``recompile_limit`` (8) and runs pad's other buckets eagerly (bench read that ``pass``).
Each strategy's compile count must equal plain torch's on the same stream in a process of its
own that has compiled nothing (a fork of logged.py's zygote): the plan bench emits, served by
``tests/integration/plain_torch.py``. On a torch with ``isolate_recompiles`` (2.13 on) bench
measures them side by side in one window; before, a process each.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from logged import run_python

from dyncli.bench import drivers, torch_compat
from dyncli.bench.core import caches, recommend
from dyncli.bench.core.emit import emit
from dyncli.bench.core.measured import PROCESS_EACH, SAME_WINDOW, SEQUENTIAL
from dyncli.bench.core.status import Status
from dyncli.bench.render import variation_table
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
MODEL = f"{HERE / 'conftest_bench.py'}:hf_style"
MLP = f"{HERE.parents[1] / 'examples' / 'model.py'}:build"
STREAM = [2, 3, 4, 6, 8] * 4
STRATEGIES = ["static", "automatic", "dynamic", "pad"]


def _plain(result: object, strategy: str, tmp_path: Path) -> int:
    """The graphs plain torch compiles serving the stream as bench's plan says, in a process
    of its own: a fork of a Python that has imported torch, dynamo and inductor and compiled
    nothing (logged.run_python; a zygote per environment, as this one's
    TORCHINDUCTOR_COMPILE_THREADS is read at import; DYNCLI_TEST_FRESH_PYTHON=1: a fresh
    Python)."""
    plan = recommend.plan_for(result, strategy)  # type: ignore[arg-type]
    path = tmp_path / f"emitted_{strategy}.py"
    path.write_text(emit(plan, "python"))
    out, err = tmp_path / f"plain_{strategy}.out", tmp_path / f"plain_{strategy}.err"
    rc = run_python([str(HERE / "plain_torch.py"), str(path), MODEL, *map(str, STREAM)],
                    dict(os.environ), Path.cwd(), out, err, timeout=600)
    assert rc == 0, err.read_text(errors="replace")[-3000:]
    return int(json.loads(out.read_text().strip().splitlines()[-1])["graphs"])


@pytest.mark.long  # 407 s under torch 2.15.0 at load 8-10, 976 s under 2.11.0 (docs/bench.md)
def test_every_strategy_compiles_as_plain_torch_does_in_a_fresh_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every fresh process (plain torch's; on torch < 2.13 bench's own, one per strategy)
    # compiles in-process: starting inductor's worker pool costs more than this tiny model's
    # compiles, and how many graphs torch compiles does not depend on it
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "1")
    cfg = BenchConfig(sizes=STREAM, strategy=STRATEGIES, device="cpu", repeat=2, warmup=0,
                      fresh_cache=False)
    result = run_bench(MODEL, cfg)
    assert result.measured is not None
    apart = torch_compat.can_isolate_recompiles()
    assert result.measured.driver == (SAME_WINDOW if apart else PROCESS_EACH)
    assert (result.measured.why is None) == apart
    counts = {r.strategy: r.compiles for r in result.runs}
    plain = {s: _plain(result, s, tmp_path) for s in STRATEGIES}
    assert counts == plain, (torch.__version__, counts, plain)
    for run in result.runs:
        assert run.status == Status.PASS, (run.strategy, run.status, run.error)
        assert not run.recompile_limit_hit and run.eager_share == 0.0
        assert run.stream is not None and run.stream.compiles == run.compiles


def test_below_2_13_every_run_gets_a_process_and_kept_in_one_they_are_sequential_with_a_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's choice on a torch without isolate_recompiles, for runs ``strategy@mode``:
    one strategy under two compile modes is two runs that would share a recompile limit."""
    monkeypatch.setattr(torch_compat, "can_isolate_recompiles", lambda: False)
    cfg = BenchConfig(strategy=["static"], compile_mode=["default", "max-autotune-no-cudagraphs"],
                      device="cpu")
    stream = SimpleNamespace(variations=[0, 1])
    assert drivers.runs_of(cfg) == ["static", "static@max-autotune-no-cudagraphs"]
    said: list[str] = []
    assert drivers.choose(cfg, stream, None, said.append) == PROCESS_EACH  # type: ignore[arg-type]
    assert not said
    measured = drivers.measured(cfg, PROCESS_EACH)
    assert measured.why is not None and "isolate_recompiles came in 2.13" in measured.why
    assert drivers.choose(cfg, stream, False, said.append) == SEQUENTIAL  # type: ignore[arg-type]
    assert len(said) == 1 and "one after another" in said[0] and measured.why in said[0]
    one = BenchConfig(strategy=["static"], device="cpu")  # one run: nothing to keep apart
    assert drivers.choose(one, stream, None, said.append) == SAME_WINDOW  # type: ignore[arg-type]
    assert drivers.measured(one, SAME_WINDOW).why is None and len(said) == 1


def _limit(n: int) -> dict[str, int]:
    """torch's recompile limit at ``n``: ``recompile_limit`` (2.7), ``cache_size_limit``."""
    config = torch._dynamo.config
    return {"recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit": n}


def test_a_strategy_that_ran_eagerly_is_never_pass_costed_or_recommended() -> None:
    """static over four sizes under a recompile limit of 2: the last two ran eagerly."""
    cfg = BenchConfig(sizes=[2, 3, 4, 6], strategy=["static"], device="cpu", repeat=2,
                      warmup=0, fresh_cache=False)
    with torch._dynamo.config.patch(**_limit(2)):
        result = run_bench(MLP, cfg, process_each=False)
    run = result.runs[0]
    assert run.status == Status.RAN_EAGER and run.recompile_limit_hit
    assert run.compiles == 2 and run.eager_share == 0.5
    eager = [v for v in run.variations if v.status == Status.RAN_EAGER]
    assert [v.batch_size for v in eager] == [4, 6]
    assert all("ran it eagerly" in v.detail and "recompile" in v.detail for v in eager)
    assert run.stream is None  # not costed as compiled
    assert result.recommendation is not None and result.recommendation.strategy == "eager"
    assert result.failed


def test_each_strategy_compiles_from_empty_caches_of_its_own_in_one_window() -> None:
    """Plain bench (the seeded plan), two strategies: one window, no strategy's compile served
    from another's caches (automatic's first graph is static's: with shared caches it was an FX
    graph hit), eager's samples the same for both."""
    cfg = BenchConfig(strategy=["static", "automatic"], variations=3, device="cpu", repeat=3,
                      warmup=0)
    result = run_bench(MLP, cfg)
    assert result.measured is not None and result.measured.caches.fresh
    static, automatic = result.runs
    assert not any(v.cache_hits for r in result.runs for v in r.variations)
    if result.measured.driver == SAME_WINDOW:
        assert result.same_window
        for a, b in zip(static.variations, automatic.variations, strict=True):
            assert a.eager_samples == b.eager_samples  # one round-robin window per shape
    assert automatic.compiles == 2 and static.compiles == 3


def test_a_warm_cache_hit_is_labelled_where_the_compile_seconds_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run first in a process, this test failed until round 10: the first bench set back the
    # matmul precision it had read ("none" became "ieee", in inductor's FX graph cache key),
    # so the second missed the entries the first wrote (test_bench_manners_torch.py)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    cfg = BenchConfig(sizes=[2, 5], strategy=["static"], device="cpu", repeat=2, warmup=0,
                      fresh_cache=False)
    run_bench(MLP, cfg)  # fills the user's (here: tmp_path's) caches
    result = run_bench(MLP, cfg)
    assert result.measured is not None and not result.measured.caches.fresh
    assert result.measured.caches.inductor_dir == str(tmp_path / "inductor")
    compiled = [v for v in result.runs[0].variations if v.recompiled]
    assert len(compiled) == 2 and all(v.cache_hits.get("fxgraph") for v in compiled)
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(variation_table(result.runs[0]))
    shown = console.export_text()
    for v in compiled:  # "yes 0.21 s FX graph+AOTAutograd hits" (AOTAutograd's: 2.6 on)
        assert f"yes {v.compile_time_s:.2f} s {caches.label(v.cache_hits)}" in shown


def test_a_replay_under_warm_caches_says_its_compiles_were_hits() -> None:
    """--replay --warm-cache: the replay compiles from the entries the measurement wrote (or
    found), its seconds far below a prediction that priced the measured compiles; bench says
    so beside the table. A replay from empty caches of its own has no hits
    (test_replay_within_15_percent_of_prediction)."""
    from dyncli.bench.render import replay_hits_line

    result = run_bench(MLP, BenchConfig(sizes=[2, 5, 2], strategy=["automatic"], device="cpu",
                                        repeat=2, warmup=0, replay=True, fresh_cache=False))
    run = result.runs[0]
    assert run.replay is not None and run.replay.compiles == run.compiles == 2
    assert run.replay.cache_hits.get("fxgraph") == 2, run.replay
    said = replay_hits_line(result)
    assert said and "automatic 2 FX graph" in said and "those the measurement wrote" in said

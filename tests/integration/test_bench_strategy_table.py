"""The strategy table on real torch.compile: a new row is a new strategy, measured, costed and
emitted with no other code change; each strategy in a process of its own measures the same.

The tiny MLP of ``examples/model.py`` over the stream 2, 5, 2, 8 (three distinct batch sizes).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from emitted import serve_emitted

from dyncli.bench.core import recommend
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.result import Call, Hooks
from dyncli.bench.core.status import Status
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'examples' / 'model.py'}:build"
SIZES = [2, 5, 2, 8]


def _cfg(*strategies: str) -> BenchConfig:
    return BenchConfig(sizes=SIZES, strategy=list(strategies), device="cpu", repeat=2, warmup=0,
                       fresh_cache=False)


def _serve(plan: Plan, tmp_path: Path) -> int:
    """The emitted module of ``plan`` serving the stream: its compiles."""
    from dyncli.bench.models import build

    model = build(MODEL, device="cpu", batch_size=None, seq_len=None, hf_config={},
                  training=False).model.eval()
    return serve_emitted(plan, model, [torch.randn(b, 32) for b in SIZES], tmp_path)


def test_a_new_row_is_measured_costed_and_emitted(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """Adding a strategy is one row: ``static`` under another name, nothing else changed."""
    row = table.Strategy("static-again", "static under another name", 11, dynamic=False)
    monkeypatch.setattr(table, "TABLE", (*table.TABLE, row))
    result = run_bench(MODEL, _cfg("static-again"))
    run = result.runs[0]
    assert run.status == Status.PASS, run.error
    assert run.compiles == 3  # one graph per distinct shape, as static compiles
    assert run.plan == Plan("static-again", inputs=run.plan.inputs)
    assert run.stream is not None and run.stream.compiles == 3  # costed on the stream
    plan = recommend.plan_for(result, "static-again")
    assert plan.compile_kwargs()["dynamic"] is False
    assert _serve(plan, tmp_path) == run.compiles  # the emitted plan, applied


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_each_strategy_in_a_process_of_its_own_measures_as_in_one() -> None:
    calls: list[Call] = []
    progress: list[tuple[str, int, int]] = []
    hooks = Hooks(tap=calls.append, progress=lambda s, d, t: progress.append((s, d, t)))
    result = run_bench(MODEL, _cfg("static", "automatic"), hooks, process_each=True)
    static, automatic = result.runs
    assert (static.status, automatic.status) == (Status.PASS, Status.PASS)
    assert (static.compiles, automatic.compiles) == (3, 2)
    assert not calls  # no model call in this process: each child made its own
    assert progress[-1] == ("automatic", 6, 6)
    assert static.plan == Plan("static", inputs=static.plan.inputs)  # read back from the child
    alone = run_bench(MODEL, _cfg("static"))  # the same strategy in this process
    assert static.model == alone.runs[0].model
    assert result.recommendation is not None and result.recommendation.apply is not None
    assert result.compiler_warmup_s is None  # a warm cache: no warm-up in the children either


def test_a_strategy_whose_process_dies_is_a_status(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The child protocol's reading of an end: killed by SIGKILL (what the kernel's OOM killer
    sends) is ``OOM`` for that strategy, and the next strategy still runs (and dies too)."""
    model = tmp_path / "dies.py"
    model.write_text("import os, signal, torch\n\n\n"
                     "def build():\n"
                     "    if os.getpid() != int(os.environ['DYNCLI_TEST_PARENT']):\n"
                     "        os.kill(os.getpid(), signal.SIGKILL)  # only in the children\n"
                     "    return torch.nn.Linear(3, 2), (torch.randn(4, 3),)\n")
    monkeypatch.setenv("DYNCLI_TEST_PARENT", str(os.getpid()))
    result = run_bench(f"{model}:build", _cfg("static", "automatic"), process_each=True)
    assert [r.status for r in result.runs] == [Status.OOM, Status.OOM]
    assert all("SIGKILL" in r.error for r in result.runs)

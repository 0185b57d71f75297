"""--emit python, applied: import the generated module, serve a stream, count compiles.

For each recommendable strategy the emitted ``compile_for_traffic(model)`` must compile as
often as plain torch applying that strategy does on the same stream (written out here,
independently of dyncli's table), and give eager's outputs. Real torch.compile with the ``eager`` backend
(dynamo makes the same compile decisions as with inductor, at a fraction of the cost); the
serving happens on a second thread too, since torch 2.15's config overrides are thread-local.
"""

from __future__ import annotations

import ast
import importlib.util
import threading
from pathlib import Path

import pytest

from dyncli.bench import torch_compat
from dyncli.bench.core import apply as plan_mod
from dyncli.bench.core import strategy as table
from dyncli.bench.core.emit import EMIT_FORMS, emit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

STREAM = [1, 3, 8, 8, 5, 12, 3, 1, 16, 7]


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Counter:
    """A backend that counts dynamo's graphs (one per compile of a frame)."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, gm, example_inputs):
        self.n += 1
        return gm.forward


# Each strategy as plain torch writes it, independently of dyncli's table: the oracle the
# emitted module is held to. (dynamic=, torch._dynamo.config, torch.compiler.config, stance,
# mark the batch dim, pad to buckets)
PLAIN: dict[str, tuple[bool | None, dict, dict, str | None, bool, bool]] = {
    "static": (False, {}, {}, None, False, False),
    "automatic": (None, {}, {}, None, False, False),
    "mark-dynamic": (None, {}, {}, None, True, False),
    "dynamic": (True, {}, {}, None, False, False),
    "sources": (None, {}, {"dynamic_sources": "L['x']:0"}, None, False, False),
    "pad": (False, {}, {}, None, False, True),
    "unbacked": (None, {"automatic_dynamic_shapes_mark_as": "unbacked"}, {}, None, False, False),
    "eager-then-compile": (None, {}, {}, "eager_then_compile", False, False),
}
BUCKETS = [2, 8, 16]


def _reference_compiles(strategy: str) -> int:
    """Compiles of plain torch.compile applying ``strategy`` on STREAM."""
    import contextlib

    import torch._dynamo
    import torch._dynamo.eval_frame as eval_frame

    from dyncli.bench.core.cost import bucket_of

    dynamic, dynamo, compiler, stance, mark, pad = PLAIN[strategy]
    torch._dynamo.reset()
    eval_frame._EXAMPLE_INPUTS = None
    model = Mlp().eval()
    count = Counter()
    fn = torch.compile(model, backend=count, dynamic=dynamic)
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        stack.enter_context(torch._dynamo.config.patch(**dynamo))
        if compiler:  # torch.compiler.config is 2.6 on (the rows that set it need 2.6)
            stack.enter_context(torch.compiler.config.patch(**compiler))
        if stance:
            stack.enter_context(torch.compiler.set_stance(stance))
        for b in STREAM:
            x = torch.randn(b, 16)
            if pad:
                x = torch.nn.functional.pad(x, (0, 0, 0, bucket_of(b, BUCKETS) - b))
            if mark:
                torch._dynamo.maybe_mark_dynamic(x, 0)
            fn(x)
    return count.n


def _load(text: str, path: Path):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("strategy", [s for s in table.recommendable() if s != "pgo"])
def test_emitted_module_compiles_as_plain_torch_does(strategy: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._dynamo

    if strategy != "eager" and (why := torch_compat.strategy_unsupported(strategy)):
        pytest.skip(why)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    expected = 0 if strategy == "eager" else _reference_compiles(strategy)
    p = plan_mod.Plan(strategy, inputs=plan_mod.from_dims({"0": (0,)}, {}),
                      buckets=tuple(BUCKETS) if table.find(strategy).pads else None,
                      pad_dims=("batch",), sources=("L['x']:0",), backend="eager",
                      predicted_compiles=expected)
    text = emit(p, "python")
    ast.parse(text)
    mod = _load(text, tmp_path / f"plan_{strategy.replace('-', '_')}.py")
    count = Counter()
    if mod.PLAN["torch_compile"]:  # eager's is empty: nothing to compile
        mod.PLAN["torch_compile"]["backend"] = count  # the test counts; the plan's is "eager"
    torch._dynamo.reset()
    model = Mlp().eval()
    serve = mod.compile_for_traffic(model)
    errors: list[BaseException] = []

    def run(sizes: list[int]) -> None:
        try:
            with torch.no_grad():
                for b in sizes:
                    x = torch.randn(b, 16)
                    torch.testing.assert_close(serve(x), model(x))
        except BaseException as e:
            errors.append(e)

    half = len(STREAM) // 2
    run(STREAM[:half])
    worker = threading.Thread(target=run, args=(STREAM[half:],))  # a serving thread
    worker.start()
    worker.join(120)
    assert not errors, errors
    assert count.n == expected, (strategy, count.n, expected)
    assert p.as_dict()["predicted_compiles"] == expected


_SERVE = '''
import importlib.util, json, sys
import torch
spec = importlib.util.spec_from_file_location("plan_pgo", sys.argv[1])
plan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plan)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


graphs = []


def count(gm, example_inputs):
    graphs.append(1)
    return gm.forward


plan.PLAN["torch_compile"]["backend"] = count  # the test counts; the plan's own is "eager"
torch.manual_seed(0)
model = Mlp().eval()
serve = plan.compile_for_traffic(model)
with torch.no_grad():
    for b in json.loads(sys.argv[2]):
        x = torch.randn(b, 16)
        torch.testing.assert_close(serve(x), model(x))
print(json.dumps({"compiles": len(graphs)}))
'''


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_emitted_pgo_plan_needs_its_profiling_run_and_then_compiles_once(
        tmp_path: Path) -> None:
    """pgo's plan, applied as it says: one profiling process, then a serving process that
    keeps the profiling run's TORCHINDUCTOR_CACHE_DIR compiles once (the dynamic graph PGO
    learned), where the profiling process compiled as automatic dynamic does."""
    import json
    import os

    from logged import run_python

    if why := torch_compat.strategy_unsupported("pgo"):
        pytest.skip(why)
    p = plan_mod.Plan("pgo", inputs=plan_mod.from_dims({"0": (0,)}, {}), backend="eager",
                      job_id=f"dyncli-test-{os.getpid()}", predicted_compiles=1)
    steps = p.requires()
    assert steps and "profiling process" in steps[0]
    for form in EMIT_FORMS:  # every form says the step first
        assert "profiling" in emit(p, form), form
    module = tmp_path / "plan_pgo.py"
    module.write_text(emit(p, "python"))
    script = tmp_path / "serve.py"
    script.write_text(_SERVE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "TORCHDYNAMO_"))}
    env.update(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "kept"), OMP_NUM_THREADS="1")

    # no batch of 1 in it: a size of 1 is specialized even where PGO marks the dim dynamic (a
    # stream that starts at 1 compiles twice in every process, plan or not)
    stream = [s for s in STREAM if s > 1]

    def serve() -> int:
        """One process serving the stream: a fork of logged.py's zygote for ``env`` (a Python
        that has imported torch and compiled nothing: the PGO state is read from the kept
        cache directory at its first compile, as in a fresh Python)."""
        out, err = tmp_path / "serve.out", tmp_path / "serve.err"
        rc = run_python([str(script), str(module), json.dumps(stream)], env, tmp_path, out, err)
        assert rc == 0, err.read_text(errors="replace")[-3000:]
        return int(json.loads(out.read_text().strip().splitlines()[-1])["compiles"])

    profiling = serve()
    assert list((tmp_path / "kept").rglob("code_state_*")), "the profiling run wrote no PGO state"
    serving = serve()
    assert profiling == 2  # static first, then automatic dynamic marks the batch dim
    assert serving == p.predicted_compiles == 1

"""torch_compat on the torch installed here: every function runs, and the release table agrees
with what this torch has (CI runs this on 2.4.1, 2.11.0, 2.14.1 and 2.15.0)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest
import torch
import torch._dynamo
import torch._dynamo.config as dynamo_config
from torch._inductor import async_compile

from dyncli.bench import torch_compat
from dyncli.bench.core import strategy as table

pytestmark = pytest.mark.slow

HERE = torch_compat.installed()


def _has_compiler_config(name: str) -> bool:
    try:
        import torch.compiler.config as compiler_config
    except ImportError:  # torch.compiler.config: 2.6
        return False
    return hasattr(compiler_config, name)


# what each strategy needs, looked up on this torch (not read from the table under test)
PRESENT = {
    "collectives": lambda: hasattr(dynamo_config, "enable_compiler_collectives"),
    "unbacked": lambda: hasattr(dynamo_config, "automatic_dynamic_shapes_mark_as"),
    "pgo": lambda: (hasattr(dynamo_config, "automatic_dynamic_local_pgo")
                    and _has_compiler_config("job_id")),
    "eager-then-compile": lambda: (hasattr(torch.compiler, "set_stance") and
                                   "eager_then_compile" in inspect.getsource(
                                       torch._dynamo.eval_frame)),
    "sources": lambda: _has_compiler_config("dynamic_sources"),
}


def test_the_strategy_table_matches_this_torch() -> None:
    assert set(PRESENT) == {row.name for row in table.TABLE if row.needs_torch}
    for strategy, present in PRESENT.items():
        refused = torch_compat.strategy_unsupported(strategy)
        assert (refused is None) == present(), (strategy, torch.__version__, refused)


def test_isolation_is_there_from_2_13() -> None:
    assert torch_compat.can_isolate_recompiles() == (HERE >= (2, 13))
    calls = []

    def counting(gm: object, example_inputs: object) -> object:
        calls.append(1)
        return gm.forward  # type: ignore[attr-defined]

    fn = torch.compile(lambda x: x * 2, backend=counting, **torch_compat.isolate_kwargs())
    assert torch.equal(fn(torch.ones(3)), torch.full((3,), 2.0))
    assert calls
    torch._dynamo.reset()


def test_a_fresh_cache_is_an_empty_directory_of_its_own() -> None:
    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    with torch_compat.fresh_cache():
        inside = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        assert inside != before and os.path.isdir(inside) and not os.listdir(inside)
        torch_compat.clear_caches()
    assert os.environ.get("TORCHINDUCTOR_CACHE_DIR") == before


def test_size_memory_stance_inputs_and_worker_wait() -> None:
    assert torch_compat.reset_code_state() == (HERE >= (2, 6))
    state = torch_compat.code_state()
    torch_compat.set_code_state(state)
    assert torch_compat.code_state() is state
    assert torch_compat.pgo_state_loaded() in (True, False)
    examples = torch_compat.stance_examples()
    torch_compat.set_stance_examples(None)
    assert torch_compat.stance_examples() is None
    torch_compat.set_stance_examples(examples)
    torch_compat.wait_compile_workers(1.0)


POOL = """
import sys, torch
from torch._inductor import async_compile
from dyncli.bench.compile_watch import CountingBackend
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
backend = CountingBackend() if sys.argv[1] == "bench" else "inductor"
with torch.no_grad():
    torch.compile(model, backend=backend)(torch.randn(8, 16))
print(len(getattr(async_compile, "_pool_set", ())))
"""


@pytest.mark.skipif(not hasattr(async_compile, "maybe_warm_pool"),
                    reason="this torch's registered inductor backend warms no compile-worker "
                           "pool: it starts the pools torch.compile's own wrapper does")
def test_bench_compiles_as_torch_compile_does_without_a_pool_torch_would_not_start() -> None:
    # dynamo's registered "inductor" backend starts inductor's compile-worker pool at its
    # first graph (async_compile.maybe_warm_pool: 2.11, 2.13, 2.14.1 and 2.15 call it, 2.4.1
    # has none); torch.compile(model) on CPU starts none. Bench compiled through the former
    # and paid the pool (each worker imports torch: 20 % more CPU per compiling process) where
    # its users do not. With the default worker count of a machine with cores to spare, both
    # must leave the same pools behind. Where the backend warms no pool the two paths start the
    # same pools (2.4.1: one each, the registered backend's too), so the count cannot tell
    # them apart (it cost 19 CPU-s there, round 34).
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "2"}
    pools = {}
    for how in ("plain", "bench"):
        out = subprocess.run([sys.executable, "-c", POOL, how], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        pools[how] = out.stdout.split()[-1]
    assert pools["bench"] == pools["plain"], pools


WAIT = """
import sys
from torch._inductor import async_compile as ac
from dyncli.bench import torch_compat
if sys.argv[1] == "without-2.14s-wait":  # as torch 2.9-2.13 are (2.11: GPU images' torch)
    delattr(ac.AsyncCompile, "wait_process_pool_ready")
ac.AsyncCompile.wakeup()  # what compile_fx does at a CUDA graph: start the pool, ask if ready
started = ac.AsyncCompile._ready_future is not None
torch_compat.wait_compile_workers(300)
print(started, started and ac.AsyncCompile._ready_future.done())
ac.shutdown_compile_workers()
"""


@pytest.mark.skipif(not hasattr(async_compile.AsyncCompile, "wait_pool_ready"),
                    reason="torch < 2.9 cannot wait for its compile-worker pool")
def test_bench_waits_for_a_starting_compile_worker_pool() -> None:
    """The pool a CUDA compile starts (a worker per core, each importing torch) is ready when
    bench's wait returns, on every torch that can wait: 2.14 on through wait_process_pool_ready,
    2.9-2.13 through wait_pool_ready (bench did not wait there before; CI runs this on 2.11)."""
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "2"}
    # one way per torch (each starts a pool whose workers import torch: ~25 CPU-s): where 2.14's
    # wait exists, without it (the 2.9-2.13 path, which bench did not take before); else as is
    way = ("without-2.14s-wait" if hasattr(async_compile.AsyncCompile, "wait_process_pool_ready")
           else "as-this-torch")
    out = subprocess.run([sys.executable, "-c", WAIT, way], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    started, ready = out.stdout.split()[-2:]
    if started == "False":
        pytest.skip("this torch starts no compile-worker pool here")
    assert ready == "True", (way, out.stdout, out.stderr[-2000:])


def test_the_recompile_limit_setting_exists_here() -> None:
    name = torch_compat.recompile_limit_setting().rsplit(".", 1)[1]
    assert isinstance(getattr(dynamo_config, name), int)
    assert torch_compat.recompile_limit_setting() == torch_compat.recompile_limit_setting(
        torch.__version__)


def test_transformers_runs_on_this_torch() -> None:
    pytest.importorskip("transformers")
    # CI's venvs hold a transformers that accepts their torch (the lowest, 4.40, with 2.4)
    assert torch_compat.transformers_refuses_torch() is None

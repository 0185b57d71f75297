"""A program's traceback that ends in torch's compiler (dyncli.logparse.textcrash): the compile
raised, the program stopped, and diagnose says so rather than "Nothing to fix". The forms are
Python's and IPython's as they print tracebacks; the real ones are in tests/data/pasted
(keras-22282, depyf-9) and tests/integration/test_compile_crash.py (torch's own inductor
failure, run)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import events as ev
from dyncli.logparse.textlog import TextLogParser

_SITE = "/venv/lib/python3.11/site-packages/torch"
_PRELUDE = ("I1130 04:35:40.667000 7377 torch/_dynamo/convert_frame.py:1000] [0/0] "
            "Step 1: torchdynamo start tracing f /app/train.py:5\n")


def _read(tmp_path: Path, text: str) -> Diagnosis:
    log = tmp_path / "run.log"
    log.write_text(_PRELUDE + text)
    return diagnose_logs([log])


def _crashes(text: str) -> list[ev.CompileCrash]:
    return [e for e in TextLogParser().parse(text.encode().splitlines())
            if isinstance(e, ev.CompileCrash)]


_CHAINED = f"""Traceback (most recent call last):
  File "{_SITE}/_inductor/graph.py", line 1000, in call_function
    out = lowerings[target](*args, **kwargs)
  File "{_SITE}/_inductor/lowering.py", line 400, in wrapped
    assert len(args) == 2
AssertionError

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/eval_frame.py", line 574, in _fn
    return fn(*args, **kwargs)
  File "{_SITE}/_dynamo/output_graph.py", line 1500, in call_user_compiler
    raise BackendCompilerFailed(self.compiler_fn, e) from e
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
LoweringException: AssertionError:
  target: aten.add.Tensor

Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information
"""


def test_a_chain_is_one_crash_where_the_innermost_raised(tmp_path: Path) -> None:
    (c,) = _crashes(_CHAINED)
    assert c.error.startswith("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:")
    assert "LoweringException: AssertionError:" in c.error
    assert c.at is not None and (c.at.file.endswith("_inductor/lowering.py"), c.at.line) == (True, 400)
    assert c.user is not None and (c.user.file, c.user.line) == ("/app/train.py", 12)
    diag = _read(tmp_path, _CHAINED)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "lowering.py:400 in wrapped" in a.message and "/app/train.py:12" in a.message
    assert "suppress_errors = True" in a.fix and diag.suggestions[0] is a
    assert a.sites and str(a.sites[0]) == "/app/train.py:12"


def test_an_error_of_the_users_code_is_no_crash_of_torch() -> None:
    # the compiled call ran the program's code, which raised: the deepest frame is the user's
    text = f"""Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/eval_frame.py", line 574, in _fn
    return fn(*args, **kwargs)
  File "/app/model.py", line 30, in forward
    raise ValueError("bad input")
ValueError: bad input
"""
    assert _crashes(text) == []


def test_an_exception_another_reader_owns_is_not_a_crash() -> None:
    # fullgraph=True's graph break: a graph break, not a crash of torch
    text = f"""Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/symbolic_convert.py", line 900, in step
    self.dispatch_table[inst.opcode](self, inst)
torch._dynamo.exc.Unsupported: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`).
"""
    assert _crashes(text) == []
    # the recompile limit raised: the raise statement is the limit's line
    text = f"""Traceback (most recent call last):
  File "{_SITE}/_dynamo/convert_frame.py", line 1567, in _compile
    raise FailOnRecompileLimitHit(
"""
    assert _crashes(text) == []


def test_a_cut_traceback_says_nothing_where_every_compiled_call_passes() -> None:
    text = f"""Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/eval_frame.py", line 574, in _fn
    return fn(*args, **kwargs)
"""
    assert _crashes(text) == []
    # cut deep in inductor: the compile raised, its exception not in the paste
    (c,) = _crashes(text + f'  File "{_SITE}/_inductor/scheduler.py", line 77, in fuse\n')
    assert c.cut and c.error == "" and c.at is not None and c.at.function == "fuse"


def test_ipython_forms(tmp_path: Path) -> None:
    # IPython 8's frames ("File F:N, in fn(args)") and its head naming the exception
    text = f"""---------------------------------------------------------------------------
InductorError                             Traceback (most recent call last)
Cell In[3], line 2
      1 x = torch.randn(8)
----> 2 f(x)

File {_SITE}/_dynamo/eval_frame.py:574, in _TorchDynamoContext.__call__.<locals>._fn(*args, **kwargs)
    572 try:
--> 574     return fn(*args, **kwargs)

[... skipping hidden 1 frame]

File {_SITE}/_inductor/codecache.py:2000, in CppCodeCache.load(source_code)
-> 2000 raise exc.CppCompileError(cmd, e.output) from e

InductorError: CppCompileError: C++ compile error
"""
    (c,) = _crashes(text)
    assert c.error == "InductorError: CppCompileError: C++ compile error" and not c.cut
    assert c.at is not None and (c.at.function, c.at.line) == ("CppCodeCache.load", 2000)
    diag = _read(tmp_path, text)
    assert [s.kind for s in diag.suggestions] == [AdviceKind.COMPILE_CRASH]


def test_whose_code_raised_decides_the_fix(tmp_path: Path) -> None:
    def fix(text: str) -> str:
        (a,) = [s for s in _read(tmp_path, text).suggestions
                if s.kind is AdviceKind.COMPILE_CRASH]
        return a.fix

    backend = f"""Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/output_graph.py", line 1500, in call_user_compiler
    raise BackendCompilerFailed(self.compiler_fn, e) from e
torch._dynamo.exc.BackendCompilerFailed: backend='my_backend' raised:
RuntimeError: unsupported node
"""
    assert fix(backend).startswith("the backend 'my_backend' (not one of torch's) raised")
    fake = f"""Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    y = model(x)
  File "{_SITE}/_dynamo/utils.py", line 2000, in get_fake_value
    raise TorchRuntimeError(str(e)).with_traceback(e.__traceback__) from None
torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function add>(*(FakeTensor(..., size=(3,)), FakeTensor(..., size=(4,))), **{{}}):
"""
    assert "run the same call without torch.compile" in fix(fake)


def test_a_serving_stacks_stamps_and_a_lone_exception() -> None:
    # vLLM's logger on every line of the engine's traceback, docker compose's service column
    frames = f'''(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108] Traceback (most recent call last):
(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108]   File "/app/serve.py", line 9, in run
(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108]     model(x)
(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108]   File "{_SITE}/_inductor/lowering.py", line 400, in wrapped
(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108]     assert len(args) == 2
(EngineCore_DP0 pid=77) ERROR 04-03 06:14:31 [core.py:1108] AssertionError
'''
    (c,) = _crashes(frames)
    assert c.error == "AssertionError" and c.user is not None and c.user.file == "/app/serve.py"
    (c,) = _crashes("\n".join(f"server-1   | {line}" for line in frames.splitlines()))
    assert c.at is not None and c.at.function == "wrapped"
    # torch's compiler exception on its own line, its continuation with it
    (c,) = _crashes("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                    "RuntimeError: Cannot find a working triton installation.\n")
    assert c.error.endswith("RuntimeError: Cannot find a working triton installation.")
    # dynamo's "from user code:" after the exception is the user's line, and its resume
    # function's name a graph break's proof
    (c,) = _crashes(f'''  File "{_SITE}/_dynamo/variables/lists.py", line 106, in getitem_const
    assert isinstance(index, (int, torch.SymInt))
AssertionError:

from user code:
   File "/app/attention.py", line 58, in torch_dynamo_resume_in_forward_at_57
    return self.impl(q)
''')
    assert c.user is not None and (c.user.file, c.user.line) == ("/app/attention.py", 58)
    assert [r.function for r in c.resumes] == ["torch_dynamo_resume_in_forward_at_57"]

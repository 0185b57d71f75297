"""What a paste with nothing diagnose reads is refused as: torch's own text without a prefix
(a warning torch raised, inductor's perf hint) and the program's tracebacks that are no crash of
torch's compiler, each said as what it is (one line naming the file, exit 2, no traceback);
a traceback, or a piece of one, whose frames or exception are torch's compiler is read as the
compile's crash. Pieces are cut from tests/data/pasted (each test names its case and lines);
made cases say so."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"
_WRAPPER = "only frame of torch's compiler is torch.compile's wrapper"
_NO_COMPILER = "a Python traceback with nothing of torch's compiler in it"
_WARNING = "a warning torch raised (not an error) and nothing diagnose reads"
_PERF_HINT = "inductor's performance hint that it did not tile a reduction"
_EXPORT_VIOLATION = "torch._dynamo.export re-raises there (`raise constraint_violation_error`"


def _cut(case: str, first: int, last: int) -> bytes:
    """Lines ``first``..``last`` (1-based, inclusive) of a pasted case."""
    return b"".join((PASTED / case).read_bytes().splitlines(keepends=True)[first - 1:last])


def _refusal(tmp_path: Path, text: bytes) -> str:
    paste = tmp_path / "paste.log"
    paste.write_bytes(text)
    with pytest.raises(InputError) as raised:
        diagnose_logs([paste])
    return str(raised.value)


@pytest.mark.parametrize("case,first,last,said", [
    # a traceback cut at eval_frame's _fn: its frames under the wrapper are past the paste
    ("pytorch-124006.log", 6, 14, _WRAPPER),
    # pytorch#133653's traceback without the guard record above it (round 22 said "_WRAPPER"):
    # export's re-raise of the ConstraintViolationError its tracing raised is among its frames
    ("pytorch-133653.log", 3, 13, _EXPORT_VIOLATION),
    # the program's own frame only (the head of a hook's failure)
    ("pytorch-154536.log", 5, 8, _NO_COMPILER),
    # torch 2.1's has_cuda deprecation warning and its code line, then the perf hints with it
    ("pytorch-103715.log", 20, 21, _WARNING),
    ("pytorch-103715.log", 18, 19, _PERF_HINT),
    ("pytorch-103715.log", 18, 21, _WARNING),
])
def test_a_piece_with_nothing_to_read_is_refused_as_what_it_is(
        tmp_path: Path, case: str, first: int, last: int, said: str) -> None:
    message = _refusal(tmp_path, _cut(case, first, last))
    assert said in message and "not a torch log" not in message


@pytest.mark.parametrize("text,said", [
    # torch 2.15's perf hint (_inductor/codegen/simd.py, textwrap.dedent of two lines)
    (b"Reduction over non-contiguous dims.\nConsider setting config.triton.tile_reductions to True.\n",
     _PERF_HINT),
    (b"> reduction over non-contiguous dims\n", _PERF_HINT),  # quoted
    # a warning raised in torch's code, path on Windows
    (b"C:\\py\\Lib\\site-packages\\torch\\cuda\\__init__.py:129: UserWarning: CUDA initialization: "
     b"no NVIDIA driver\n  return torch._C._cuda_getDeviceCount() > 0\n", _WARNING),
    # a traceback through torch.nn only, its exception the program's
    (b"Traceback (most recent call last):\n  File \"/home/u/train.py\", line 3, in <module>\n"
     b"    y = m(x)\n  File \"/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py\", "
     b"line 125, in forward\n    return F.linear(input, self.weight, self.bias)\n"
     b"RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x6)\n", _NO_COMPILER),
    # the program's own Triton kernel, cut in Triton's launcher: Triton's frames alone are not
    # torch's compiler (test_machine_errors), inductor's above them would be
    (b"Traceback (most recent call last):\n  File \"/home/u/run.py\", line 3, in <module>\n"
     b"    k[(1,)](x)\n  File \"/usr/lib/python3.11/site-packages/triton/runtime/jit.py\", line 345, "
     b"in <lambda>\n    return lambda *args, **kwargs: self.run(grid=grid, *args, **kwargs)\n",
     _NO_COMPILER),
    # pytorch#133653's traceback as the thread's description goes on (two frames of torch.nn
    # under export's; the issue store's excerpt): still export's cut constraint violation
    (b"Traceback (most recent call last):\n  File \"/private/tmp/.venv/lib/python3.12/site-packages/"
     b"torch/export/_trace.py\", line 512, in _export_to_torch_ir\n    gm_torch_level, _ = "
     b"torch._dynamo.export(\n  File \"/private/tmp/.venv/lib/python3.12/site-packages/torch/"
     b"_dynamo/eval_frame.py\", line 1425, in inner\n    raise constraint_violation_error\n"
     b"  File \"/private/tmp/.venv/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py\", "
     b"line 1379, in inner\n    result_traced = opt_f(*args, **kwargs)\n  File \"/private/tmp/"
     b".venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1553, in "
     b"_wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n  File \"/private/tmp/"
     b".venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1562, in _call_impl"
     b"\n    return forward_call(*args, **kwargs)\n", _EXPORT_VIOLATION),
    # the same raised in the program's code under the wrapper
    (b"Traceback (most recent call last):\n  File \"/home/u/train.py\", line 3, in <module>\n"
     b"    y = f(x)\n  File \"/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py\", "
     b"line 655, in _fn\n    return fn(*args, **kwargs)\n  File \"/home/u/train.py\", line 9, in f\n"
     b"    raise ValueError(x.shape)\nValueError: torch.Size([4])\n", _WRAPPER),
])
def test_made_pieces_with_nothing_to_read_are_refused_as_what_they_are(
        tmp_path: Path, text: bytes, said: str) -> None:
    message = _refusal(tmp_path, text)
    assert said in message and "not a torch log" not in message


@pytest.mark.parametrize("text", [
    b"I keep seeing reduction over non-contiguous dims in my logs, why?\n",  # prose about it
    b"hello\nworld\n",
    b"  File \"/home/u/x.py\", line 3, in <module>\n",  # a frame alone (no traceback head)
])
def test_text_that_merely_mentions_torch_stays_not_a_torch_log(tmp_path: Path, text: bytes) -> None:
    message = _refusal(tmp_path, text)
    assert "not a torch log" in message or _NO_COMPILER in message


def test_the_refusal_is_one_line_and_exit_2(tmp_path: Path) -> None:
    paste = tmp_path / "warn.log"
    paste.write_bytes(_cut("pytorch-103715.log", 20, 21))
    r = CliRunner().invoke(app, ["diagnose", str(paste)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    error = [line for line in r.stderr.splitlines() if line.startswith("Error: ")]
    assert error == [f"Error: {paste}: {_WARNING}"]
    assert "has_cuda" in r.stderr and "Hint:" in r.stderr


def test_a_piece_of_torch_s_compiler_is_read_as_its_crash() -> None:
    """triton-windows-3: the paste's second traceback (dynamo's output_graph, inductor) is
    read alone as the crash it is, as the whole paste is."""
    diag = diagnose_logs([PASTED / "triton-windows-3.log"])
    assert len(diag.compile_crashes) == 1


@pytest.mark.parametrize("case,first,last", [("triton-windows-3.log", 14, 19)])
def test_a_cut_piece_of_torch_s_compiler_is_read(tmp_path: Path, case: str, first: int,
                                                 last: int) -> None:
    paste = tmp_path / "piece.log"
    paste.write_bytes(_cut(case, first, last))
    (crash,) = diagnose_logs([paste]).compile_crashes
    assert crash.at is not None and "_dynamo" in crash.at.file


@pytest.mark.parametrize("text", [
    # a piece cut under dynamo's convert_frame, its deepest frame the program's (made: the
    # compiler at work anywhere in it, not only at its deepest frame)
    b"Traceback (most recent call last):\n"
    b"  File \"/usr/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py\", line 1, in _compile\n"
    b"    out_code = transform_code_object(code, transform)\n"
    b"  File \"/home/u/model.py\", line 9, in __torch_function__\n"
    b"    return func(*args)\n",
    # an exception of inductor by its module, alone (torch/_inductor/exc.py's InvalidCxxCompiler)
    b"torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in "
    b"torch._inductor.config.cpp.cxx: (None, 'g++')\n",
])
def test_made_pieces_of_torch_s_compiler_are_read(tmp_path: Path, text: bytes) -> None:
    paste = tmp_path / "piece.log"
    paste.write_bytes(text)
    assert len(diagnose_logs([paste]).compile_crashes) == 1

"""Paste hunt 32b (round 32, threads outside pytorch/pytorch, 2025-2026): a symbolic size that
reached a kernel (c10's "SymIntArrayRef expected to contain only concrete integers"), torch.fx's
note on the graph node that raised it, and a backend that takes no ``mode=``.

DeepSpeed's DeepCompile printed c10's error with torch.fx's note ("While executing %view : …",
"Original traceback:", the code the node was traced from), and nothing of torch's log: the
paste is refused, as before, but said as what it is (it was "a Python traceback with nothing of
torch's compiler in it", the note's stack taken for a traceback), with the fix of a symbolic
size in a kernel. A compile crash with that error is an op or backend without symbolic-shape
support, as "Cannot call sizes() on tensor with symbolic sizes/strides" already was.
torch.compile passes ``mode=`` and ``options=`` to a backend other than inductor: the
cudagraphs backend raised TypeError on them before pytorch#182989 (WanVideoWrapper#1041) and
2.14.1-2.15 warn "cudagraphs backend ignoring extra kwargs" instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.errors import InputError
from dyncli.logparse import textnotes

# deepspeed#7229's description (torch 2.6, DeepCompile under ZeRO-1, OpenRLHF's packed samples),
# as the thread has it
_DS_7229 = (
    "MemoryProfiling error /pytorch/build/aten/src/ATen/RegisterCUDA.cpp:18503: SymIntArrayRef "
    "expected to contain only concrete integers\n"
    "\n"
    "While executing %view : [num_users=2] = call_function[target=torch.ops.aten.view.default]"
    "(args = (%arg1_1, [%arg0_1]), kwargs = {})\n"
    "Original traceback:\n"
    '  File "flash_attn/bert_padding.py", line 114, in torch_dynamo_resume_in_unpad_input_at_114\n'
    "    indices = torch.nonzero(all_masks.flatten(), as_tuple=False).flatten()\n"
    "\n")
# deepspeed#7311's description as the store's excerpt has it (cut inside the node's stack)
_DS_7311 = (
    "Launching compile passes: global_steps=0 passes=[<function add_z1_reduce at "
    "0x7fe9857581f0>]\n"
    "MemoryProfiling error /pytorch/build/aten/src/ATen/RegisterCUDA.cpp:7280: SymIntArrayRef "
    "expected to contain only concrete integers\n"
    "\n"
    "While executing %iota : [num_users=3] = call_function[target=torch.ops.prims.iota.default]"
    "(args = (%primals_2,), kwargs = {start: 0, step: 1, dtype: torch.int64, device: cuda:0, "
    "requires_grad: False})\n"
    "Original traceback:\n"
    '  File "/scratch/exe/wd/bgm/modeling/load_train.py", line 361, in causal_lm_forward\n'
    "    outputs = model.__original_forward__(input_ids, attention_mask=attention_mask)\n"
    '  File "/opt/conda/envs/ptca/lib/python3.10/site-packages/transformers/models/qwen2/'
    'modeling_qwen2.py", line 1165, in forward\n'
    "    outputs = self.model(\n")
# 2.15's libc10 words of the same check (formatSymIntArrayRefToIntArrayRefError)
_SYMBOL_215 = ("/pytorch/aten/src/ATen/RegisterCPU_0.cpp:2950: SymIntArrayRef expected to contain "
               "only concrete integers that are stored inline and can be viewed as an "
               "IntArrayRef. Found symbolic SymInt s77 in SymIntArrayRef [s77] at index 0")
_HEAP_215 = ("/pytorch/aten/src/ATen/RegisterCPU_0.cpp:2950: SymIntArrayRef expected to contain "
             "only concrete integers that are stored inline and can be viewed as an IntArrayRef. "
             "Found heap-allocated concrete SymInt 9223372036854775807 in SymIntArrayRef "
             "[9223372036854775807] at index 0. This value is concrete, but the non-owning "
             "IntArrayRef conversion used here cannot represent heap-allocated SymInt values.")


def _crash_fix(diag: Diagnosis) -> str:
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    return a.fix


@pytest.mark.parametrize("paste", [_DS_7229, _DS_7311], ids=["7229", "7311"])
def test_deepcompiles_printed_error_is_refused_as_a_symbolic_size(tmp_path: Path,
                                                                  paste: str) -> None:
    # "a Python traceback with nothing of torch's compiler in it" before round 32: the note's
    # stack of the traced code was taken for a traceback
    with pytest.raises(InputError) as raised:
        diagnose_text(tmp_path, paste)
    said = str(raised.value)
    assert "kernel was given a symbolic size" in said and "torch.fx's note" in said
    assert "nothing of torch's compiler" not in said
    hint = raised.value.hint or ""
    assert "dynamic=False" in hint and "deepspeed#7229" in hint


def test_the_fx_note_alone_is_said_as_a_note(tmp_path: Path) -> None:
    # torch.fx's note under another error (2.8-2.15 add the tlparse line)
    text = ("CUDA out of memory. Tried to allocate 2.00 GiB\n\n"
            + _DS_7229.split("\n", 2)[2].replace("\n\n", "\n")
            + "Use tlparse to see full graph. (https://github.com/pytorch/tlparse?tab=readme-ov-"
              "file#tlparse-parse-structured-pt2-logs)\n")
    with pytest.raises(InputError, match=r"torch\.fx's note on an error raised while a graph ran"):
        diagnose_text(tmp_path, text)


@pytest.mark.parametrize("words", [
    "RuntimeError: /pytorch/build/aten/src/ATen/RegisterCUDA.cpp:7280: SymIntArrayRef expected to "
    "contain only concrete integers",
    f"RuntimeError: {_SYMBOL_215}",
], ids=["2.2-2.14", "2.15"])
def test_a_compile_crash_on_a_symbolic_size_is_an_op_without_symbolic_support(
        tmp_path: Path, words: str) -> None:
    # "an error in torch's compiler … report it to PyTorch" (inductor's) or "the backend … (not
    # one of torch's) raised" (a backend's) before round 32
    for backend in ("inductor", "backend_fn"):
        text = ("Traceback (most recent call last):\n"
                '  File "/venv/torch/_dynamo/output_graph.py", line 1483, in _call_user_compiler\n'
                "    raise BackendCompilerFailed(self.compiler_fn, e).with_traceback(\n"
                f"torch._dynamo.exc.BackendCompilerFailed: backend='{backend}' raised:\n"
                f"{words}\n")
        (tmp_path / backend).mkdir()
        fix = _crash_fix(diagnose_text(tmp_path / backend, text))
        assert fix.startswith("an op, kernel or backend without symbolic-shape support")
        assert "dynamic=False" in fix and "suppress_errors" not in fix


def test_215s_heap_allocated_integer_is_no_symbol(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/venv/torch/_dynamo/output_graph.py", line 1483, in _call_user_compiler\n'
            "    raise BackendCompilerFailed(self.compiler_fn, e).with_traceback(\n"
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
            f"RuntimeError: {_HEAP_215}\n")
    fix = _crash_fix(diagnose_text(tmp_path, text))
    assert fix.startswith("a size was an integer too large to store inline")
    assert "dynamic=False" not in fix


def test_the_symbolic_sizes_words_cost_linear_time() -> None:
    def make(n: int) -> bytes:
        return b"SymIntArrayRef expecte" * (n // 22) + b"x"
    assert_linear(textnotes.unread_kind, make, 300_000)


_BACKEND_TB = (
    "Traceback (most recent call last):\n"
    '  File "/venv/torch/_dynamo/output_graph.py", line 1544, in _call_user_compiler\n'
    "    raise BackendCompilerFailed(\n"
    '  File "/venv/torch/_dynamo/output_graph.py", line 1519, in _call_user_compiler\n'
    "    compiled_fn = compiler_fn(gm, self.example_inputs())\n"
    '  File "/venv/torch/__init__.py", line 2417, in __call__\n'
    "    return self.compiler_fn(model_, inputs_, **self.kwargs)\n"
    "torch._dynamo.exc.BackendCompilerFailed: backend='{name}' raised:\n"
    "TypeError: {fn}() got an unexpected keyword argument '{kw}'\n")


@pytest.mark.parametrize("kw", ["mode", "options"])
def test_the_cudagraphs_backend_takes_no_mode(tmp_path: Path, kw: str) -> None:
    # WanVideoWrapper#1041's title (its body cut above it), pytorch#169939: "an error in
    # torch's compiler … report it to PyTorch", with suppress_errors, before round 32
    text = _BACKEND_TB.format(name="cudagraphs", fn="CudagraphsBackend.__call__", kw=kw)
    fix = _crash_fix(diagnose_text(tmp_path, text))
    assert fix.startswith(f"torch.compile passed its {kw}= to the cudagraphs backend")
    assert 'torch.compile(model, mode="reduce-overhead")' in fix
    assert "suppress_errors" not in fix and "report it to PyTorch" not in fix


def test_a_custom_backend_function_takes_no_mode(tmp_path: Path) -> None:
    text = _BACKEND_TB.format(name="my_backend", fn="my_backend", kw="mode")
    fix = _crash_fix(diagnose_text(tmp_path, text))
    assert fix.startswith("torch.compile passes its mode= to a backend other than inductor")
    assert "'my_backend' takes none" in fix


def test_another_calls_unexpected_keyword_is_not_the_backends(tmp_path: Path) -> None:
    # a TypeError of the model's own code under inductor: not torch.compile's mode
    text = _BACKEND_TB.format(name="inductor", fn="forward", kw="options").replace(
        "backend='inductor' raised:\n", "")
    fix = _crash_fix(diagnose_text(tmp_path, text))
    assert "passes its options=" not in fix


@pytest.mark.parametrize("line", [
    # 2.14.1 and 2.15's log.warning (_dynamo/backends/cudagraphs.py:262), glog's layout
    "W1203 10:58:01.123000 4242 torch/_dynamo/backends/cudagraphs.py:262] cudagraphs backend "
    "ignoring extra kwargs {'mode': 'reduce-overhead'}",
    # logging's default layout without torch's handler (a program's basicConfig)
    "WARNING:torch._dynamo.backends.cudagraphs:cudagraphs backend ignoring extra kwargs "
    "{'mode': 'reduce-overhead'}",
], ids=["glog", "basic"])
def test_the_ignored_mode_is_a_note(tmp_path: Path, line: str) -> None:
    # "1 torch record(s) not understood" before round 32
    diag = diagnose_text(tmp_path, line + "\n")
    assert diag.stats.unrecognized == 0
    (note,) = diag.notes
    assert note.kind is AdviceKind.BACKEND_KWARGS_IGNORED
    assert "ignored mode='reduce-overhead'" in note.message
    assert note.fix.startswith("nothing, where CUDA graphs without inductor")


def test_prose_that_quotes_the_symbolic_size_error_is_not_a_paste_of_it(tmp_path: Path) -> None:
    # round 33: CHANGELOG.md's entry for the reading above ("c10's `SymIntArrayRef expected to
    # contain only concrete integers` (a kernel …") was refused as c10's printed error, not as
    # "not a torch log": the words count only as a program prints them (line start, or ": ")
    prose = ("# Changelog\n\n- diagnose: c10's `SymIntArrayRef expected to contain only concrete "
             "integers` (a kernel or a\n  profiling backend given a symbolic size) is read\n"
             "- and 'Cannot call sizes() on tensor with symbolic sizes/strides' too\n")
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_text(tmp_path, prose)
    assert textnotes.unread_kind(b"RuntimeError: Cannot call sizes() on tensor with symbolic "
                                 b"sizes/strides") == "symbolic-sizes"
    assert textnotes.unread_kind(_SYMBOL_215.encode()) == "symbolic-sizes"

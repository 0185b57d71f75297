"""Paste hunt 28 (round 28): tracebacks as users paste them into GitHub issues, read against
what each thread says, each on the lines the thread's stored excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml; pastes diagnose rightly refuses are inline here, since a
corpus case is never refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

# pytorch#186301 (2026, the description): torch.func.vmap over data-dependent control flow, run
# eagerly; the excerpt ends inside _functorch/vmap.py, before vmap's RuntimeError
_VMAP_186301 = (
    "Traceback (most recent call last):\n"
    '  File "/home/ryan/src/agents/repo/repro.py", line 43, in <module>\n'
    "    main()\n"
    '  File "/home/ryan/src/agents/repo/repro.py", line 39, in main\n'
    "    torch.func.vmap(_identity_broken)(batch)\n"
    '  File "/home/ryan/anaconda3/envs/my_env/lib/python3.12/site-packages/torch/_functorch/'
    'apis.py", line 208, in wrapped\n'
    "    return vmap_impl(\n"
    "           ^^^^^^^^^^\n"
    '  File "/home/ryan/anaconda3/envs/my_env/lib/python3.12/site-packages/torch/_functorch/'
    'vmap.py", line 283, in vmap_impl\n'
    "    return _flat_vmap(\n"
    "           ^^^^^^^^^^^\n")
# pytorch#157543 (2025, the description): FlexAttention's create_block_mask vmaps the mask_mod
# eagerly; the excerpt begins and ends inside the traceback
_VMAP_157543 = (
    '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/attention/flex_attention.py", '
    "line 817, in create_mask\n"
    "    mask = mask_mod(b, h, m, n)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/_functorch/apis.py", line 203, in '
    "wrapped\n"
    "    return vmap_impl(\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/_functorch/vmap.py", line 331, in '
    "vmap_impl\n"
    "    return _flat_vmap(\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/_functorch/vmap.py", line 479, in '
    "_flat_vmap\n"
    "    batched_outputs = func(*batched_inputs, **kwargs)\n")


@pytest.mark.parametrize("text", [_VMAP_186301, _VMAP_157543])
def test_a_torch_func_traceback_is_not_a_compile_that_raised(tmp_path: Path, text: str) -> None:
    # torch.func's transforms live in torch/_functorch/ beside AOTAutograd; it was "the program
    # stopped: torch's compiler raised an exception … at …/_functorch/vmap.py"
    with pytest.raises(InputError) as err:
        diagnose_text(tmp_path, text)
    assert "torch.func's transforms" in str(err.value)
    assert "not of torch.compile" in str(err.value)
    assert "no data-dependent Python control flow" in (err.value.hint or "")


def test_vmap_under_the_compiler_is_still_a_compile_that_raised(tmp_path: Path) -> None:
    # (the neighbour: vmap's frames below dynamo's are a compile's, pytorch#109025's chain)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/u/lib/python3.9/site-packages/torch/_dynamo/utils.py", line 1194, in run_node\n'
        "    return node.target(*args, **kwargs)\n"
        '  File "/u/lib/python3.9/site-packages/torch/_functorch/vmap.py", line 434, in wrapped\n'
        "    return _flat_vmap(\n"
        '  File "/Users/lin/Desktop/Hi/hay.py", line 17, in <lambda>\n'
        "    func = lambda x: x.t()\n"
        "RuntimeError: Batching rule not implemented for aten::t; the fallback path doesn't "
        "work on out= or view ops.\n")
    (c,) = diagnose_text(tmp_path, text).compile_crashes
    assert c.at is not None and c.at.function == "run_node"


def test_frame_lines_the_width_wrapped_are_read() -> None:
    # vllm#16818: the issue's width wrapped each long frame line ("…convert_frame.py\", li" then
    # "ne 715, in compile_inner"; "…line 95," then " in wrapper_function"): each continuation at
    # the margin ended the traceback and both excerpts were "not a torch log"
    (c,) = diagnose_logs([PASTED / "vllm-16818.log"]).compile_crashes
    assert c.cut and c.deepest is not None
    assert (c.deepest.function, c.deepest.line) == ("_compile", 750)
    (c,) = diagnose_logs([PASTED / "vllm-16818-b.log"]).compile_crashes
    assert c.at is not None and (c.at.function, c.at.line) == ("inline_user_function_return", 903)


def test_a_line_that_does_not_finish_the_frame_is_read_as_it_was(tmp_path: Path) -> None:
    # (a frame's start that no continuation finishes: the next line is read on its own, the
    # exception's line too)
    text = ("Traceback (most recent call last):\n"
            '  File "/x/torch/_dynamo/convert_frame.py", li\n'
            "torch._dynamo.exc.InternalTorchDynamoError: AttributeError: boom\n")
    (c,) = diagnose_text(tmp_path, text).compile_crashes
    assert c.error.startswith("torch._dynamo.exc.InternalTorchDynamoError")


@pytest.mark.parametrize("name", ["vllm-16818-b", "vllm-recipes-429"])
def test_a_traceback_cut_at_a_packages_frame_is_not_blamed_on_it(name: str) -> None:
    # the paste ends at vLLM's patched_inline_call (vllm#16818) or Python's contextlib
    # (vllm-project/recipes#429): where the paste ends, not where the exception was raised.
    # It was "the deepest frame, …, is not torch's: a package that patches or hooks torch's
    # compiler raised there"
    diag = diagnose_logs([PASTED / f"{name}.log"])
    (a,) = diag.suggestions
    assert "a package that patches" not in a.fix
    assert a.fix.startswith("the exception is past the end of the paste")


def test_a_paste_begun_at_dynamos_user_stack_is_the_compile_that_raised() -> None:
    # sam2#603: the excerpt begins at "from user code:" (the exception, the title, is
    # above it): it was "not a torch log"
    diag = diagnose_logs([PASTED / "sam2-603.log"])
    (c,) = diag.compile_crashes
    assert c.begun == "from user code:" and not c.cut and c.error == ""
    assert c.user is not None and (c.user.file.endswith("image_encoder.py"), c.user.line) == \
        (True, 132)  # (not module.py's _call_impl, the stack's innermost frame)
    (a,) = diag.suggestions
    assert "the paste begins after it" in a.message
    assert a.fix.startswith("the exception is above where the paste begins")
    assert diag.to_dict()["compile_crashes"][0]["begun"] == "from user code:"


def test_a_stack_after_a_readers_record_is_that_records(tmp_path: Path) -> None:
    # (the neighbour: torchdynamo#1010's WON'T CONVERT record, its stack under it: no crash)
    diag = diagnose_logs([PASTED / "torchdynamo-1010.log"])
    assert not diag.compile_crashes and len(diag.not_converted) == 1


def test_an_unsupported_ending_in_call_impl_is_placed_at_the_call(tmp_path: Path) -> None:
    # sam2#603's exception (the issue's title) with the stack its excerpt has: the innermost
    # frame is nn.Module's _call_impl, where the call of self.position_encoding went into torch;
    # it was "graph break at …\\torch\\nn\\modules\\module.py:1562 … the break is in torch's
    # own code, not a line of yours"
    text = ("torch._dynamo.exc.Unsupported: 'inline in skipfiles: PositionEmbeddingSine.forward "
            "| decorate_context D:\\ProgramData\\Anaconda3\\envs\\sam2\\lib\\site-packages\\torch"
            "\\utils\\_contextlib.py, skipped according trace_rules.lookup SKIP_DIRS'\n\n"
            + (PASTED / "sam2-603.log").read_text())
    diag = diagnose_text(tmp_path, text)
    (b,) = diag.graph_breaks
    assert b.raised and b.file.endswith("image_encoder.py") and b.user_line == 132
    assert "torch's own code" not in diag.suggestions[0].fix


def test_a_traceback_cut_in_unimplemented_is_a_raised_graph_break() -> None:
    # speech-to-speech#27: the excerpt ends at exc.py's `unimplemented` (check_inlineable
    # under it), which raises Unsupported; the handler compiles with fullgraph=True. It was
    # "torch's compiler raised an exception … suppress_errors = True runs the frame eagerly"
    diag = diagnose_logs([PASTED / "speech-to-speech-27.log"])
    assert not diag.compile_crashes
    (b,) = diag.graph_breaks
    assert b.raised and not b.file and "dynamo's unimplemented" in b.reason
    (a,) = diag.suggestions
    assert "TORCHDYNAMO_VERBOSE=1" in a.fix and "without fullgraph=True" in a.fix
    assert "suppress_errors" not in a.fix and diag.causes[0].stops


def test_a_traceback_whole_past_unimplemented_is_read_by_its_exception(tmp_path: Path) -> None:
    # (the neighbour: the exception's line under the frame: the break is read from it)
    text = (PASTED / "speech-to-speech-27.log").read_text() + (
        "    raise Unsupported(msg)\n"
        "torch._dynamo.exc.Unsupported: 'inline in skipfiles: WhisperForConditionalGeneration."
        "forward | decorate_context /x/torch/utils/_contextlib.py, skipped according "
        "trace_rules.lookup SKIP_DIRS'\n")
    (b,) = diagnose_text(tmp_path, text).graph_breaks
    assert b.raised and b.reason.startswith("'inline in skipfiles")


def test_tritons_launcher_the_machine_could_not_build_is_not_torchs_bug() -> None:
    # vllm#17018: inductor's BackendCompilerFailed over gcc failing on Triton's main.c (its
    # cuda_utils launcher): it was "an error in torch's compiler … report it to PyTorch"
    (a,) = diagnose_logs([PASTED / "vllm-17018.log"]).suggestions
    assert a.fix.startswith("Triton could not build its GPU launcher (cuda_utils)")
    assert "Python.h" in a.fix and "report it to PyTorch" not in a.fix


def test_a_wrappers_failed_re_raise_of_backend_compiler_failed_is_the_compiles(
        tmp_path: Path) -> None:
    # rocm_sdk_builder#248 (vLLM's V0 model_runner_base._wrapper: `raise type(err)(…)`):
    # BackendCompilerFailed's constructor takes the backend and the inner exception. It was
    # "a Python traceback with nothing of torch's compiler in it"; vllm#16009 pasted Python
    # 3.9's words, without the class
    for diag in (diagnose_logs([PASTED / "rocm-sdk-builder-248.log"]), diagnose_text(
            tmp_path, "TypeError: __init__() missing 1 required positional argument: "
                      "'inner_exception'\n")):
        (a,) = diag.suggestions
        assert "a wrapper re-raising torch's BackendCompilerFailed" in a.message
        assert a.fix.startswith("the compile failed in the backend")
        assert "report it to PyTorch" not in a.fix


def test_inductors_cpp_the_machines_compiler_did_not_build_is_the_toolchains() -> None:
    # comfyui-sdnq#21 ("Openmp error"): CppCompileError over MSVC's cl, its Output cut. It was
    # "an error in torch's compiler … report it to PyTorch" (applied in
    # tests/integration/test_cpp_compile_fix.py)
    (a,) = diagnose_logs([PASTED / "comfyui-sdnq-21.log"]).suggestions
    assert a.fix.startswith("inductor's C++ code for the CPU did not build")
    assert "Developer prompt" in a.fix and "report it to PyTorch" not in a.fix

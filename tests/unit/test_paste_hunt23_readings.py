"""Paste hunt 23 (round 27): a Triton kernel under inductor's placeholder name with its reason
cut, a setting torch 2.7 renamed set on an older torch, dynamo's "from user code:" stack
pasted at the margin or glued to the exception's line, and a break at warnings.warn; each on the lines the thread's excerpt
has (the corpus's copies: tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.errors import InputError
from dyncli.logparse.textlog import parse_lines

_FAKE = ("Dynamo failed to run FX node with fake tensors: call_function <built-in function mul>"
         "(*(FakeTensor(..., device='cuda:0', size=(1, 42840, 1, 64, 2)), FakeTensor(..., "
         "device='cuda:0', size=(1, 42210, 40, 64, 1))), **{}): got RuntimeError('Attempting to "
         "broadcast a dimension of length 42210 at -4!')")
_MODEL = "C:\\ComfyUI\\custom_nodes\\ComfyUI-WanVideoWrapper\\wanvideo\\modules\\model.py"


def _compilation_error(name: str) -> str:
    return ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
            "CompilationError: at 8:11:\n"
            f"def {name}(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
            "    xnumel = 56623104\n"
            "    tmp0 = tl.load(in_ptr0 + (x0), None)\n"
            "    tmp1 = tmp0.to(tl.float32)\n")


def test_a_kernel_under_the_placeholder_name_gets_the_dtype_guess(tmp_path: Path) -> None:
    # ComfyUI-HunyuanVideoWrapper#263 (torch 2.5.1, Windows): Triton's CompilationError cut
    # above its reason, the kernel "triton_" (unique_kernel_names off); kijai: fp8 weights on a
    # GPU older than the 40xx. It was "an error in torch's compiler … report it"
    diag = diagnose_text(tmp_path, _compilation_error("triton_"))
    (c,) = diag.compile_crashes
    assert c.kernel == "triton_"
    (a,) = diag.suggestions
    assert "fp8_e4m3fn below CUDA arch 8.9" in a.fix
    assert "placeholder name triton_" in a.message
    assert "report it to PyTorch" not in a.fix


def test_a_named_kernel_without_a_conversion_still_asks_for_the_reason(tmp_path: Path) -> None:
    # (the neighbour: a name that shows no dtype conversion is not given the dtype guess)
    diag = diagnose_text(tmp_path, _compilation_error("triton_red_fused_native_batch_norm_0"))
    (a,) = diag.suggestions
    assert "why is past the end of the paste" in a.fix


@pytest.mark.parametrize("text", [
    # triton-windows#105's title (torch 2.5.1): it was "not a torch log"
    "AttributeError: torch._dynamo.config.recompile_limit does not exist\n",
    # ComfyUI-WanVideoWrapper#366: ComfyUI's head, the class dropped, the traceback cut; it was
    # "a Python traceback with nothing of torch's compiler in it"
    "!!! Exception during processing !!! torch._dynamo.config.recompile_limit does not exist\n"
    "Traceback (most recent call last):\n",
    "AttributeError: torch._dynamo.config.accumulated_recompile_limit does not exist\n",
])
def test_a_setting_torch_2_7_renamed_set_on_an_older_torch(tmp_path: Path, text: str) -> None:
    diag = diagnose_text(tmp_path, text)
    (a,) = diag.suggestions
    assert "older than 2.7" in a.fix and "cache_size_limit" in a.fix
    assert a.refused and "torch's config module raised" in a.message


def test_another_setting_this_torch_lacks_is_not_read_as_the_rename(tmp_path: Path) -> None:
    # (only the two renamed settings: a misspelt one is the program's own mistake)
    with pytest.raises(InputError):
        diagnose_text(tmp_path, "AttributeError: torch._dynamo.config.recompile_limt does not "
                                 "exist\n")


def test_dynamos_user_stack_at_the_margin_is_read(tmp_path: Path) -> None:
    # ComfyUI-WanVideoWrapper#1419: the stack under "from user code:" pasted without its
    # indent; the user line and the break its resume function proves were not read
    diag = diagnose_text(tmp_path, (
        f"{_FAKE}\n\nfrom user code:\n"
        f'File "{_MODEL}", line 1053, in torch_dynamo_resume_in_forward_at_1051\n'
        "q, k = apply_rope_comfy(q, k, freqs)\n"
        f'File "{_MODEL}", line 116, in apply_rope_comfy\n'
        "xq_out = freqs_cis[..., 0] * xq_[..., 0] + freqs_cis[..., 1] * xq_[..., 1]\n\n"
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"))
    (c,) = diag.compile_crashes
    assert c.user is not None and (c.user.line, c.user.function) == (116, "apply_rope_comfy")
    assert [r.function for r in c.resumes] == ["torch_dynamo_resume_in_forward_at_1051"]


def test_dynamos_user_stack_glued_to_the_exceptions_line_is_read(tmp_path: Path) -> None:
    # ComfyUI-WanVideoWrapper#1415: the message, the stack and torch's closing words on one
    # line; the stack was read as the exception's text
    diag = diagnose_text(tmp_path, (
        f'{_FAKE} from user code: File "{_MODEL}", line 1053, in '
        "torch_dynamo_resume_in_forward_at_1051 q, k = apply_rope_comfy(q, k, freqs) File "
        f'"{_MODEL}", line 116, in apply_rope_comfy xq_out = freqs_cis[..., 0] * xq_[..., 0] '
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"))
    (c,) = diag.compile_crashes
    assert c.error.endswith("at -4!')") and "from user code" not in c.error
    assert c.user is not None and c.user.line == 116
    assert len(c.resumes) == 1


def test_a_margin_line_after_the_user_stack_ends_it(tmp_path: Path) -> None:
    # (the neighbour: the program's output after a frame's code line is not taken as code)
    diag = diagnose_text(tmp_path, (
        f"{_FAKE}\n\nfrom user code:\n"
        f'File "{_MODEL}", line 116, in apply_rope_comfy\n'
        "xq_out = freqs_cis[..., 0] * xq_[..., 0]\n"
        "Prompt executed in 12.3 seconds\n"))
    (c,) = diag.compile_crashes
    assert c.user is not None and c.user.line == 116


@pytest.mark.parametrize("text", [
    # pytorch#135688 (2.4.1): the exception's line alone; it read "move the untraceable call out"
    "torch._dynamo.exc.Unsupported: Graph break due to unsupported Python builtin _warnings.warn."
    " Please file an issue on GitHub so the PyTorch team can add support for it.\n",
    # 2.5's Python warning; it read "wrap _warnings.warn in a custom operator"
    "/x/torch/_dynamo/variables/functions.py:663: UserWarning: Graph break due to unsupported "
    "builtin _warnings.warn. This function is either a Python builtin (e.g. _warnings.warn) or a "
    "third-party C/C++ Python extension (perhaps created with pybind).\n"
    "  torch._dynamo.utils.warn_once(msg)\n",
])
def test_a_break_at_warnings_warn_gets_torchs_logging_setting(tmp_path: Path, text: str) -> None:
    diag = diagnose_text(tmp_path, text)
    (a,) = diag.suggestions
    assert "reorderable_logging_functions.add(warnings.warn)" in a.fix
    assert "custom operator" not in a.fix


def test_another_builtin_keeps_its_custom_op_hint(tmp_path: Path) -> None:
    # (the neighbour: xDiT#334's flash-attn extension)
    diag = diagnose_text(tmp_path, (
        "/x/torch/_dynamo/variables/functions.py:661: UserWarning: Graph break due to unsupported "
        "builtin flash_attn_2_cuda.PyCapsule.fwd. This function is either a Python builtin (e.g. "
        "_warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind).\n"))
    (a,) = diag.suggestions
    assert "custom operator" in a.fix and "reorderable" not in a.fix


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: _FAKE + " from user code: " + 'File "' + "x" * n, 300_000),
    (lambda n: _FAKE + " from user code: " + 'File "a", line 1, in f ' * n, 20_000),
], ids=["path", "frames"])
def test_a_hostile_line_of_these_forms_costs_linear_time(make: Callable[[int], str],
                                                          n: int) -> None:
    assert_linear(lambda line: list(parse_lines([line.encode(), b"\n"] * 2)), make, n)

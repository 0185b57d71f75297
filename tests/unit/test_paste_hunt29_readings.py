"""Paste hunt 29 (round 29): logs as users paste them into GitHub issues, read against what each
thread says, each on the lines the thread's stored excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError


def test_a_traceback_pasted_at_the_margin_is_the_compile_that_raised() -> None:
    # onediff#941: pasted outside a code block, every frame and its code line at the left
    # margin; each code line ended the traceback, and the paste was "not a torch log"
    diag = diagnose_logs([PASTED / "onediff-941.log"])
    (crash,) = diag.compile_crashes
    assert crash.cut and crash.deepest is not None
    assert (crash.deepest.function, crash.deepest.line) == ("_fn", 172)
    assert crash.deepest.code == "return fn(*args, **kwargs)"


def test_a_margin_traceback_ends_in_its_exception(tmp_path: Path) -> None:
    # a frame without a code line, then the exception: the exception is read, not skipped
    diag = diagnose_text(tmp_path, (
        'File "/w/train.py", line 9, in <module>\n'
        "out = model(x)\n"
        'File "/venv/lib/python3.11/site-packages/torch/_dynamo/output_graph.py", line 1446, '
        "in _call_user_compiler\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: boom\n"))
    (crash,) = diag.compile_crashes
    assert not crash.cut and crash.error.startswith("torch._dynamo.exc.BackendCompilerFailed")
    assert crash.user is not None and (crash.user.file, crash.user.line) == ("/w/train.py", 9)


def test_a_margin_traceback_of_the_programs_own_code_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        diagnose_text(tmp_path, (
            'File "/w/train.py", line 9, in <module>\n'
            "out = load(x)\n"
            'File "/w/data.py", line 3, in load\n'
            "return open(x).read()\n"
            "FileNotFoundError: x\n"))


def test_a_records_user_error_for_a_branch_is_the_branchs_break() -> None:
    # pytorch#138689: a 2.4 [__graph_breaks] record's exception line, UserError for `if
    # is_scaled(val)` on numpy values under compile; told "move the untraceable call out"
    diag = diagnose_logs([PASTED / "pytorch-138689.log"])
    (b,) = diag.graph_breaks
    assert b.reason.startswith("Dynamic control flow is not supported at the moment.")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "torch.where" in a.fix and "untraceable call" not in a.fix


def test_another_user_error_in_a_record_keeps_its_class(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "V1023 16:11:40.698000 139837258437760 torch/_dynamo/symbolic_convert.py:534] [0/0] "
        "[__graph_breaks] torch._dynamo.exc.UserError: Tried to use data-dependent value\n"))
    (b,) = diag.graph_breaks
    assert b.reason == "UserError: Tried to use data-dependent value"


def test_a_skipped_private_torch_function_is_not_only_avoid_calling_it() -> None:
    # pytorch#155426: GB0007 on torch.fx.immutable_collections._immutable_list_unflatten, a
    # nightly's regression; told "Avoid calling the function `_immutable_list_unflatten`"
    diag = diagnose_logs([PASTED / "pytorch-155426.log"])
    (b,) = diag.graph_breaks
    assert b.raised and not b.file
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("torch.fx.immutable_collections._immutable_list_unflatten is "
                            "torch's own private function")
    assert "another torch release and report it to PyTorch" in a.fix


_SKIPPED = (
    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
    "  Explanation: Dynamo developers have intentionally marked that the function `{fn}` in "
    "file `{file}` should not be traced.\n"
    "  Hint: Avoid calling the function `{fn}`.\n"
    "  Hint: Please file an issue to PyTorch.\n\n"
    "  Developer debug context: module: {mod}, qualname: {fn}, skip reason: <missing reason>\n")


@pytest.mark.parametrize(("fn", "file", "mod"), [
    ("is_safe_constant", "/v/site-packages/torch/_dynamo/utils.py", "torch._dynamo.utils"),
    ("_helper", "/v/site-packages/somepkg/utils.py", "somepkg.utils"),
])
def test_a_skipped_public_or_foreign_function_keeps_torchs_hint(
        tmp_path: Path, fn: str, file: str, mod: str) -> None:
    diag = diagnose_text(tmp_path, _SKIPPED.format(fn=fn, file=file, mod=mod))
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix == f"Avoid calling the function `{fn}`."


def test_vllms_stamp_behind_a_pastes_indent_is_read() -> None:
    # vllm#25060: " (EngineCore_DP0 pid=32) ERROR 09-17 01:05:51 [core.py:720] …", the block
    # one space in: "not a torch log"
    diag = diagnose_logs([PASTED / "vllm-25060.log"])
    (b,) = diag.graph_breaks
    assert b.raised and b.reason.startswith("Observed exception")


def test_dynamos_user_stack_begun_below_its_head_is_the_compile_that_raised() -> None:
    # vllm#23714: the paste begins inside dynamo's user stack, behind vLLM 0.10's worker tag
    # "(VllmWorker TP0 pid=1518511)", and ends at dynamo's closing line
    diag = diagnose_logs([PASTED / "vllm-23714.log"])
    (crash,) = diag.compile_crashes
    assert crash.begun == "from user code:" and not crash.error
    assert crash.user is not None and crash.user.line == 69
    assert crash.user.file.endswith("transformers/modeling_rope_utils.py")


@pytest.mark.parametrize("closing", [
    'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information',
    "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if "
    "you're reporting a bug to PyTorch). For even more developer context, set "
    'TORCH_LOGS="+dynamo"'])
def test_a_stack_then_dynamos_closing_line_is_its_user_stack(tmp_path: Path, closing: str) -> None:
    diag = diagnose_text(tmp_path, (
        '  File "/w/model.py", line 12, in forward\n'
        "    if x.sum() > 0:\n"
        "\n" + closing + "\n"))
    (crash,) = diag.compile_crashes
    assert crash.user is not None and (crash.user.file, crash.user.line) == ("/w/model.py", 12)


def test_a_whole_traceback_then_the_closing_line_is_not_a_user_stack(tmp_path: Path) -> None:
    # a traceback with its head is the program's: dynamo's closing line does not make it
    # dynamo's user stack (its exception is what says whose it is)
    with pytest.raises(InputError):
        diagnose_text(tmp_path, (
            "Traceback (most recent call last):\n"
            '  File "/w/model.py", line 12, in forward\n'
            "    if x.sum() > 0:\n"
            "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"))


def test_a_margin_traceback_with_its_carets_is_read() -> None:
    # vllm#18730: behind vLLM's stamp, each frame, its code line and its ^^^ line at the margin
    diag = diagnose_logs([PASTED / "vllm-18730.log"])
    (crash,) = diag.compile_crashes
    assert crash.cut and crash.deepest is not None
    assert crash.deepest.function == "wrapper_function"


def test_a_user_stack_ending_in_pythons_library_is_placed_at_the_call_into_it() -> None:
    # sglang#23386: flashinfer's get_cuda_version calls subprocess.check_output, the stack ends
    # in /usr/lib/python3.12/subprocess.py; the call is flashinfer's cpp_ext.py:73
    diag = diagnose_logs([PASTED / "sglang-23386.log"])
    (crash,) = diag.compile_crashes
    assert crash.begun and crash.user is not None
    assert (crash.user.file.rsplit("/", 1)[-1], crash.user.line) == ("cpp_ext.py", 73)


def test_pytests_location_line_names_the_user_stacks_exception() -> None:
    # pytorch#175875: pytest's "E   from user code:" block, dynamo's closing line, then
    # ".../torch/_dynamo/eval_frame.py:1034: Unsupported": a raised graph break at the stack's
    # line, its message above the paste (a compile crash, "the exception is above", before)
    diag = diagnose_logs([PASTED / "pytorch-175875.log"])
    assert not diag.compile_crashes
    (b,) = diag.graph_breaks
    assert b.raised and b.user_line == 134 and b.file.endswith("utils/deprecation.py")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("the exception above the paste (torch._dynamo.exc.Unsupported)")


def test_pytests_location_line_of_another_exception_names_the_crash(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "E               from user code:\n"
        'E                  File "/w/model.py", line 7, in forward\n'
        "E                   return self.proj(x)\n"
        "E\n"
        "E               Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this "
        "especially if you're reporting a bug to PyTorch). For even more developer context, "
        'set TORCH_LOGS="+dynamo"\n'
        "\n"
        "/usr/lib/python3.12/site-packages/torch/_dynamo/output_graph.py:1540: "
        "BackendCompilerFailed\n"))
    assert not diag.graph_breaks
    (crash,) = diag.compile_crashes
    assert crash.error == "BackendCompilerFailed" and crash.user is not None
    assert crash.user.line == 7


# pytest's report of a break fullgraph=True raised, as pytest 8 prints it under torch 2.15
# (tests/integration/test_pytest_break_fix.py's program): its E block, its location line, and
# its short test summary, which repeats the exception cut at the terminal's width
_PYTEST_REPORT = (
    "E                   torch._dynamo.exc.Unsupported: Data-dependent branching\n"
    "E                     Explanation: Detected data-dependent branching (e.g. `if "
    "my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.\n"
    "E                     Hint: Use `torch.cond` to express dynamic control flow.\n"
    "E                   \n"
    "E                     Developer debug context: attempted to jump with TensorVariable()\n"
    "E                   \n"
    "E                   from user code:\n"
    'E                      File "/w/test_gb.py", line 5, in step\n'
    "E                       if y.sum() > 0:\n"
    "E                   \n"
    "E                   Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this "
    "especially if you're reporting a bug to PyTorch). For even more developer context, set "
    'TORCH_LOGS="+dynamo"\n'
    "\n"
    "/v/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:1276: Unsupported\n"
    "=========================== short test summary info ============================\n"
    "FAILED test_gb.py::test_compiled - torch._dynamo.exc.Unsupported: Data-depend...\n")


def test_pytests_summary_of_a_break_its_report_showed_is_the_same_break(tmp_path: Path) -> None:
    # two raised breaks before round 29: the E block's and the summary's cut copy of it
    diag = diagnose_text(tmp_path, _PYTEST_REPORT)
    (b,) = diag.graph_breaks
    assert b.raised and b.count == 1 and b.reason == "Data-dependent branching"
    assert (b.file, b.user_line) == ("/w/test_gb.py", 5)


def test_pytests_summary_alone_is_still_the_break(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _PYTEST_REPORT.rsplit("\n", 2)[-2] + "\n")
    (b,) = diag.graph_breaks
    assert b.raised and b.reason == "Data-depend..."


def test_fail_on_recompiles_precompiled_guards_name_the_failed_guard() -> None:
    # pytorch#156433: the precompiled entry's tree and GuardDebugInfo(result=0,
    # verbose_code_parts=["isinstance(L['x'], bool)"]); "names no guard" before
    diag = diagnose_logs([PASTED / "pytorch-156433.log"])
    assert diag.stats.unrecognized == 0
    (r,) = diag.recompiles
    assert r.stance and r.reasons == ("isinstance(L['x'], bool)",)
    assert not any("names no guard" in f"{s.message} {s.fix}" for s in diag.suggestions)


def test_a_precompiled_entry_that_passed_names_no_failure(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'. "
        "filename: '/w/m.py', function name: 'fn', line number: 3\n"
        "Failed on the following precompiled guards: \n"
        "\n"
        "TREE_GUARD_MANAGER:\n"
        "+- RootGuardManager\n"
        "| +- LAMBDA_GUARD: L['n'] == 2\n"
        "GuardDebugInfo(\n"
        "result=1,\n"
        "verbose_code_parts=[],\n"
        "num_guards_executed=1,\n"
        "user_stack=None)\n"))
    (r,) = diag.recompiles
    assert r.stance and r.reasons == ()


def test_a_guard_tree_pasted_without_prefixes_is_torchs(tmp_path: Path) -> None:
    # pytorch#167416's comment: the tree alone was "not a torch log"
    diag = diagnose_logs([PASTED / "pytorch-167416-b.log"])
    assert diag.stats.unrecognized == 0 and diag.stats.recognized == 4
    assert not diag.recompiles and not diag.suggestions


def test_a_bare_trees_tensor_guard_is_read(tmp_path: Path) -> None:
    from dyncli.logparse import events as ev
    from dyncli.logparse.textguards import bare_tree
    events = bare_tree([
        "TREE_GUARD_MANAGER:", "+- RootGuardManager",
        "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, "
        "device=None, requires_grad=False, size=[None, 4], stride=[4, 1])  # return x + 1  "
        "# /w/a.py:3 in f"], {"line": 1})
    (e,) = events
    assert isinstance(e, ev.TensorMatch) and e.source == "L['x']"


def test_summary_lines_of_tests_that_failed_alike_are_each_a_break() -> None:
    # pytorch#93449: six FAILED lines, one reason: six breaks
    diag = diagnose_logs([PASTED / "pytorch-93449.log"])
    assert sum(b.count for b in diag.graph_breaks) == 6


def test_each_report_absorbs_its_own_summary_line(tmp_path: Path) -> None:
    block = _PYTEST_REPORT.split("=====")[0]
    summary = _PYTEST_REPORT.rsplit("\n", 2)[-2] + "\n"
    diag = diagnose_text(tmp_path, block + block + "=== short test summary info ===\n"
                          + summary + summary)
    assert sum(b.count for b in diag.graph_breaks) == 2


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_torch_compiles_refusal_of_a_newer_python_in_init_is_the_platforms(
        tmp_path: Path, version: str) -> None:
    # torch/__init__.py's compile() of 2.0-2.5 (diffusers#7441 on torch 2.2.1 under Python 3.12,
    # sbi#1532 under 3.13): "a Python traceback with nothing of torch's compiler in it" before
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/w/test_unet.py", line 40, in test_from_save_pretrained_dynamo\n'
        "    model = torch.compile(model)\n"
        '  File "/nix/store/x-python3-torch-2.2.1/lib/python3.12/site-packages/torch/__init__.py",'
        " line 1801, in compile\n"
        f'    raise RuntimeError("Dynamo is not supported on Python {version}+")\n'
        f"RuntimeError: Dynamo is not supported on Python {version}+\n"))
    (crash,) = diag.compile_crashes
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "use a torch release that supports this Python" in a.fix
    assert crash.user is not None and crash.user.file == "/w/test_unet.py"


# an AOT-compiled function's call its guards rejected, as torch 2.15 prints it
# (tests/integration/test_aot_guards_fix.py's program)
_AOT_REFUSED = (
    "Traceback (most recent call last):\n"
    '  File "/w/aot.py", line 7, in <module>\n'
    "    aot(torch.ones(4))\n"
    '  File "/v/lib/python3.11/site-packages/torch/_dynamo/aot_compile.py", line 1056, in '
    "__call__\n"
    "    raise RuntimeError(msg)\n"
    "RuntimeError: GuardManager check failed, reason: GuardDebugInfo(\n"
    "result=0,\n"
    "verbose_code_parts=[\"tensor 'L['x']' size mismatch at index 0. expected 3, actual 4\"],\n"
    "num_guards_executed=5,\n"
    "user_stack=None)\n")


def test_an_aot_compiled_functions_refused_call_is_not_torchs_bug(tmp_path: Path) -> None:
    # "an error in torch's compiler … report it to PyTorch" before
    diag = diagnose_text(tmp_path, _AOT_REFUSED)
    (crash,) = diag.compile_crashes
    assert crash.error.endswith("user_stack=None)")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert a.fix.startswith("an AOT-compiled function (torch.compile(...).aot_compile) refused")
    assert "(\"tensor 'L['x']' size mismatch at index 0. expected 3, actual 4\")" in a.fix
    assert "report it" not in a.fix and "guard check raised" in a.message

"""Paste hunt 29 (round 29): logs as users paste them into GitHub issues, read against what each
thread says, each on the lines the thread's stored excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def _diagnose_text(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "p.log"
    log.write_text(text)
    return diagnose_logs([log])


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
    diag = _diagnose_text(tmp_path, (
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
        _diagnose_text(tmp_path, (
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
    diag = _diagnose_text(tmp_path, (
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
    diag = _diagnose_text(tmp_path, _SKIPPED.format(fn=fn, file=file, mod=mod))
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix == f"Avoid calling the function `{fn}`."

"""Paste hunt 34d (round 34, compile modes and CUDA graphs, 2024-2026 pastes): the graph break a
CUDA-graph skip's stack proves by the name of the code torch resumed after it.

ultralytics#21975: under mode="reduce-overhead" (or max-autotune) inductor writes why it ran a
graph without CUDA graphs, with the stack of the op that kept it out ("skipping cudagraphs due to
… cpu device (arg2_1). Found from :" and its frames). The stack's first frame is the frame dynamo
compiled; there it was torch_dynamo_resume_in___call___at_259, code torch resumed after a graph
break in __call__ at line 259, a break no record of the paste shows. dyncli read the two skips
and not the break (a frame, a recompile, a limit or a crash's stack named so already proved one).

pytorch#172088: torch's guard self-check (an AssertionError, "Guard failed on the same frame it was
created") with its "Guard fail reason:" on a line of its own under the sentence, both indented:
"not a torch log" (the reader wanted both on one line). Its guard is on a TorchFunctionMode's
state, which the mode changed as torch ran it while compiling: torch's bug, fixed upstream.
"""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

# the paste's second skip, as glenn-jocher pasted it (a trailing space after "Found from :")
_SKIP = (
    "skipping cudagraphs due to skipping cudagraphs due to cpu device (arg2_1). Found from : \n"
    '   File "/usr/local/lib/python3.12/dist-packages/ultralytics/utils/loss.py", line 262, in '
    "torch_dynamo_resume_in___call___at_259\n"
    '    targets = torch.cat((batch["batch_idx"].view(-1, 1), batch["cls"].view(-1, 1), '
    'batch["bboxes"]), 1)\n')
_LOSS = "/usr/local/lib/python3.12/dist-packages/ultralytics/utils/loss.py"


def test_a_skips_resume_frame_proves_a_graph_break() -> None:
    """ultralytics#21975: two skips and the break at loss.py:259 in __call__, its reason not in
    the log (it was two skips only); the skip keeps its place, in the resume function."""
    diag = diagnose_logs([PASTED / "ultralytics-21975.log"])
    assert diag.cudagraphs is not None and len(diag.cudagraphs.skips) == 2
    (brk,) = diag.graph_breaks
    assert (brk.file, brk.user_line, brk.function, brk.reason) == (_LOSS, 259, "__call__", "")
    assert brk.resumed_in == "torch_dynamo_resume_in___call___at_259" and brk.line == 6
    assert diag.cudagraphs.skips[1].user is not None
    assert diag.cudagraphs.skips[1].user.line == 262


def test_a_skip_alone_with_a_resume_frame(tmp_path: Path) -> None:
    """The skip's lines alone, and behind torch's perf_hints glog prefix (2.3-2.10): one break."""
    for text in (_SKIP, "".join(
            "W0907 12:16:49.651000 2105 torch/_inductor/compile_fx.py:1234] [7/0_1] " + line + "\n"
            for line in _SKIP.splitlines())):
        diag = diagnose_text(tmp_path, text)
        assert [(b.user_line, b.function) for b in diag.graph_breaks] == [(259, "__call__")], text


def test_a_break_the_log_records_is_not_counted_again(tmp_path: Path) -> None:
    """A graph-break record that places the break at loss.py:259 already: the skip's resume
    frame proves the same break, not a second one."""
    record = (
        "W0907 12:16:49.600000 2105 torch/_dynamo/variables/tensor.py:1047] [7/0] "
        "Graph break from `Tensor.item()`, consider setting:\n"
        "W0907 12:16:49.600000 2105 torch/_dynamo/variables/tensor.py:1047] [7/0] "
        "    torch._dynamo.config.capture_scalar_outputs = True\n"
        "W0907 12:16:49.600000 2105 torch/_dynamo/variables/tensor.py:1047] [7/0] "
        "Graph break: from user code at:\n"
        "W0907 12:16:49.600000 2105 torch/_dynamo/variables/tensor.py:1047] [7/0] "
        f'  File "{_LOSS}", line 259, in __call__\n'
        "W0907 12:16:49.600000 2105 torch/_dynamo/variables/tensor.py:1047] [7/0] "
        "    n = int(mask.sum().item())\n")
    diag = diagnose_text(tmp_path, record + _SKIP)
    assert sum(b.count for b in diag.graph_breaks) == 1, diag.graph_breaks
    (brk,) = diag.graph_breaks
    assert brk.user_line == 259 and brk.reason


def test_a_skip_without_a_resume_frame_proves_no_break(tmp_path: Path) -> None:
    """Wan2.1#332 (diffusers' transformer_wan.py:193 moving the rotary freqs in forward): a
    skip whose stack is plain frames proves no break; its user line is the innermost frame."""
    diag = diagnose_logs([PASTED / "wan2.1-332.log"])
    assert not diag.graph_breaks
    assert diag.cudagraphs is not None
    (skip,) = diag.cudagraphs.skips
    assert skip.kind == "device" and skip.user is not None
    assert (skip.user.file.rsplit("/", 1)[1], skip.user.line) == ("transformer_wan.py", 193)
    assert not diagnose_text(tmp_path, _SKIP.replace(
        "torch_dynamo_resume_in___call___at_259", "__call__")).graph_breaks


# pytorch#172088's two lines, as the description has them
_SELF_CHECK = ("  AssertionError: Guard failed on the same frame it was created. This is a bug - "
               "please create an issue.\n"
               "  Guard fail reason: 0/0: ___get_torch_function_mode_stack_at(0).count == 5\n")


def test_a_self_checks_reason_on_the_line_under_it(tmp_path: Path) -> None:
    """The two lines are one self-check of compile 0/0, read from the sentence's line (it was
    refused); the fix is the mode's (torch's bug, a newer torch), not the tensor-swap one."""
    diag = diagnose_logs([PASTED / "pytorch-172088.log"])
    (x,) = diag.guard_self_checks
    assert (x.entry, x.reason, x.line) == \
        ("0/0", "___get_torch_function_mode_stack_at(0).count == 5", 1)
    assert diag.stats.unread == 0 and diag.stats.recognized == 2
    (a,) = diag.suggestions
    assert "pytorch#177095" in a.fix and "swap, load, resize" not in a.fix
    # (at the margin, and behind torchrun's rank tag, the same)
    for text in (_SELF_CHECK.replace("  ", ""),
                 "".join(f"[rank1]:{line}\n" for line in _SELF_CHECK.splitlines())):
        assert len(diagnose_text(tmp_path, text).guard_self_checks) == 1, text


def test_a_reason_line_alone_or_under_other_words_is_no_self_check(tmp_path: Path) -> None:
    """torch's "Guard fail reason:" proves the self-check only under its sentence: under another
    line, or after a line between them, nothing is claimed."""
    reason = _SELF_CHECK.splitlines()[1]
    for text in (f"{reason}\n", f"AssertionError: something else\n{reason}\n",
                 f"{_SELF_CHECK.splitlines()[0]}\nunrelated\n{reason}\n"):
        try:
            found = diagnose_text(tmp_path, text).guard_self_checks
        except InputError:  # (refused: no torch log in it)
            found = ()
        assert not found, text


def test_a_tensor_self_check_keeps_its_fix() -> None:
    """ComfyUI-SeedVR2#427's guard on a quantized weight's size: the tensor-swap fix, not the
    mode's."""
    (a,) = diagnose_logs([PASTED / "seedvr2-427.log"]).suggestions
    assert "swap, load, resize" in a.fix and "TorchFunctionMode" not in a.fix

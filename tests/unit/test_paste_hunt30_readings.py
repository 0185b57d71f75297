"""Paste hunt 30 (round 30): logs as users paste them into GitHub issues, read against what each
thread says, each on the lines the thread's stored excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textlog import parse_lines


def test_nix_build_log_tag_is_taken_off() -> None:
    # diffusers#7441: nixpkgs' builder ran diffusers' tests on Python 3.12 with torch 2.2.1, every
    # line behind "diffusers> ": "not a torch log"; now torch's refusal of the Python
    diag = diagnose_logs([PASTED / "diffusers-7441.log"])
    (crash,) = diag.compile_crashes
    assert crash.error == "RuntimeError: Dynamo is not supported on Python 3.12+"
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "does not run on this Python" in a.fix and "report" not in a.fix.replace(
        "not a bug to report", "")


def test_a_prompt_like_tag_on_one_line_is_kept(tmp_path: Path) -> None:
    # a tool's prompt has the tag's form ("mysql> "): on a line alone it is not taken off, so a
    # traceback's exception after it is no torch log
    with pytest.raises(InputError):
        diagnose_text(tmp_path, "mysql> RuntimeError: Dynamo is not supported on Python 3.12+\n"
                                 "done\n")


def test_nix_tag_on_every_line_of_a_glog_record(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "pkg> running tests\n"
        "pkg> V0101 00:00:00.000000 1 torch/_dynamo/guards.py:2772] [0/1] [__recompiles] "
        "Recompiling function f in /w/m.py:3\n"
        "pkg>     triggered by the following guard failure(s):\n"
        "pkg>     - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3\n"))
    (r,) = diag.recompiles
    assert any("size mismatch at index 0" in x for x in r.reasons)


_HOP = "I1202 18:08:14.355000 7382 torch/_dynamo/variables/higher_order_ops.py:2012] [0/0] "


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: "a.b-c+" * (n // 6) + " x", 300_000),
    (lambda n: "pkg> " * (n // 5), 300_000),
    (lambda n: _HOP + "speculate_subgraph: while introspecting " + "a, we were unable " * (n // 18),
     300_000),
    (lambda n: "[0/0] torch._dynamo.exc: [WARNING] Backend compiler failed with a fake tensor "
     "exception at " + "File \"a\", line 1, in f " * (n // 26), 300_000),
], ids=["name", "tags", "speculated", "fake-backend"])
def test_a_hostile_tag_line_costs_linear_time(make: Callable[[int], str], n: int) -> None:
    assert_linear(lambda line: list(parse_lines([line.encode(), line.encode()] * 2)), make, n)


def test_a_traceback_begun_where_dynamo_catches_a_break_is_a_logged_break() -> None:
    # pytorch#94795: torch 2.0's DEBUG log of the graph break it caught in
    # break_graph_if_unsupported (RLock.acquire), training going on; read as "the program stopped:
    # torch's compiler raised an exception"
    diag = diagnose_logs([PASTED / "pytorch-94795.log"])
    assert not diag.compile_crashes
    (b,) = diag.graph_breaks
    assert not b.raised and b.reason.startswith("a graph break torch logged")
    assert not diag.causes[0].stops
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "the program went on" in a.fix and 'TORCH_LOGS="graph_breaks"' in a.fix


def test_a_traceback_begun_inside_dynamos_tracer_does_not_say_the_program_stopped() -> None:
    # pytorch#94795's second excerpt: the same traceback's middle, no head, no exception
    diag = diagnose_logs([PASTED / "pytorch-94795-b.log"])
    (crash,) = diag.compile_crashes
    assert crash.headless and crash.cut
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert not a.message.startswith("the program stopped")
    assert "whether the program stopped on it" in a.message


_WRAPPER_FRAME = ('  File "/v/site-packages/torch/_dynamo/symbolic_convert.py", line 333, in wrapper\n'
                  "    return inner_fn(self, inst)\n")
_CALL_FRAME = ('  File "/v/site-packages/torch/_dynamo/symbolic_convert.py", line 990, in '
               "CALL_FUNCTION\n    self.call_function(fn, args, {})\n")


def test_the_programs_traceback_cut_in_the_tracer_still_stopped_it(tmp_path: Path) -> None:
    # from the program's own outermost frame: an uncaught exception, the program stopped
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/w/train.py", line 9, in <module>\n    out = model(x)\n'
        + _WRAPPER_FRAME + _CALL_FRAME))
    (crash,) = diag.compile_crashes
    assert not crash.headless
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert a.message.startswith("the program stopped")


def test_a_headless_traceback_from_the_programs_module_frame_stopped_it(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, '  File "/w/train.py", line 9, in <module>\n    out = model(x)\n'
                          + _CALL_FRAME)
    (crash,) = diag.compile_crashes
    assert not crash.headless


def test_ipythons_name_of_the_wrapper_is_a_logged_break_too(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/v/site-packages/torch/_dynamo/symbolic_convert.py", line 659, in '
        "break_graph_if_unsupported.<locals>.decorator.<locals>.wrapper\n"
        "    return inner_fn(self, inst)\n" + _CALL_FRAME))
    (b,) = diag.graph_breaks
    assert not b.raised and not diag.compile_crashes


def test_a_chain_begun_at_the_wrapper_is_not_a_logged_break(tmp_path: Path) -> None:
    # (a traceback chained to one before it is that chain's, not torch's log)
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n" + _CALL_FRAME
        + "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n" + _WRAPPER_FRAME + _CALL_FRAME))
    assert diag.compile_crashes and not diag.graph_breaks


def test_a_fake_tensor_error_in_fsdp1s_own_code_is_not_the_users_to_fix() -> None:
    # pytorch#161153: TorchRuntimeError on `set_` in FSDP1's _root_pre_forward (its buffer cast
    # to bfloat16), dynamo's user stack all torch's: told "if it raises the same error, fix it in
    # your code"
    diag = diagnose_logs([PASTED / "pytorch-161153.log"])
    (crash,) = diag.compile_crashes
    assert crash.user is not None and crash.user.line == 838
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert a.fix.startswith("the operation that raised is in torch's own code")
    assert "FSDP2 (fully_shard)" in a.fix and "fix it in your code" not in a.fix


def test_a_fake_tensor_error_with_a_user_line_keeps_its_fix(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: "
        "call_function <built-in function mul>(*(FakeTensor(..., size=(2,)), FakeTensor(..., "
        "size=(3,))), **{}): got RuntimeError('The size of tensor a (2) must match')\n\n"
        "from user code:\n"
        '   File "/w/model.py", line 12, in forward\n'
        "    return x * y\n"))
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "fix it in your code" in a.fix


def test_the_backends_fake_tensor_exception_is_the_break_torch_added() -> None:
    # torchrec#1888: torch 2.3's "Backend compiler failed with a fake tensor exception at" KJT's
    # dist_init frame, "Adding a graph break.", on two ranks: read as nothing before
    diag = diagnose_logs([PASTED / "torchrec-1888.log"])
    assert sorted(b.rank for b in diag.graph_breaks) == [0, 1]
    assert all(b.user_line == 1957 and b.file.endswith("jagged_tensor.py") and not b.raised
               for b in diag.graph_breaks)
    fixes = {s.fix for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK}
    (fix,) = fixes
    assert 'TORCH_LOGS="graph_breaks"' in fix and "untraceable call" not in fix


def test_another_backend_line_is_not_that_break(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "[2024-04-17 17:27:11,806] [26/1] torch._dynamo.exc: [WARNING] Backend compiler "
        "exception\n"))
    assert not diag.graph_breaks


def test_a_speculated_autograd_function_is_a_graph_break() -> None:
    # flash-attention#596: torch 2.1's speculate_subgraph WARNING for flash-attn's Function, and
    # the ERROR line of what it could not trace: "2 torch record(s) were not understood"
    diag = diagnose_logs([PASTED / "flash-attention-596.log"])
    assert diag.stats.unread == 0
    (b,) = diag.graph_breaks
    assert b.reason.startswith("speculate_subgraph: dynamo could not trace "
                               "`trampoline_autograd_fwd` of the user-defined autograd.Function")
    assert not b.file and b.rank == 2
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "torch.library.custom_op" in a.fix


_SPECULATE = ("I1202 18:08:14.355000 7382 torch/_dynamo/variables/higher_order_ops.py:2012] [0/0] "
              "speculate_subgraph: while introspecting autograd.Function, we were unable to trace "
              "function `NestedUserFunctionVariable` into a single graph. This means that Dynamo was "
              "unable to prove safety for this API and will fall back to eager-mode PyTorch, which "
              "could lead to a slowdown.\n"
              "I1202 18:08:14.356000 7382 torch/_dynamo/variables/higher_order_ops.py:2013] [0/0] "
              "Attempted to call function marked as skipped\n"
              "I1202 18:08:14.356000 7382 torch/_dynamo/variables/higher_order_ops.py:2013] [0/0]   "
              "Explanation: Dynamo does not know how to trace the builtin `zlib.adler32.`\n")


def test_torch_215s_speculated_record_and_its_exception(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _SPECULATE)
    assert diag.stats.unread == 0
    (b,) = diag.graph_breaks
    assert b.reason.startswith("speculate_subgraph: ")


def test_a_speculated_record_beside_its_break_record_is_one_break(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _SPECULATE + (
        "V1202 18:08:14.362000 7382 torch/_dynamo/symbolic_convert.py:5577] [0/0] "
        "[__graph_breaks] Graph break in user code at /w/spec.py:8\n"
        "V1202 18:08:14.362000 7382 torch/_dynamo/symbolic_convert.py:5577] [0/0] "
        "[__graph_breaks] Graph Break Reason: Attempted to call function marked as skipped\n"))
    (b,) = diag.graph_breaks
    assert (b.file, b.user_line) == ("/w/spec.py", 8)


def test_a_higher_order_ops_line_not_after_the_record_stays_unread(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "I1202 18:08:14.356000 7382 torch/_dynamo/variables/higher_order_ops.py:2013] [0/0] "
        "something else\n"
        "V1202 18:08:14.362000 7382 torch/_dynamo/symbolic_convert.py:5577] [0/0] "
        "[__graph_breaks] Graph break in user code at /w/spec.py:8\n"))
    assert diag.stats.unread == 1


def test_a_you_marked_item_wrapped_before_its_constant_is_read() -> None:
    # torch-spyre#3005: "E0628 … torch/_guards.py:368] [0/0] - You marked L['x'].size()[0] as
    # dynamic" and, at the margin, "but your code specialized it to be a constant (9). …": read
    # as a guard error whose error "is not in the log"
    diag = diagnose_logs([PASTED / "torch-spyre-3005.log"])
    (s,) = diag.specializations
    assert (s.sources, s.value, s.reason) == (("L['x'].size()[0]",), "9", "constraint_violation")
    assert not diag.guard_errors


@pytest.mark.parametrize("rest", [
    "the output was wrong (9)",  # prose after the cut item: not its rest
    "but your code specialized it to be a",  # the rest cut again before its constant
])
def test_a_line_that_does_not_finish_the_item_is_not_joined(tmp_path: Path, rest: str) -> None:
    diag = diagnose_text(tmp_path, (
        "E0628 14:08:08.614000 1614 torch/_guards.py:368] [0/0] - You marked L['x'].size()[0] "
        "as dynamic\n" + rest + "\n"))
    assert not diag.specializations


def test_rejoined_mark_costs_linear_time() -> None:
    from dyncli.logparse.textviolations import rejoined_mark
    # (the record's line is as long as torch wrote it; the line that may finish it is bounded)
    assert_linear(lambda line: rejoined_mark("- You marked " + line, "specialized it (1)"),
                  lambda n: "a as dynamic but your code" * (n // 26), 300_000)


def test_a_logged_breaks_traceback_begun_at_its_head_line_is_that_break() -> None:
    # pytorch#118334: "[…] [0/0] torch._dynamo.symbolic_convert: [DEBUG] Traceback (most recent
    # call last):" and its frames, from break_graph_if_unsupported's wrapper: "not understood"
    diag = diagnose_logs([PASTED / "pytorch-118334.log"])
    assert diag.stats.unread == 0
    (b,) = diag.graph_breaks
    assert b.reason.startswith("a graph break torch logged") and not b.raised


_DEBUG = "[2024-01-25 16:05:28,337] [0/0] torch._dynamo.symbolic_convert: [DEBUG] "


def test_a_logged_breaks_record_with_its_exception_has_its_reason(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "".join(_DEBUG + t + "\n" for t in (
        "Traceback (most recent call last):",
        '  File "/p/torch/_dynamo/symbolic_convert.py", line 469, in wrapper',
        "    return inner_fn(self, inst)",
        "torch._dynamo.exc.Unsupported: 'skip function apply in file /p/torch/autograd/function.py'")))
    (b,) = diag.graph_breaks
    assert b.reason == "'skip function apply in file /p/torch/autograd/function.py'"
    assert not b.raised


def test_a_tracer_traceback_begun_elsewhere_is_not_a_break(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "".join(_DEBUG + t + "\n" for t in (
        "Traceback (most recent call last):",
        '  File "/p/torch/_dynamo/symbolic_convert.py", line 2130, in run',
        "    super().run()")))
    assert not diag.graph_breaks and diag.stats.malformed == 1

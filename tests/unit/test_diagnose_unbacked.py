"""Data-dependent errors as users paste them, round 22 (paste hunt 17, tests/data/pasted:
pytorch-116336, -157355, -114220, -165421, -106130, -125378, -132393, -134230,
executorch-12732, fbgemm-2923, torchdynamo-1885): every release's wording, torch's own answers
in its message, and the fix for ops whose output the data decides. No torch."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from linear_time import assert_linear
from rich.console import Console

from dyncli.diagnose import unbacked
from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.render import render_terminal
from dyncli.logparse import textdde as dde
from dyncli.logparse.textlog import parse_lines
from dyncli.logparse.textmsg import symbols_in, unbacked_in

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def _diag(text: str) -> Diagnosis:
    return analyze(parse_lines(text.encode().splitlines()))


def _fixes(diag: Diagnosis, kind: AdviceKind) -> str:
    return " ".join(f"{s.message} {s.fix}" for s in diag.suggestions if s.kind is kind)


@pytest.mark.parametrize(("line", "want"), [
    # torch 2.1-2.2's message (pytorch#116336)
    ("It appears that you're trying to get a value out of symbolic int/float whose value is "
     "data-dependent (and thus we do not know the true value.)  The expression we were trying "
     "to evaluate is Eq(32*i0, 0) (unhinted: Eq(32*i0, 0)).  Scroll up to see where each of "
     "these data-dependent accesses originally occurred.", ("evaluate", "Eq(32*i0, 0)")),
    ("ATTENTION: guard_size_oblivious would fix the error, evaluating expression to True.",
     ("hint", "guard_size_oblivious (it would evaluate the expression to True)")),
    ("consider using data-dependent friendly APIs such as guard_or_false, guard_or_true and "
     "statically_known_true.", ("hint", "guard_or_false, guard_or_true or statically_known_true")),
    ("Could not guard on data-dependent expression Ne(zuf0, 0.0) (unhinted: Ne(zuf0, 0.0)).  "
     "(Size-like symbols: none)", ("guard", "Ne(zuf0, 0.0)")),
    # a document's example in inline code is an example, not a log
    ("`ATTENTION: guard_size_oblivious would fix the error`", None),
])
def test_each_wording_states_its_fact(line: str, want: tuple[str, str] | None) -> None:
    got = dde.fact(line)
    assert (got[:2] if got else None) == want


def test_torch_21s_wording_is_read_not_refused() -> None:
    diag = diagnose_logs([PASTED / "pytorch-116336.log"])
    assert [(x.expr, x.what) for x in diag.data_dependent_errors] == [("Eq(32*i0, 0)", "evaluate")]
    assert "i0 is a value read from a tensor's data" in _fixes(diag, AdviceKind.DATA_DEPENDENT)


def test_an_unbacked_float_is_named_as_the_value() -> None:
    diag = diagnose_logs([PASTED / "executorch-12732.log"])
    said = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    assert "zuf0 is a value read from a tensor's data" in said
    assert "its symbols are values" not in said


def test_torchs_framework_hint_is_in_the_fix_and_scoped_to_framework_code() -> None:
    diag = diagnose_logs([PASTED / "fbgemm-2923.log"])
    fix = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    assert "guard_size_oblivious (it would evaluate the expression to True)" in fix
    assert "only if that code is yours to change" in fix  # (never "add it to your code")


def test_a_compile_stopped_on_a_data_dependent_error_is_not_called_a_compiler_bug() -> None:
    diag = diagnose_logs([PASTED / "pytorch-157355.log"])
    crash = _fixes(diag, AdviceKind.COMPILE_CRASH)
    assert "not in the shapes of your code" not in crash
    assert "stopped on a data-dependent error" in crash
    dde_fix = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    # FX's generated code is nobody's line; the question was torch's own ao observer's
    assert "<eval_with_key>" not in dde_fix
    assert "the question was torch's own (ao/quantization/observer.py:1266 in forward)" in dde_fix


@pytest.mark.parametrize("name", ["pytorch-114220.log", "pytorch-165421.log"])
def test_a_dynamic_shape_operator_break_gets_torchs_setting(name: str) -> None:
    fix = _fixes(diagnose_logs([PASTED / name]), AdviceKind.GRAPH_BREAK)
    assert "torch._dynamo.config.capture_dynamic_output_shape_ops = True" in fix
    assert "move the untraceable call out" not in fix


def test_every_releases_dynamic_shape_operator_break_gets_one_fix() -> None:
    """2.1's words (pytorch#114220), 2.2-2.6's with torch's own setting after them
    (cuEquivariance#77: round 22 wrote that one's fix a second time, in other words) and 2.7's
    type (pytorch#165421): one sentence, naming the op."""
    fixes = [s.fix for name in ("pytorch-114220.log", "cuequivariance-77.log",
                                "pytorch-165421.log")
             for s in diagnose_logs([PASTED / name]).suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert fixes[0] == fixes[1] == unbacked.dynamic_shape_fix("aten.nonzero.default")
    assert fixes[2] == unbacked.dynamic_shape_fix("aten.masked_select.default")
    assert fixes[0].startswith("aten.nonzero.default's output size depends on the tensor's "
                               "data: set torch._dynamo.config.capture_dynamic_output_shape_ops")


def test_a_custom_ops_dynamic_output_shape_names_its_op() -> None:
    # a fake kernel's ctx.new_dynamic_size() raises for a custom op too: torch's words name it
    text = ("dynamic shape operator: torchvision.nms.default; to enable, set "
            "torch._dynamo.config.capture_dynamic_output_shape_ops = True")
    fix = unbacked.break_fix(text)
    assert fix is not None and fix.startswith("torchvision.nms.default's output size depends")


def test_an_op_that_fails_with_the_setting_on_is_not_told_to_set_it() -> None:
    # 2.2-2.6's words for 2.15's "no meta kernel" break: the setting is on already
    assert unbacked.break_fix(
        "dynamic shape operator: aten.bincount.default; Operator does not have a meta kernel "
        "that supports dynamic output shapes, please report an issue to PyTorch") is None


def test_a_traceback_cut_at_the_raise_of_dynamic_output_shape_names_it() -> None:
    fix = _fixes(diagnose_logs([PASTED / "pytorch-106130.log"]), AdviceKind.COMPILE_CRASH)
    assert "DynamicOutputShapeException" in fix
    # 2.0.1's dyn_shape raised for nonzero whatever the settings: not "set the flag" alone
    assert "whatever the settings" in fix and "a newer torch" in fix
    assert "FakeTensorMode(shape_env=ShapeEnv())" in fix  # (the paste's own fake mode)


def test_data_dependent_output_names_its_op_and_torchs_hint() -> None:
    fix = _fixes(diagnose_logs([PASTED / "torchdynamo-1885.log"]), AdviceKind.COMPILE_CRASH)
    assert "aten.equal.default returns a Python value" in fix
    assert "(a == b).all()" in fix
    assert "paste them" not in fix  # (the cause is in the paste)


@pytest.mark.parametrize(("text", "want"), [
    ("DataDependentOutputException: aten._local_scalar_dense.default", "capture_scalar_outputs"),
    ("torch._subclasses.fake_tensor.DynamicOutputShapeException: aten.nonzero.default",
     "capture_dynamic_output_shape_ops"),
    ("RuntimeError: Failed running call_function …: Could not guard on data-dependent expression "
     "Eq(u0, 1)", "stopped on a data-dependent error"),
    ("torch._dynamo.exc.UserError: Tried to use data-dependent value in the subsequent "
     "computation.", "stopped on a data-dependent error"),
    ("AssertionError: something else", None),
    # vllm-ascend#2226's worker error, 2.2-2.6's words for an op traced with the setting on
    # (2.15's "no meta kernel" type): not told to set what is set; the compiler's fix stands
    ("RuntimeError: Worker failed with error 'dynamic shape operator: aten.bincount.default; "
     "Operator does not have a meta kernel that supports dynamic output shapes, please report "
     "an issue to PyTorch", None),
    ("torch._dynamo.exc.Unsupported: Dynamic shape operator (no meta kernel)\n  Explanation: "
     "Operator `aten.bincount.default` does not have a meta kernel that supports dynamic output "
     "shapes\n  Hint: Please report an issue to PyTorch torch._subclasses.fake_tensor."
     "DynamicOutputShapeException: aten.bincount.default", None),
])
def test_crash_fix_by_torchs_exception(text: str, want: str | None) -> None:
    got = unbacked.crash_fix(text)
    assert (got is None) if want is None else (got is not None and want in got)


def test_a_break_torch_cannot_trace_even_so_is_not_told_the_setting() -> None:
    # 2.15's "(no meta kernel)": torch's hint is a report; the setting does not help
    assert unbacked.break_fix("Dynamic shape operator (no meta kernel)\nOperator `aten.foo` "
                              "does not have a meta kernel that supports dynamic output shapes") \
        is None
    assert "aten.masked_select.default's output size" in (unbacked.break_fix(
        "Dynamic shape operator\nOperator `aten.masked_select.default`'s output shape depends "
        "on input Tensor data.") or "")


def test_exports_own_checks_and_the_call_it_blames_are_the_fix() -> None:
    diag = diagnose_logs([PASTED / "pytorch-132393.log"])
    (x,) = diag.data_dependent_errors
    assert x.checks == ("torch._check(items[2] >= 0)", "torch._check(items[2] < 0)")
    assert x.user is not None and (x.user.file, x.user.line) == ("test/export/test_export.py", 1950)
    fix = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    assert "torch._check(items[2] >= 0) or torch._check(items[2] < 0)" in fix
    assert "test/export/test_export.py:1950" in fix


def test_the_old_framework_culprit_heading_gives_the_culprit() -> None:
    diag = diagnose_logs([PASTED / "pytorch-134230.log"])
    (x,) = diag.data_dependent_errors
    assert x.culprit == "/data/users/ezyang/b/pytorch/torch/utils/_stats.py:21 in wrapper"
    assert "the question was torch's own" in _fixes(diag, AdviceKind.DATA_DEPENDENT)


def test_a_heading_without_its_line_reads_nothing_and_a_check_alone_is_not_a_fact() -> None:
    # the heading, then prose: no culprit; a numbered torch._check with no heading: not a log's
    diag = _diag("Potential framework code culprit (scroll up for full backtrace):\n"
                 "see the docs\n  1. torch._check(x >= 0)\n")
    assert diag.data_dependent_errors == ()
    assert dde.under("checks", b"  1. torch._check(x >= 0)", 3) is not None
    assert dde.under("checks", b"see the docs", 3) is None
    assert dde.under("call", b"not a frame", 3) is None


def test_hostile_lines_stay_bounded_and_never_raise() -> None:
    def lines(n: int) -> str:
        return ("To fix the error, insert one of the following checks before this call:\n"
                + "  1. torch._check(" + "(" * (2 * n) + ")\n"
                + "The expression we were trying to evaluate is " + "Eq(" * n + "\n"
                + "ATTENTION: guard_size_oblivious would fix the error" * (n // 50) + "\n")

    diag = _diag(lines(100_000))
    assert_linear(_diag, lines, 100_000)
    out = io.StringIO()
    render_terminal(diag, console=Console(file=out, width=120, color_system=None))
    assert all(len(x.expr) <= dde.MAX_EXPR for x in diag.data_dependent_errors)


def test_non_strict_exports_hook_is_not_called_torchs_own_question() -> None:
    # pytorch#153955: torch names its __torch_function__ hook, around a call of the traced code
    diag = diagnose_logs([PASTED / "pytorch-153955.log"])
    said = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    assert "the question was torch's own" not in said
    assert "(torch's own code)" not in said
    assert "the call is in the frame above it" in said


def test_the_exportdb_link_alone_proves_a_data_dependent_error() -> None:
    # executorch#8988: the message cut, the link and dynamo's user stack left (refused before)
    diag = diagnose_logs([PASTED / "executorch-8988.log"])
    assert [(x.expr, x.what) for x in diag.data_dependent_errors] == [("", "unnamed")]
    said = _fixes(diag, AdviceKind.DATA_DEPENDENT)
    assert "paste the error's message whole" in said
    # with the expression in the log, the link adds nothing of its own
    named = _diag("Could not guard on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1)).\n"
                  "For more information about this error, see: https://pytorch.org/docs/main/"
                  "generated/exportdb/index.html#constrain-as-size-example\n")
    assert [x.expr for x in named.data_dependent_errors] == ["Eq(u0, 1)"]


def test_ipython_frames_copied_with_their_links_are_a_traceback() -> None:
    # pytorch#145970: JupyterLab's copy of IPython 8's frames ("File [path:N](url), in fn(…)")
    diag = diagnose_logs([PASTED / "pytorch-145970.log"])
    (crash,) = diag.compile_crashes
    assert crash.at is not None and crash.at.file.endswith("torch/_dynamo/utils.py")
    assert crash.at.line == 2132 and crash.at.function == "run_node"


def test_a_graph_break_message_that_lost_its_indent_keeps_its_parts() -> None:
    # pytorch#165421: "Explanation:" and "Hint:" at the margin under the Unsupported line
    diag = diagnose_logs([PASTED / "pytorch-165421.log"])
    (b,) = diag.graph_breaks
    assert "aten.masked_select.default" in b.explanation
    assert b.hints == ("Enable tracing of dynamic shape operators with "
                       "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`",)
    assert "aten.masked_select.default's output size" in _fixes(diag, AdviceKind.GRAPH_BREAK)
    assert diag.stats.unrecognized == 0


def test_a_cut_raise_elsewhere_than_dyn_shape_gets_the_setting() -> None:
    fix = unbacked.crash_fix("", "raise DynamicOutputShapeException(func)", "nonzero")
    assert fix is not None and "capture_dynamic_output_shape_ops = True before compiling" in fix
    assert "whatever the settings" not in fix


def test_where_the_symbol_was_made_is_in_the_json() -> None:
    """pytorch#116703: torch's allocation stack of i1 ends at the user's call; the JSON carries
    it as ``made`` (docs/diagnose.md), as the advice names it."""
    diag = diagnose_logs([PASTED / "pytorch-116703.log"])
    (row,) = [x for x in diag.to_dict()["data_dependent_errors"] if x["made"]]
    assert row["expr"] == "i1"
    assert row["made"]["line"] == 45 and row["made"]["function"] == "<module>"
    assert row["made"]["file"].endswith("nonzero_backward_guard_exception.py")
    assert row["made"]["code"] == "vr_binned_x_ij = forward_aot(x)"


def test_one_list_of_symbol_names_reads_sizes_and_unbacked_values() -> None:
    """The analyzer's symbols (joining a symbol's record to the expression that names it) and
    the advice's unbacked values ("u0 is a value") are one list: every release's names."""
    expr = "Eq(s0*u1, 32*i0) & Ne(zuf0, 0.0) & (f2 < s10) & us0 & u1_"
    assert symbols_in(expr) == {"s0", "u1", "i0", "zuf0", "f2", "s10"}
    assert unbacked_in(expr) == {"u1", "i0", "zuf0", "f2"}


def test_an_items_fix_is_one_sentence_whichever_words_torch_used() -> None:
    # round 24: 2.1-2.6's break reason naming capture_scalar_outputs (pytensor#1110) and the
    # DataDependentOutputException it comes from had two near-twin sentences; now one
    (a,) = [s for s in diagnose_logs([PASTED / "pytensor-1110.log"]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix == unbacked.data_output_fix("aten._local_scalar_dense.default")
    assert a.fix.startswith("aten._local_scalar_dense.default is a tensor's .item(): set ")
    # where the setting is not the answer (the backend failed on a captured .item()), not named
    (b,) = [s for s in diagnose_logs([PASTED / "prime-rl-999.log"]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert "capture_scalar_outputs" not in b.fix and "tensor's .item()" in b.fix


@pytest.mark.parametrize("reason", [
    "data dependent operator: aten.equal.default",  # 2.1
    "data dependent operator: aten.equal.default; to enable, set "  # 2.2-2.6
    "torch._dynamo.config.capture_scalar_outputs = True",
])
def test_a_data_dependent_operator_break_gets_the_ops_fix(tmp_path: Path, reason: str) -> None:
    # round 23 dropped the "; to enable, set …" reading, and with it any answer for an op other
    # than .item() ("move the untraceable call out"); the setting torch names there helps
    # .item() only (2.15 utils.py), so the op's own fix, as for its exception
    log = tmp_path / "dd.log"
    log.write_text("Break Reasons:\n  Break Reason 1:\n    Reason: " + reason + "\n    User Stack:\n"
                   "      <FrameSummary file /home/u/prog.py, line 12 in f>\n")
    (a,) = [s for s in diagnose_logs([log]).suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix == unbacked.data_output_fix("aten.equal.default")
    assert "(a == b).all()" in a.fix

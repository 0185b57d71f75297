"""Data-dependent errors (dyncli.logparse.textdde): each line's fact, wherever it stands in a
paste, and what diagnose says of them; and recompiles the compile ids prove with no reason in
the log (round 13, tests/data/pasted: pytorch-143249, -131911, -150613, -193693, torchrec-2326,
pytorch-111329). No torch."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.render import render_terminal
from dyncli.logparse import events as ev
from dyncli.logparse.textdde import fact
from dyncli.logparse.textlog import parse_lines

E = "E1213 17:00:12.650000 1661649 torch/fx/experimental/recording.py:299] [0/0] "
# (fake_tensor's record in the same process as recording.py's: a second pid without a rank tag
# is a second process, whose compile ids are its own)
FAKE = "E1213 17:00:12.645000 1661649 torch/_subclasses/fake_tensor.py:1761] [0/0] "
WARN = "W0815 22:53:17.219000 9155 torch/_functorch/_aot_autograd/graph_compile.py:2122] [0/0] "
# the program's traceback after torch's log of the error: the error left torch, the run stopped
# (torch's record alone does not show it: torch logs a failed call and re-raises it to code
# that may catch it, pytorch#134421)
STOPPED = ('Traceback (most recent call last):\n'
           '  File "/home/me/run.py", line 30, in <module>\n'
           '    out = model(x)\n')


@pytest.mark.parametrize(("line", "want"), [
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on "
     "data-dependent expression -u0 > 4 (unhinted: -u0 > 4).  (Size-like symbols: none)",
     ("guard", "-u0 > 4")),
    ("torch._inductor.exc.InductorError: GuardOnDataDependentSymNode: Could not guard on "
     "data-dependent expression Eq(Max(1, u0), 1) (unhinted: Eq(Max(1, u0), 1)).  (Size-like "
     "symbols: u0)", ("guard", "Eq(Max(1, u0), 1)")),
    ("Could not extract specialized integer from data-dependent expression u0 + 1 (unhinted: "
     "u0 + 1).", ("int", "u0 + 1")),
    ("failed while running evaluate_expr(*(u0 >= 9, None), **{'fx_node': None})",
     ("evaluate", "u0 >= 9", None, "old")),
    ("failed while running evaluate_expr(*((u0//3), None), **{'fx_node': False})",
     ("evaluate", "u0//3", None, "old")),
    # 2.8 on: _inner_evaluate_expr records, every argument positional (2.8.0 :7323)
    ("failed while running evaluate_expr(*(Ne(u0, 1), None, None, False, False, False, None), "
     "**{})", ("evaluate", "Ne(u0, 1)", None, "new")),
    # symbolic_shapes' warning: a data-dependent error's line only up to 2.7 (the analyzer's)
    ("failed during evaluate_expr((u0//3), hint=None, size_oblivious=False, forcing_spec=False",
     ("during", "u0//3")),
    ("Caused by: (_meta_registrations.py:4832 in meta_select)",
     ("culprit", "_meta_registrations.py:4832 in meta_select", None)),
    # torch's SLoc with the user's line first (the line tracing was at), the frame in ()
    ("Caused by: if n > 3:  # ome/me/prog.py:6 in f (_dynamo/variables/tensor.py:1234 in "
     "evaluate_expr)", ("culprit", "_dynamo/variables/tensor.py:1234 in evaluate_expr",
                        ev.UserLoc("ome/me/prog.py", 6, "f", "if n > 3:"))),
    ("failed while attempting to run meta for aten.select.int", ("op", "aten.select.int")),
    # the expression's own parentheses are kept, a wrapping pair is not
    ("Could not guard on data-dependent expression Eq(((2*u48)//(u48 + u49)), 0) (unhinted: "
     "x)", ("guard", "Eq(((2*u48)//(u48 + u49)), 0)")),
    ("failed while running evaluate_expr(*((u0 + 1)*(u1 + 1), None), **{})",
     ("evaluate", "(u0 + 1)*(u1 + 1)", None, "old")),
    ("Could not simplify Eq(u0, 0)", None),
    ("  File \"torch/fx/experimental/symbolic_shapes.py\", line 6305, in evaluate_expr", None),
])
def test_each_line_states_one_fact(line: str, want: tuple[object, ...] | None) -> None:
    assert fact(line) == want


def _diag(text: str) -> tuple[Diagnosis, ev.ParseStats, str]:
    stats = ev.ParseStats()
    diag = analyze(parse_lines(text.encode().splitlines(keepends=True), stats), stats)
    out = io.StringIO()
    render_terminal(diag, console=Console(file=out, width=300, color_system=None))
    return diag, stats, out.getvalue()


def test_a_logged_traceback_gives_one_error_with_its_culprit_and_operator() -> None:
    # recording.py's record starts inside the traceback (a paste's first line), the expression
    # comes twice (evaluate_expr's failure, then the exception), fake_tensor names the operator
    diag, stats, out = _diag(
        FAKE + "failed while attempting to run meta for aten.select.int\n"
        + E + "failed while running evaluate_expr(*(-u0 > 4, None), **{'fx_node': None})\n"
        + E + "  File \"torch/fx/experimental/symbolic_shapes.py\", line 6495, in _evaluate_expr\n"
        + E + "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard"
              " on data-dependent expression -u0 > 4 (unhinted: -u0 > 4).  (Size-like symbols: none)\n"
        + E + "\n"
        + E + "Caused by: (_meta_registrations.py:4832 in meta_select)\n" + STOPPED)
    (x,) = diag.data_dependent_errors
    assert (x.compile_id, x.expr, x.what) == ("0/0", "-u0 > 4", "guard")  # the telling reading
    assert (x.op, x.culprit) == ("aten.select.int", "_meta_registrations.py:4832 in meta_select")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT]
    assert "torch._check" in a.fix and "torch's own" in a.fix  # a torch frame asked
    assert "Data-dependent errors" in out and "Nothing to fix" not in out
    assert "1 data-dependent error(s)" in out  # its cause's cost, not "0 compile(s)"
    assert stats.unrecognized == 5  # the traceback's File line and its empty line; STOPPED's


def test_the_message_pasted_alone_is_read_not_rejected() -> None:
    # dynamo's graph-break text without any log prefix (torchrec#2326); "Could" starts a
    # silent record of torch's when it has a prefix: a data-dependent one is not silent
    diag, stats, _ = _diag(
        "Tried to use data-dependent value in the subsequent computation. … Could not guard on "
        "data-dependent expression Eq(u48, 0) (unhinted: Eq(u48, 0)).  (Size-like symbols: u48)\n"
        "\n"
        "Potential framework code culprit (scroll up for full backtrace):\n")
    assert [x.expr for x in diag.data_dependent_errors] == ["Eq(u48, 0)"]
    assert stats.torch_lines > 0
    prefixed, _, _ = _diag(E + "Could not guard on data-dependent expression u0 < 3 (unhinted: u0 < 3)\n")
    assert [x.expr for x in prefixed.data_dependent_errors] == ["u0 < 3"]


def test_user_code_that_asked_gets_the_fix_at_its_line() -> None:
    diag, _, _ = _diag(E + "Could not guard on data-dependent expression Eq(u0, 1) (unhinted: x)\n"
                       + E + "Caused by: (/home/me/model.py:12 in forward)\n" + STOPPED)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT]
    assert a.fix.startswith("the code at /home/me/model.py:12 needs the value itself")
    assert "torch's own" not in a.message
    # the user's line torch's message names comes first, the frame that asked is dynamo's
    diag, _, _ = _diag(E + "Could not guard on data-dependent expression u0 > 3 (unhinted: x)\n"
                       + E + "Caused by: if n > 3:  # home/me/prog.py:6 in f "
                             "(_dynamo/variables/tensor.py:1234 in evaluate_expr)\n" + STOPPED)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT]
    assert a.fix.startswith("your code at home/me/prog.py:6 (`if n > 3:`) needs the value")
    assert "(torch's own code)" in a.message and [str(s) for s in a.sites] == ["home/me/prog.py:6"]


SS = "I1015 09:19:16.252000 7042 torch/fx/experimental/symbolic_shapes.py:2268] "


def test_recompiles_proven_without_a_reason_are_said_and_trip_fail_on() -> None:
    text = "".join(f"{SS}[0/{n}] create_env\n" for n in range(2, 6))
    diag, _, out = _diag(text)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.UNEXPLAINED]
    assert "compiled 6 times" in a.message and "5 recompile(s)" in a.message
    assert 'TORCH_LOGS="recompiles"' in a.fix
    assert "Nothing to fix" not in out and "5 compile(s)" in out  # its cause's cost
    import dataclasses
    assert dataclasses.replace(diag, fail_on=("recompiles",)).tripped == ("recompiles",)
    one, _, out = _diag(f"{SS}[0/0] create_env\n")
    assert not one.suggestions and "Nothing to fix" in out


def test_a_log_with_reasons_is_not_said_to_lack_them() -> None:
    # a recompile record names a reason: another frame's (or rank's) proven compiles are that
    # paste's cut, not a log without reasons (pytorch-138813)
    rec = ("V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/1] [__recompiles] "
           "Recompiling function f in /a.py:1\n"
           "V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/1] [__recompiles]     "
           "triggered by the following guard failure(s):\n"
           "V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/1] [__recompiles]     "
           "- 0/0: tensor 'L['x']' size mismatch at index 0. expected 2, actual 3\n")
    diag, _, _ = _diag(rec + f"{SS}[3/4] create_env\n")
    assert not [s for s in diag.suggestions if s.kind is AdviceKind.UNEXPLAINED]


def test_a_compile_that_failed_making_its_shape_guards_is_not_a_clean_one() -> None:
    # torch 2.3.1's own log of a mark_dynamic the code specialized (tests/data/make_compat.py):
    # the ConstraintViolationError is raised, not logged, so the log shows only the guard error
    from pathlib import Path

    from dyncli.diagnose.read import diagnose_logs

    log = Path(__file__).resolve().parents[1] / "data" / "2.3.1" / "compat" / "text.log"
    diag = diagnose_logs([log])
    assert [(cid, fn) for _, cid, fn, _ in diag.guard_errors] == [("4/0", "SHAPE_ENV")]
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GUARD_ERROR]
    assert a.message.startswith("compile [4/0] failed making its shape guards")
    assert "L['x'].size()[0] was specialized to 4 at" in a.fix and "compat_program.py:42" in a.fix
    # where torch's error is in the same record, the constraint violation says it (no twin)
    both, _, _ = _diag(
        E + "Error while creating guard:\n" + E + "Name: ''\n" + E + "    Source: shape_env\n"
        + E + "    Create Function: SHAPE_ENV\n"
        + E + "  - Not all values of RelaxedUnspecConstraint(L['x'].size()[0]) are valid because "
              "L['x'].size()[0] was inferred to be a constant (4).\n")
    assert not both.guard_errors and [s.value for s in both.specializations] == ["4"]


def test_a_hostile_line_is_read_within_its_bound() -> None:
    # a line of many starts and no end ("evaluate_expr(*(" and "failed during evaluate_expr(",
    # each a place the expressions scan from): only the first MAX_TEXT characters are read
    from dyncli.logparse.textdde import MAX_TEXT

    line = "failed while running evaluate_expr(*(" * 50_000 + "failed during evaluate_expr(" * 50_000
    assert len(line) > 100 * MAX_TEXT and fact(line) is None
    tail = "x" * (2 * MAX_TEXT) + "Could not guard on data-dependent expression u0 > 1"
    assert fact(tail) is None  # past the bound: not read (torch's lines are far shorter)


def test_a_graph_break_whose_reason_is_data_dependent_stays_a_graph_break() -> None:
    # torch 2.1-2.5's one-line form: the reason inline, the user's frames after it
    gb = "V1122 01:19:36.607000 7042 torch/_dynamo/symbolic_convert.py:1200] [0/0] [__graph_breaks] "
    diag, _, _ = _diag(
        gb + "Graph break: Could not guard on data-dependent expression u0 > 1 (unhinted: u0 > 1)"
             " from user code at:\n"
        + gb + '  File "/home/me/prog.py", line 10, in rows\n'
        + gb + "    if idx.size(0) > 1:\n")
    (b,) = diag.graph_breaks
    assert (b.file, b.user_line) == ("/home/me/prog.py", 10)
    assert "data-dependent expression u0 > 1" in b.reason


def test_a_graph_break_whose_reason_is_a_traceback_names_its_exception_and_place() -> None:
    # a 2.3 development build's form (pytorch#119309): "Graph break: Traceback …", the exception, then
    # "from user code at:" and the user's frames; here a data-dependent error in torch.split
    gb = "[2024-02-06 11:16:47,415] [22/0] torch._dynamo.symbolic_convert.__graph_breaks: [DEBUG] "
    diag, stats, _ = _diag(
        gb + "Graph break: Traceback (most recent call last):\n"
        + gb + '  File "/x/torch/_dynamo/utils.py", line 1628, in run_node\n'
        + gb + "    return node.target(*args, **kwargs)\n"
        + gb + "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard "
               "on data-dependent expression Eq(u0, 0) from user code at:\n"
        + gb + '  File "/home/me/model.py", line 41, in forward\n'
        + gb + "    a, b = torch.split(x, sizes)\n")
    (b,) = diag.graph_breaks
    assert (b.file, b.user_line) == ("/home/me/model.py", 41) and stats.malformed == 0
    assert b.reason == "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 0)"


PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def test_dynamos_user_stack_under_the_error_is_its_line() -> None:
    """executorch-8988 (tests/data/pasted): the paste kept dynamo's UserError's exportdb link and
    its `from user code:` stack, whose last frame outside torch (utils.py:355, `tmp_A == tmp_B`)
    is the line that needed the value. It was in the paste and not in the report before round
    23; torch's frames in the stack (external_utils, module, _contextlib) are not it."""
    diag, stats, _ = _diag((PASTED / "executorch-8988.log").read_text())
    (x,) = diag.data_dependent_errors
    assert x.user is not None and (x.user.file.endswith("llama/utils.py"), x.user.line,
                                   x.user.function, x.user.code) == \
        (True, 355, "evaluate_posterior", "tmp_A == tmp_B")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT]
    assert "utils.py:355 (`tmp_A == tmp_B`) needs the value itself" in a.fix
    assert [str(s).rsplit("/", 1)[-1] for s in a.sites] == ["utils.py:355"]
    assert stats.unrecognized == 4  # the user frames' tail above the error, and torch's C++ hint


def test_a_stack_not_under_a_data_dependent_error_is_not_joined_to_one() -> None:
    """A `from user code:` stack far from the error's lines (another error's, a graph break's)
    says nothing of it: the error keeps "-" for its place."""
    text = (PASTED / "executorch-8988.log").read_text()
    head, _, stack = text.partition("from user code:")
    far = head + "step 1\n" * 80 + "from user code:" + stack
    diag, _, _ = _diag(far)
    (x,) = diag.data_dependent_errors
    assert x.user is None
    # and a stack with no data-dependent error before it gives none
    diag, _, _ = _diag("from user code:" + stack)
    assert not diag.data_dependent_errors


# Round 23: a data-dependent error logged with torch's prefix, then dynamo's `from user code:`
# stack without one (a handler that stamps a message's first line only, torch 2.0's records, a
# paste that kept the prefix where torch wrote it and not on the exception's tail). No public
# paste shows it whole: pytorch-143249's recording.py record, then executorch-8988's stack.
_STACK = "from user code:" + (PASTED / "executorch-8988.log").read_text().partition(
    "from user code:")[2]


def _prefixed_then(between: str) -> Diagnosis:
    head = (PASTED / "pytorch-143249.log").read_text()
    return _diag(head + between + "\n" + _STACK)[0]


def test_a_prefixed_error_takes_the_bare_stack_under_it() -> None:
    diag = _prefixed_then("")
    (x,) = diag.data_dependent_errors  # one error: the stack is not a second (bare) one's
    assert (x.compile_id, x.expr) == ("0/0", "-u0 > 4")
    assert x.user is not None and (x.user.file.rsplit("/", 1)[-1], x.user.line, x.user.code) == \
        ("utils.py", 355, "tmp_A == tmp_B")


@pytest.mark.parametrize("between", [
    # another record with a prefix (pytorch_scatter-457's graph break, the same compile id)
    "W0811 21:16:49.580000 11928 torch/_dynamo/variables/tensor.py:776] [0/0] Graph break from "
    "`Tensor.item()`, consider setting:",
    # a traceback's head: its exception, and a stack under it, are another error's
    "Traceback (most recent call last):",
    # another error without a prefix (ezpz-236's), the kind dynamo puts a stack under
    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped",
    # past the window
    "step\n" * 70,
], ids=["record", "traceback", "unsupported", "far"])
def test_a_stack_after_something_else_that_could_own_it_is_not_joined(between: str) -> None:
    (x,) = _prefixed_then(between).data_dependent_errors
    assert x.compile_id == "0/0" and x.user is None


def test_a_blank_or_a_line_at_the_margin_ends_dynamos_stack() -> None:
    """(round 24: no test ended the stack before its paste did) A frame after the stack's end
    is another traceback's, not the line that needed the value."""
    text = (PASTED / "executorch-8988.log").read_text().rstrip("\n")
    for end in ("\n\n", "\nSet TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information\n"):
        diag, _, _ = _diag(text + end + '  File "/home/me/other.py", line 7, in g\n    h()\n')
        (x,) = diag.data_dependent_errors
        assert x.user is not None and (x.user.line, x.user.code) == (355, "tmp_A == tmp_B")


def test_a_cut_message_asks_for_the_line_only_where_no_stack_names_it() -> None:
    # (round 24: the no-stack branch of this sentence had no test) without dynamo's stack the
    # paste is asked for the expression and the line; with it, for the expression only
    text = (PASTED / "executorch-8988.log").read_text()
    fixes = []
    for paste in (text.partition("from user code:")[0], text):
        diag, _, _ = _diag(paste)
        (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT]
        fixes.append(a.fix)
    head = "paste the error's message whole (its 'Could not guard on data-dependent expression …' "
    assert fixes[0].startswith(head + "and 'Caused by' name the expression and the line), or "
                               'rerun with TORCH_LOGS="+dynamic"; the fix is at that line: tell ')
    assert fixes[1].startswith(head + 'names the expression), or rerun with TORCH_LOGS="+dynamic"; '
                               "your code at ")

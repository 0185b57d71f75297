"""Paste hunt 32a (round 32, pytorch/pytorch threads): torch.fx.experimental.recording's error
record of a ShapeEnv call that raised. ``record_shapeenv_event``'s wrapper logs "failed while
running OP(*ARGS, **KWARGS)" (E-level; the traceback under it where its logger is at INFO) and
re-raises the error to the caller: 2.1-2.10 defer_runtime_assert, 2.8 on renamed
guard_or_defer_runtime_assert (pytorch#156397); up to 2.7 or so for every failure, those torch
catches too (pytorch#134421, #151023), from 2.11.0 (2.14.1, 2.15.0 alike) only while ShapeEnv
records events. evaluate_expr's is a data-dependent error's line (textdde) and stays one; any
other was "not understood". And AOTAutograd's suppressed-backward warning written by 2.3-2.8's
jit_compile_runtime_wrappers.py, pasted from inside its record."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.render import nothing_found
from dyncli.logparse import textnotes

# 2.4's layout (pytorch#133965) and 2.15's (no thread id; same wording)
_E24 = "E0819 22:05:31.170000 138952784099136 torch/fx/experimental/recording.py:281] [0/0] "
_E215 = "E1203 10:05:31.170000 4242 torch/fx/experimental/recording.py:353] [0/0] "
_W24 = ("W0819 22:05:31.171000 138952784099136 "
        "torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py:551] [0/0] ")
_HEAD = "failed to eagerly compile backwards for dynamic, suppressing in case backwards not needed"


def _notes(text_or_path: str | Path, tmp_path: Path) -> list[Advice]:
    diag = diagnose_logs([text_or_path]) if isinstance(text_or_path, Path) \
        else diagnose_text(tmp_path, text_or_path)
    assert diag.stats.unread == 0  # (a path the paste wrapped is the user's text, not torch's)
    return list(diag.notes)


def test_the_failed_runtime_assert_is_named_in_the_suppressed_backward_compile() -> None:
    # pytorch#133965 (2.4): recording.py's record was "not understood"; the backward compile
    # torch suppressed right after it, in the same compile, is what raised it
    diag = diagnose_logs([PASTED / "pytorch-133965.log"])
    assert diag.stats.unread == 0
    (note,) = diag.notes
    assert note.kind is AdviceKind.BACKWARD_DEFERRED
    assert "in torch's ShapeEnv, running defer_runtime_assert(Eq(s1 + u0, s1 + u3))" \
        in note.message
    assert "just before the warning; the exception is past the paste)" in note.message
    (row,) = [x for x in diag.torch_notes if x.kind == "backward-deferred"]
    assert row.after == ("defer_runtime_assert(Eq(s1 + u0, s1 + u3))",)
    assert not [x for x in diag.torch_notes if x.kind == "shape-env-failed"]


def test_the_frozen_runtime_assert_is_torchs_error() -> None:
    # pyg-team/pytorch_geometric#9603 (the same run's traceback, 2.4's
    # jit_compile_runtime_wrappers.py, its head cut): "not understood" before
    (note,) = _notes(PASTED / "pytorch-geometric-9603.log", Path())
    assert note.kind is AdviceKind.BACKWARD_DEFERRED
    assert "raised: AssertionError: Eq(s1 + u0, s1 + u3)" in note.message
    assert "pytorch#130432" in note.message and "not your code's" in note.message
    assert note.fix.startswith("nothing, for a run without backward. For one that trains: "
                               "a torch release of 2.7 or later")


def test_each_releases_call_alone_is_a_note(tmp_path: Path) -> None:
    # 2.1-2.7's defer_runtime_assert and 2.8-2.15's guard_or_defer_runtime_assert, with no
    # record after them: a note of its own, never "Nothing to fix"
    for prefix, op in ((_E24, "defer_runtime_assert"), (_E215, "guard_or_defer_runtime_assert")):
        text = f"{prefix}failed while running {op}(*(Eq(u0, 5), '/w/t.py:12'), " \
            "**{'fx_node': None})\n"
        diag = diagnose_text(tmp_path, text)
        (note,) = diag.notes
        assert note.kind is AdviceKind.SHAPE_ENV_FAILED
        assert f"running {op}(Eq(u0, 5))." in note.message
        assert "pytorch#134421" in note.message
        assert nothing_found(diag).endswith("(the log does not say whether the compile went on).")


def test_the_records_traceback_names_the_exception(tmp_path: Path) -> None:
    # TORCH_LOGS="dynamic": recording.py's logger at INFO, exc_info=True: the traceback under it
    text = "".join(f"{_E215}{line}\n" for line in (
        "failed while running guard_or_defer_runtime_assert(*(u0 >= 0, 'x'), **{'fx_node': None})",
        "Traceback (most recent call last):",
        '  File "/t/torch/fx/experimental/recording.py", line 338, in wrapper',
        "    return retlog(event.run(self))",
        "torch.fx.experimental.symbolic_shapes._ShapeEnvGuardError: Guard attempted while "
        "ShapeEnv guards are frozen: u0 >= 0 == True"))
    (note,) = _notes(text, tmp_path)
    assert ("running guard_or_defer_runtime_assert(u0 >= 0), raising torch.fx.experimental."
            "symbolic_shapes._ShapeEnvGuardError: Guard attempted") in note.message


def test_a_failure_of_another_compile_is_not_joined(tmp_path: Path) -> None:
    # the suppressed backward compile of [1/0] did not raise [0/0]'s error
    text = (f"{_E24}failed while running defer_runtime_assert(*(Eq(u0, 5), 'x'), "
            "**{'fx_node': None})\n"
            f"{_W24.replace('[0/0]', '[1/0]')}{_HEAD}\n")
    kinds = [n.kind for n in _notes(text, tmp_path)]
    assert sorted(kinds) == [AdviceKind.BACKWARD_DEFERRED, AdviceKind.SHAPE_ENV_FAILED]


def test_evaluate_exprs_record_alone_is_this_note(tmp_path: Path) -> None:
    # pytorch#131911's form: recording.py logs any error of the call (2.1-2.7), so alone it is
    # the failed call, not a data-dependent error (round 35; read as one before)
    text = f"{_E24}failed while running evaluate_expr(*(u0 >= 9, None), **{{'fx_node': None}})\n"
    diag = diagnose_text(tmp_path, text)
    assert not diag.data_dependent_errors
    (note,) = [n for n in diag.notes if n.kind is AdviceKind.SHAPE_ENV_FAILED]
    assert "evaluate_expr(u0 >= 9), an error the log does not name" in note.message


def test_the_first_argument_and_a_cut_call() -> None:
    first = textnotes._first_arg
    assert first("Eq(s1 + u0, s1 + u3), '/a/b.py:1'), **{}") == "Eq(s1 + u0, s1 + u3)"
    assert first("'a, (b', 3)") == "'a, (b'"
    assert first("zuf0, None), **{}") == "zuf0"
    assert first("Eq(s1 + u0, s1") == ""  # (the paste cut inside it: the method alone)
    (note,) = textnotes.shape_env_failed(["failed while running _rename_unbacked_to(*(Eq(u0,"],
                                         {"line": 1})
    assert (note.what, note.text) == ("_rename_unbacked_to", "_rename_unbacked_to")


def test_a_hostile_call_is_read_in_linear_time() -> None:
    # a call of many open brackets and quotes, and a traceback line of many dotted parts
    assert_linear(lambda lines: textnotes.shape_env_failed(lines, {"line": 1}),
                  lambda n: ["failed while running f(*(" + "(['\"," * (n // 4),
                             "a." * (n // 2) + "Error: x"], 300_000)


def test_code_execd_from_a_string_is_nobodys_line() -> None:
    # pytorch#167063 (torch.onnx.export, dynamo=True): export blames `File "<string>", line 1,
    # in <lambda>`; "your code at <string>:1 needs the value itself" before
    diag = diagnose_logs([PASTED / "pytorch-167063.log"])
    (dde,) = [a for a in diag.suggestions if a.kind is AdviceKind.DATA_DEPENDENT]
    assert "<string>" not in dde.fix and not dde.sites
    assert dde.fix.startswith("tell torch what the value allows where your code reads it")

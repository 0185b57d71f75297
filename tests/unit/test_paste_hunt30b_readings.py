"""Paste hunt 30b (round 30, second hunt: torch 2.9-2.15 forms and round 30's leftovers): logs
as users paste them into GitHub issues, read against what each thread says, each on the lines
the thread's stored excerpt has (the corpus's copies: tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.render import nothing_found
from dyncli.errors import InputError
from dyncli.logparse.textlog import parse_lines


def test_symbolic_shapes_sympy_recursion_warning_is_a_note() -> None:
    # pytorch#128134: "RecursionError in sympy.xreplace(Eq(Mod(256*s1, s8), 0), …)" between two
    # dtype recompiles (torch 2.4 nightly): "1 torch record(s) not understood"; torch caught it
    # and compiled on, so a note, never a cause
    diag = diagnose_logs([PASTED / "pytorch-128134.log"])
    assert diag.stats.unread == 0
    (note,) = diag.notes
    assert note.kind is AdviceKind.SYMPY_RECURSION
    assert "sympy.xreplace(Eq(Mod(256*s1, s8), 0)" in note.evidence[0]
    assert note.fix.startswith("nothing to fix in your code")
    assert all(a.kind is not AdviceKind.SYMPY_RECURSION for c in diag.causes for a in c.findings)
    assert len(diag.recompiles) == 2


@pytest.mark.parametrize("line", [
    # 2.0's sympy.solve on torch's old logging layout
    "[2023-01-20 10:00:00,123] torch.fx.experimental.symbolic_shapes: [WARNING] "
    "RecursionError in sympy.solve(s0 - 4, s0)",
    # 2.4's sympy.expand behind torchrun's rank tag (pytorch#127817's title, at [1/18])
    "[rank0]:W0603 10:00:00.000000 1 torch/fx/experimental/symbolic_shapes.py:1325] [0/0] "
    "RecursionError in sympy.expand(Eq(Mod(256*s0 + 512, 256*s1), 0))",
    # 2.15's _fast_expand
    "W1202 18:00:00.000000 1 torch/fx/experimental/symbolic_shapes.py:2530] [0/0] "
    "RecursionError in _fast_expand(s0*(s1 + 1))",
    # the message alone, as a quote keeps it
    "RecursionError in sympy.xreplace(Eq(Mod(256*s1, s8), 0), {s8: s0 + 255})",
], ids=["2.0-solve", "2.4-expand-rank", "2.15-fast-expand", "bare"])
def test_every_releases_sympy_recursion_warning_is_the_note(tmp_path: Path, line: str) -> None:
    diag = diagnose_text(tmp_path, line + "\n")
    assert [a.kind for a in diag.notes] == [AdviceKind.SYMPY_RECURSION]
    assert not diag.causes and diag.stats.unread == 0


def test_a_raised_recursion_error_is_not_the_warning(tmp_path: Path) -> None:
    # torch 2.0 briefly raised it (pytorch#90655: RuntimeError("RecursionError in
    # sympy.solve(…)")): a traceback's exception line is no caught warning
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/v/site-packages/torch/fx/experimental/symbolic_shapes.py", line 881, in '
        "_maybe_guard_eq\n    raise RuntimeError(msg)\n"
        "RuntimeError: RecursionError in sympy.solve(s0 - 4, s0)\n"))
    assert not any(a.kind is AdviceKind.SYMPY_RECURSION for a in diag.notes)


_AOT = "W0925 05:12:38.955000 4103597 torch/_functorch/_aot_autograd/graph_compile.py:1798] [0/0] "
_DEFERRED = "failed to eagerly compile backwards for dynamic, suppressing in case backwards not needed"


def test_a_suppressed_backward_compile_cut_in_its_traceback_is_a_note() -> None:
    # pytorch#163874 (torch 2.9 dev, indented three spaces): "1 torch record(s) were not
    # understood"; the thread's program then failed in backward(), so never "Nothing to fix"
    diag = diagnose_logs([PASTED / "pytorch-163874.log"])
    (note,) = diag.notes
    assert note.kind is AdviceKind.BACKWARD_DEFERRED and not diag.causes
    assert "its error is past the paste" in note.message
    assert "backward() first runs" in note.message and "(cut in this paste)" in note.fix


def test_the_wrapped_24_paste_reads_the_same_note() -> None:
    # pytorch#133965 (torch 2.4's jit_compile_runtime_wrappers.py, a wrapped line above it)
    diag = diagnose_logs([PASTED / "pytorch-133965.log"])
    assert [a.kind for a in diag.notes] == [AdviceKind.BACKWARD_DEFERRED]


def test_the_suppressed_backward_errors_line_is_the_notes(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "".join(_AOT + x + "\n" for x in (
        _DEFERRED, "Traceback (most recent call last):",
        '  File "/p/torch/_functorch/_aot_autograd/graph_compile.py", line 1778, in '
        "aot_stage2_autograd", "    compiled_bw_func = aot_config.bw_compiler(",
        "RuntimeError: PassManager::run failed", "")))
    (note,) = diag.notes
    assert "raised: RuntimeError: PassManager::run failed" in note.message
    assert note.evidence[0].endswith("RuntimeError: PassManager::run failed")
    assert not diag.compile_crashes and not diag.causes and diag.stats.unread == 0
    assert "Nothing to fix" not in nothing_found(diag)


def test_a_cut_suppressed_backward_record_before_a_whole_one_names_the_whole_ones_error(
        tmp_path: Path) -> None:
    # two records, the first cut before its exception: the note's error is the second's
    # exception, not the first's head (the parts' lines are in log order)
    tb = ["Traceback (most recent call last):",
          '  File "/p/torch/_functorch/_aot_autograd/graph_compile.py", line 1778, in '
          "aot_stage2_autograd", "    compiled_bw_func = aot_config.bw_compiler("]
    second = _AOT.replace("[0/0]", "[1/0]")
    diag = diagnose_text(tmp_path, "".join(
        [_AOT + x + "\n" for x in (_DEFERRED, *tb)]
        + [second + x + "\n" for x in (_DEFERRED, *tb, "RuntimeError: PassManager::run failed")]))
    (note,) = diag.notes
    assert "raised: RuntimeError: PassManager::run failed" in note.message, note.message


def test_a_long_suppressed_backward_record_costs_linear_time() -> None:
    def make(n: int) -> str:
        return _AOT + "a." * (n // 2)

    def read(line: str) -> object:
        return list(parse_lines([(_AOT + _DEFERRED).encode(), line.encode(), line.encode()]))

    assert_linear(read, make, 300_000)


def test_vscode_linked_arrow_keeps_the_notebook_traceback_whole() -> None:
    # pytorch#169488: VS Code's notebook output links each line number ("-> [1798](https://
    # file+.vscode-resource…)"); that arrow ended the traceback, so IPython's head naming
    # ConstraintViolationError was lost and the crash said "the exception is past the paste"
    diag = diagnose_logs([PASTED / "pytorch-169488.log"])
    (crash,) = diag.compile_crashes
    assert crash.error == "ConstraintViolationError" and crash.cut
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert a.fix.startswith("a ConstraintViolationError is 'Constraints violated'")
    assert "not in the shapes of your code" not in a.fix
    assert "suppress_errors does not apply" in a.fix


def test_a_linked_arrow_gives_the_frame_its_line(tmp_path: Path) -> None:
    link = "https://file+.vscode-resource.vscode-cdn.net/w/m.py"
    diag = diagnose_text(tmp_path, (
        "RuntimeError                  Traceback (most recent call last)\n"
        "/v/site-packages/torch/_dynamo/convert_frame.py in _compile(code)\n"
        f"-> [715]({link}:715)     guarded = compile_inner(code)\n"))
    (crash,) = diag.compile_crashes
    assert crash.at is not None and crash.at.line == 715


_AUTO = "dimension inputs['x'].shape[{}] 0/1 specialized; Dim.AUTO was specified along with a " \
        "sample input with hint = {}."


def test_exports_dim_auto_warning_is_a_note() -> None:
    # pytorch#151827's example (2.8, non_strict_utils.py:499): "not understood"
    diag = diagnose_logs([PASTED / "pytorch-151827.log"])
    (note,) = diag.notes
    assert note.kind is AdviceKind.AUTO_DIM_SPECIALIZED and not diag.causes
    assert "inputs['x'].shape[1] (example size 1)" in note.message
    assert "size 2 or more" in note.fix


def test_each_dim_auto_size_is_named(tmp_path: Path) -> None:
    head = "W0421 10:00:00.00000{} 1 torch/_export/non_strict_utils.py:839] "
    diag = diagnose_text(tmp_path, "".join(
        head.format(i) + _AUTO.format(i, h) + "\n" for i, h in ((0, 1), (2, 0))))
    (note,) = diag.notes
    assert "inputs['x'].shape[0] (example size 1), inputs['x'].shape[2] (example size 0)" \
        in note.message


@pytest.mark.parametrize("line", [
    "The dimension of x is 0/1 specialized; Dim.AUTO was specified as a guess",
    "dimension mismatch in the matmul",
], ids=["prose", "other"])
def test_prose_about_dimensions_is_no_note(tmp_path: Path, line: str) -> None:
    try:
        diag = diagnose_text(tmp_path, line + "\n")
    except InputError:
        return
    assert not diag.notes


def test_a_hostile_dim_auto_line_costs_linear_time() -> None:
    def make(n: int) -> str:
        return "dimension " + "a" * n + " 0/1 specialized; Dim.AUTO was specified x"

    assert_linear(lambda line: list(parse_lines([line.encode()] * 3)), make, 300_000)

"""Paste hunt 31b (round 31, threads outside pytorch/pytorch): pytest's short test summary of
torch's errors, the recompile torch._dynamo.config.error_on_recompile refused, the
construction of a C/C++ class's object that torch names by its base's __new__, and a Triton
that does not know the CUDA of its ptxas.

A summary line is pytest's own output, its message cut at the terminal's width: a backtick it
cut open ("Run `pip install ti...") is no inline code span of prose. And error_on_recompile's
RecompileError is raised where the recompiles log would write its message (2.15's guards.py,
get_and_maybe_log_recompilation_reasons; 2.1-2.2's convert_frame.py with the log's tuple):
torch raised before recompiling, so no compile came of it, and the run stopped there."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs

_SUMMARY = ("FAILED tests/pipelines/cogview4/test_cogview4.py::CogView4PipelineFastTests::"
            "test_compile - ImportError: This modeling file requires the following packages "
            "that were not found in your environment: tiktoken. Run `pip install ti...\n")
_GLOG = ("V0812 03:18:23.088000 19120 torch/_dynamo/guards.py:3508] [6/2] [__recompiles] "
         "Recompiling function forward in /m/model.py:221\n"
         "V0812 03:18:23.088000 19120 torch/_dynamo/guards.py:3508] [6/2] [__recompiles]     "
         "triggered by the following guard failure(s):\n"
         "V0812 03:18:23.088000 19120 torch/_dynamo/guards.py:3508] [6/2] [__recompiles]     "
         "- 6/1: tensor 'x' size mismatch at index 1. expected 7104, actual 6895\n")
# torch 2.15's RecompileError as Python prints a traceback's end (guards.py:6376 raises the
# message the recompiles log writes)
_RAISED = ('  File "/venv/lib/python3.11/site-packages/torch/_dynamo/guards.py", line 6376, in '
           "get_and_maybe_log_recompilation_reasons\n"
           "    raise exc.RecompileError(message)\n"
           "torch._dynamo.exc.RecompileError: Recompiling function f in /tmp/t.py:4\n"
           "    triggered by the following guard failure(s):\n"
           "    - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3\n")


def test_the_summarys_recompile_errors_are_refused_recompiles() -> None:
    # diffusers#11085: "not a torch log" before round 31, then two recompiles that compiled
    diag = diagnose_logs([PASTED / "diffusers-11085.log"])
    assert [(r.function, r.compiled, r.refused_by) for r in diag.recompiles] == \
        [("forward", False, "error_on_recompile")] * 2
    assert diag.compiles == 1 and diag.recompiles_proven == 0
    (finding,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert finding.message.startswith("2 recompile(s) of forward: torch._dynamo.config."
                                      "error_on_recompile raised RecompileError")
    assert "paste the whole error" in finding.fix and "the paste cut" not in finding.message


def test_a_cut_backtick_in_pytests_summary_opens_no_span(tmp_path: Path) -> None:
    # the glog record under the summary line is read as it is without that line
    diag = diagnose_text(tmp_path, _SUMMARY + _GLOG)
    (r,) = diag.recompiles
    assert (r.function, r.compiled, r.kinds) == ("forward", True, ("size",))


def test_a_backtick_left_open_in_prose_still_quotes_the_next_line(tmp_path: Path) -> None:
    # a paragraph's open inline code span goes on into its next line: torch's words quoted
    # there are prose (what round 16 made so), a pytest summary line aside
    prose = "I see the error at `torch/_dynamo/guards.py when I run\n"
    quoted = _GLOG[:_GLOG.index("\n") + 1].replace("forward", "quoted")
    diag = diagnose_text(tmp_path, prose + quoted + "`\n\n" + _GLOG)
    assert [r.function for r in diag.recompiles] == ["forward"]


def test_torchs_raised_recompile_error_is_refused_with_its_reason(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _RAISED)
    (r,) = diag.recompiles
    assert (r.function, r.file, r.first_line) == ("f", "/tmp/t.py", 4)
    assert (r.compiled, r.refused_by, r.stance, r.kinds) == \
        (False, "error_on_recompile", False, ("size",))
    assert diag.compiles == 1 and not diag.compile_crashes
    # a size it refused to recompile for: marked dynamic up front, the run goes on
    (fix,) = [s for s in diag.suggestions if s.kind is AdviceKind.MARK_DYNAMIC]
    assert 'TORCH_COMPILE_DYNAMIC_SOURCES=".*:0"' in fix.fix


def test_torch_21s_tuple_recompile_error_is_refused_too(tmp_path: Path) -> None:
    # 2.1-2.2's convert_frame.py raised RecompileError with the recompiles log's tuple
    text = ("torch._dynamo.exc.RecompileError: ('Recompiling function step in /home/u/kf.py:12', "
            "\"triggered by the following guard failure: L['t'] == 0\")\n")
    (r,) = diagnose_text(tmp_path, text).recompiles
    assert (r.function, r.first_line, r.reasons) == ("step", 12, ("L['t'] == 0",))
    assert (r.compiled, r.refused_by, r.kinds) == (False, "error_on_recompile", ("scalar",))


def test_the_recompiles_log_is_no_refusal(tmp_path: Path) -> None:
    # the same message as a record of TORCH_LOGS="recompiles": torch went on and recompiled
    (r,) = diagnose_text(tmp_path, _GLOG).recompiles
    assert (r.compiled, r.refused_by) == (True, "")


def test_the_stances_refusal_keeps_its_name(tmp_path: Path) -> None:
    text = ("RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'. "
            "filename: '/tmp/t.py', function name: 'f', line number: 4\n")
    (r,) = diagnose_text(tmp_path, text).recompiles
    assert (r.compiled, r.refused_by, r.stance) == (False, "fail_on_recompile", True)


def _break_fix(diag: Diagnosis) -> str:
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    return a.fix


def test_a_pybind11_objects_construction_is_made_outside() -> None:
    # cosmos-rl#16 (2.4-2.5's warning, rank 0): "allow_in_graph(None.pybind11_object.__new__)"
    fix = _break_fix(diagnose_logs([PASTED / "cosmos-rl-16.log"]))
    assert fix.startswith("pybind11_object.__new__ is the construction of an object of a class "
                          "implemented in C or C++")
    assert "every class pybind11 binds" in fix and "create the object outside" in fix
    assert "allow_in_graph(" not in fix and "None." not in fix


def test_a_ctypes_objects_construction_too() -> None:
    # pytorch#128095's 2.7 nightly record (bitsandbytes' ctypes value), read right otherwise
    fix = _break_fix(diagnose_logs([PASTED / "pytorch-128095.log"]))
    assert fix.startswith("_SimpleCData.__new__ is the construction") and "ctypes" in fix


def test_torch_215s_unknown_module_is_the_same_construction(tmp_path: Path) -> None:
    # 2.15's functions.py writes a missing module as "<unknown module>"
    text = ("/venv/lib/python3.12/site-packages/torch/_dynamo/variables/functions.py:2935: "
            "UserWarning: Dynamo does not know how to trace the builtin "
            "`<unknown module>.pybind11_object.__new__.` This function is either a Python "
            "builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension (perhaps "
            "created with pybind).\n")
    fix = _break_fix(diagnose_text(tmp_path, text))
    assert fix.startswith("pybind11_object.__new__ is the construction")


def test_other_builtins_keep_their_fixes(tmp_path: Path) -> None:
    # a C function of an extension (torch's hints) and a method of a Python builtin type
    line = ("/venv/torch/_dynamo/variables/functions.py:725: UserWarning: Graph break due to "
            "unsupported builtin {}. This function is either a Python builtin\n")
    fix = _break_fix(diagnose_text(tmp_path, line.format("sageattention._fused.PyCapsule.quant")))
    assert fix.startswith("wrap sageattention._fused.PyCapsule.quant in a custom operator")
    (tmp_path / "b").mkdir()
    newer = ("/venv/torch/_dynamo/variables/functions.py:2935: UserWarning: Dynamo does not "
             "know how to trace the builtin `<unknown module>.list.copy.` This function is\n")
    fix = _break_fix(diagnose_text(tmp_path / "b", newer))
    assert fix.startswith("list.copy is Python's own")


def _crash_fix(diag: Diagnosis) -> str:
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    return a.fix


def test_a_triton_that_does_not_know_this_cuda_is_the_machines() -> None:
    # triton-windows#48 (CUDA 12.8 under a Triton 3.2): "report it to PyTorch" before
    fix = _crash_fix(diagnose_logs([PASTED / "triton-windows-48.log"]))
    assert fix.startswith("the Triton installed does not know the CUDA version of the ptxas")
    assert "TRITON_PTXAS_PATH" in fix and fix.endswith("not a bug to report")
    assert "suppress_errors" not in fix and "report it to PyTorch" not in fix


def test_older_tritons_words_without_the_version_too(tmp_path: Path) -> None:
    # Triton 2.x-3.0 raised it without ", but got CUDA version: …"
    text = ("Traceback (most recent call last):\n"
            '  File "/venv/torch/_dynamo/output_graph.py", line 1465, in _call_user_compiler\n'
            "    raise BackendCompilerFailed(self.compiler_fn, e) from e\n"
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
            "RuntimeError: Triton only support CUDA 10.0 or higher\n")
    assert _crash_fix(diagnose_text(tmp_path, text)).startswith("the Triton installed does not")

"""Paste hunt 34a (round 34, pytorch/pytorch threads): symbolic_shapes' ``failed during
evaluate_expr`` warning read per release.

torch logs ``failed during evaluate_expr(EXPR, hint=…`` where evaluate_expr raised. Up to 2.7
it does so for any error (2.6.0 symbolic_shapes.py:6306, 2.7.0 :6678, ``except Exception:``),
a GuardOnDataDependentSymNode too; from 2.8 a data-dependent error passes unlogged (2.8.0
:7354, 2.9.0 :7364, 2.13.0 :8234, 2.15.0 :8814: ``if isinstance(e,
GuardOnDataDependentSymNode): pass``), so the line is then another error's. dyncli read it as a
data-dependent error in every release. Now: a data-dependent error's line where the log shows a
release up to 2.7 (a stated version, the graph-break records' form, or recording.py's record
beside it in 2.1-2.7's form), a note of a ShapeEnv call that raised otherwise (from 2.8: not
data-dependent; where the release is not shown: the line alone proves no such error)."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textdde import fact

# torch 2.15.0's own warning (tests/data-style recording: TORCH_LOGS=dynamic, dynamic=True,
# ShapeEnv._evaluate_expr made to raise an AssertionError for `x.shape[0] > 3`, as the hint
# check of pytorch#130456 does; the program stopped on that AssertionError)
_W215 = ("W1203 16:52:15.320000 3949 torch/fx/experimental/symbolic_shapes.py:8818] [0/0] "
         "failed during evaluate_expr(s77 > 3, hint=True, size_oblivious=False, forcing_spec=False")
# pytorch#147096's warning (a 2.7 nightly, torch.export of PaliGemma2), without its record
_W147096 = ("W0213 09:47:01.171000 226363 site-packages/torch/fx/experimental/symbolic_shapes.py"
            ":6578] failed during evaluate_expr(Ne(u0, 589824), hint=None, size_oblivious=False, "
            "forcing_spec=False")
# recording.py's record of the same call in 2.8's form (_inner_evaluate_expr, 2.8.0 :7323:
# every argument positional)
_R28 = ("E0213 09:47:01.172000 226363 torch/fx/experimental/recording.py:316] failed while "
        "running evaluate_expr(*(Ne(u0, 589824), None, None, False, False, False, None), **{})")


def _read(diag: Diagnosis) -> tuple[list[tuple[str, str]], list[str]]:
    """(the data-dependent errors' (expr, what), the notes' kinds)."""
    return ([(x.expr, x.what) for x in diag.data_dependent_errors],
            [str(a.kind) for a in diag.notes])


def test_the_warning_is_its_own_fact() -> None:
    assert fact(_W215.split("] [0/0] ")[1]) == ("during", "s77 > 3")
    assert fact(_R28.split("] ")[1]) == ("evaluate", "Ne(u0, 589824)", None, "new")


def test_from_2_8_the_warning_is_another_error_than_a_data_dependent_one(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, "PyTorch version: 2.15.0+cpu\n" + _W215 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    (note,) = diag.notes
    assert "evaluate_expr(s77 > 3), an error that is not data-dependent" in note.message
    assert "torch 2.8 on" in note.message
    assert not diag.causes


def test_up_to_2_7_the_warning_alone_is_any_errors(tmp_path: Path) -> None:
    """Up to 2.7 torch writes it for any error, a data-dependent one too: alone it proves the
    failed call (round 35; round 34 read a data-dependent error here)."""
    diag = diagnose_text(tmp_path, "PyTorch version: 2.7.1+cu126\n" + _W147096 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "evaluate_expr(Ne(u0, 589824)), an error the log does not name" in diag.notes[0].message
    assert "over values read from a tensor's data (u0)" in diag.notes[0].message


def test_where_the_release_is_not_shown_the_line_proves_no_data_dependent_error(
        tmp_path: Path) -> None:
    for line in (_W215, _W147096):
        diag = diagnose_text(tmp_path, line + "\n")
        assert diag.releases is None
        assert _read(diag) == ([], ["shape-env-failed"]), line
        assert "up to torch 2.7 for any error, from 2.8 only for one that is not" in \
            diag.notes[0].message


def test_a_nightly_between_2_7_and_2_8_is_not_read_as_either(tmp_path: Path) -> None:
    """A 2.8 nightly may write either form (stated_range: 2.7-2.8)."""
    diag = diagnose_text(tmp_path, "PyTorch version: 2.8.0.dev20250420+cu126\n" + _W215 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "an error the log does not name" in diag.notes[0].message


def test_recording_py_beside_it_tells_the_release(tmp_path: Path) -> None:
    """2.1-2.7's record (``*(EXPR, None), **{'fx_node': …}``) leaves the warning any error's
    (round 35: no data-dependent error without its own words); 2.8's (seven arguments,
    ``**{}``) makes it another error's."""
    diag = diagnose_logs([PASTED / "pytorch-147096.log"])  # (the 2.7 nightly's, as pasted)
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "an error the log does not name" in diag.notes[0].message
    diag = diagnose_text(tmp_path, _W147096 + "\n" + _R28 + "\n")
    assert _read(diag) == ([], ["shape-env-failed"])
    assert "not data-dependent" in diag.notes[0].message


def test_2_8s_record_alone_reads_its_expression() -> None:
    """recording.py's record of 2.8 on was read with its last six arguments in the
    expression; the record alone stays what 2.1-2.7's is (an evaluate failure)."""
    got = fact(_R28.split("] ", 1)[1])
    assert got is not None and got[1] == "Ne(u0, 589824)"


def test_a_data_dependent_message_of_the_expression_is_one_in_any_release(tmp_path: Path) -> None:
    """The error's own message proves it whatever the warning's release."""
    text = (_W147096 + "\nGuardOnDataDependentSymNode: Could not guard on data-dependent "
            "expression Ne(u0, 589824) (unhinted: Ne(u0, 589824)).  (Size-like symbols: u0)\n")
    diag = diagnose_text(tmp_path, text)
    assert _read(diag)[0] == [("Ne(u0, 589824)", "guard")]


# ---- tracebacks through AOTAutograd's run-time wrapper (pytorch#160281, #152887) ----
# torch 2.15.0's own traceback (recorded here on CPU: a custom op whose kernel raises for one
# input, its fake kernel not, called from a function compiled with inductor; the second call
# raised as its graph ran). The frames from the compiled call down, as Python printed them
_RAN_215 = '''Traceback (most recent call last):
  File "/tmp/h34a/run/ranraise.py", line 19, in <module>
    f(torch.full((4,), 50.0))
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 1265, in compile_wrapper
    result = fn(*args, **kwargs)
             ^^^^^^^^^^^^^^^^^^^
  File "/tmp/h34a/run/ranraise.py", line 14, in f
    @torch.compile(backend="inductor")
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 1552, in _fn
    return fn(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_functorch/aot_autograd.py", line 1289, in forward
    return compiled_fn(full_args)
           ^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 1204, in runtime_wrapper
    result = _codegen_runtime_wrapper(
             ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_functorch/_aot_autograd/codegen.py:codegen(runtime_wrapper_orchestration)", line 8, in _runtime_wrapper
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 2610, in __call__
    return self.compiled_fn(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_inductor/output_code.py", line 830, in __call__
    return self.current_callable(inputs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/torchinductor_root/56/c56v7pf6kmeb554ub3gkksrvqvyqmibsab4poaelpotxeuld4htt.py", line 111, in call
    buf1 = torch.ops.h34a.check.default(buf0)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_ops.py", line 916, in __call__
    return self._op(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_library/custom_ops.py", line 442, in backend_impl
    result = self._backend_fns[device_type](*args, **kwargs)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_compile.py", line 54, in inner
    return disable_fn(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 1552, in _fn
    return fn(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/torch/_library/custom_ops.py", line 503, in wrapped_fn
    return fn(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^
  File "/tmp/h34a/run/ranraise.py", line 7, in check
    raise ValueError("sum too large for this kernel")
ValueError: sum too large for this kernel
'''


def _crash(diag: Diagnosis) -> tuple[bool, str, str]:
    """(its graph_run, the crash finding's message, its fix)."""
    (x,) = diag.compile_crashes
    (a,) = [s for s in diag.suggestions if str(s.kind) == "compile-crash"]
    return x.graph_run, a.message, a.fix


def test_a_paste_cut_in_the_run_time_wrapper_is_the_graph_running_not_a_compile() -> None:
    """pytorch#160281 (cut under call_func_at_runtime_with_args) and #152887 (cut at
    runtime_wrapper's line): "torch's compiler raised", with suppress_errors as the fix, before
    round 34; the CUDA-graph trees raised below, past the excerpts."""
    for name, at in (("pytorch-160281.log", "call_func_at_runtime_with_args"),
                     ("pytorch-152887.log", "runtime_wrapper")):
        diag = diagnose_logs([PASTED / name])
        ran, message, fix = _crash(diag)
        assert ran and diag.compile_crashes[0].cut and not diag.compile_crashes[0].cudagraph_run
        assert message.startswith("the program stopped: an exception (the paste ends inside")
        assert "came as the compiled graph ran (through AOTAutograd's run-time wrapper, not " \
            "while compiling)" in message and f"in {at}" in message
        assert "torch's compiler raised" not in message
        assert "suppress_errors (which covers compiling only) does not apply" in fix
        assert "past the end of the paste" in fix and "triton.cudagraphs" in fix
        (cause,) = diag.causes
        assert cause.stops and cause.line().startswith("[error as the graph ran]")
        assert diag.to_dict()["compile_crashes"][0]["graph_run"] is True


def test_an_error_of_code_the_graph_called_names_that_code(tmp_path: Path) -> None:
    """2.15's whole traceback: the custom op's kernel raised as the graph ran. It read "torch's
    compiler raised ValueError … at eval_frame.py:1552 in _fn" (the disable wrapper around the
    kernel)."""
    ran, message, fix = _crash(diagnose_text(tmp_path, _RAN_215))
    assert ran
    assert message.startswith("the program stopped: ValueError: sum too large for this kernel "
                              "came as the compiled graph ran")
    assert "at /tmp/h34a/run/ranraise.py:7 in check" in message
    assert "eval_frame.py" not in message
    assert "raised in /tmp/h34a/run/ranraise.py:7 in check" in fix and "fix it there" in fix


def test_ipythons_form_of_the_wrapper_is_read_alike(tmp_path: Path) -> None:
    """IPython's frames (``F in fn(args)``) of the same wrapper, its exception's message cut."""
    text = (
        "RuntimeError                              Traceback (most recent call last)\n"
        "/usr/local/lib/python3.11/dist-packages/torch/_functorch/aot_autograd.py in "
        "forward(*runtime_args)\n"
        "-> 1184         return compiled_fn(full_args)\n\n"
        "/usr/local/lib/python3.11/dist-packages/torch/_functorch/_aot_autograd/"
        "runtime_wrappers.py in runtime_wrapper(args)\n"
        "--> 310                 all_outs = call_func_at_runtime_with_args(\n\n"
        "/usr/local/lib/python3.11/dist-packages/torch/_functorch/_aot_autograd/utils.py in "
        "call_func_at_runtime_with_args(f, args, steal_args, disable_amp)\n"
        "--> 126             out = normalize_as_list(f(args))\n")
    ran, message, fix = _crash(diagnose_text(tmp_path, text))
    assert ran and "torch's compiler raised" not in message
    assert "past the end of the paste" in fix


_HEAD = ('Traceback (most recent call last):\n  File "t.py", line 9, in <module>\n    f(x)\n'
         '  File "/s/torch/_functorch/aot_autograd.py", line 1221, in forward\n'
         '    return compiled_fn(full_args)\n'
         '  File "/s/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 338, in '
         'runtime_wrapper\n    all_outs = call_func_at_runtime_with_args(\n'
         '  File "/s/torch/_functorch/_aot_autograd/utils.py", line 129, in '
         'call_func_at_runtime_with_args\n    out = normalize_as_list(f(args))\n'
         '  File "t.py", line 4, in hook\n    return g(y)\n')


def test_a_compile_below_the_wrapper_is_still_a_compile(tmp_path: Path) -> None:
    """Code the graph called that compiled another function (dynamo's convert_frame below the
    wrapper): that compile raised."""
    text = (_HEAD + '  File "/s/torch/_dynamo/convert_frame.py", line 1400, in __call__\n'
            '    result = self._inner_convert(\n'
            '  File "/s/torch/_dynamo/symbolic_convert.py", line 1200, in run\n'
            '    while self.step():\n'
            "AssertionError: expected a tensor\n")
    ran, message, _ = _crash(diagnose_text(tmp_path, text))
    assert not ran and "torch's compiler raised AssertionError" in message


def test_a_backward_compiled_at_its_first_call_is_a_compile(tmp_path: Path) -> None:
    """AOTAutograd compiles a backward at its first call, in runtime_wrappers.py's backward:
    no runtime_wrapper frame, so no graph run."""
    text = ('Traceback (most recent call last):\n  File "t.py", line 9, in <module>\n'
            '    loss.backward()\n'
            '  File "/s/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 2100, in '
            'backward\n    return impl_fn()\n'
            '  File "/s/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 2090, in '
            '_backward_impl\n    CompiledFunction.compiled_bw = aot_config.bw_compiler(\n'
            '  File "/s/torch/_inductor/compile_fx.py", line 1500, in bw_compiler\n'
            '    return inner_compile(\n'
            "RuntimeError: out of registers\n")
    ran, message, _ = _crash(diagnose_text(tmp_path, text))
    assert not ran and "torch's compiler raised RuntimeError" in message


def test_a_hostile_2_8_record_costs_linear_time() -> None:
    """2.8's record pattern (an expression, then six bounded arguments) on a line of commas
    and short words, with and without the closing ``**{}``: linear in the line, past the 8192
    characters textdde reads of one (round 34's review)."""
    from linear_time import assert_linear

    from dyncli.logparse import textdde

    def make(n: int) -> str:
        return "failed while running evaluate_expr(*(" + ", ab" * (n // 4)

    assert_linear(textdde._RECORDED_NEW_RE.search, make, 200_000)

    def make_closed(n: int) -> str:
        return make(n) + "), **{}"

    assert_linear(textdde._RECORDED_NEW_RE.search, make_closed, 200_000)


def test_a_partial_paste_that_shows_no_compile_says_so() -> None:
    """chattts#106's paste holds a compile's crash and nothing of its compiles: the summary said
    "at least 0 compile(s)", true and empty (round 33's left item); a partial paste that shows
    some still says "at least N"."""
    from dyncli.diagnose.render import summary_line

    line = summary_line(diagnose_logs([PASTED / "chattts-106.log"]))
    assert "no compile shown (a partial log)" in line and "at least 0" not in line
    assert "at least 2 compile(s)" in summary_line(diagnose_logs([PASTED / "pytorch-133898.log"]))

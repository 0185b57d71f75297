"""Paste hunt 22 (round 26): serving and training stacks' pastes — a Triton that is not the
one torch pins (``cannot import name 'triton_key'``), docker's own timestamps, torch's
FailOnRecompileLimitHit pasted alone, and torch 2.9's data-dependent message whose hint and
``Caused by:`` share a line; hunt 21's two leftovers (SD.Next's line naming the class,
the Windows refusal indented); each on the lines the thread's excerpt has (the corpus's copies:
tests/data/pasted/, manifest.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textdde import events
from dyncli.logparse.textlog import parse_lines

_TRITON_KEY = ("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
               "(/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py)")


def test_a_triton_torch_does_not_pin_is_the_installs_not_torchs_bug(tmp_path: Path) -> None:
    # coreweave/ml-containers#64: pip's triton 2.3.0 under a torch nightly; the thread's fix was
    # pinning the Triton torch pinned. It was "an error in torch's compiler … report it"
    diag = diagnose_text(tmp_path, (
        "[rank7]:     from triton.compiler.compiler import triton_key\n"
        "[rank7]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        f"[rank7]: {_TRITON_KEY}\n"))
    (a,) = diag.suggestions
    assert "the Triton version your torch pins" in a.fix and "not a bug to report" in a.fix
    assert "report it to PyTorch" not in a.fix


def test_the_triton_key_error_alone_is_a_compile_crash(tmp_path: Path) -> None:
    # ComfyUI#10485: the exception's message as ComfyUI shows it, without its class (it was
    # "not a torch log"); only inductor imports triton_key
    diag = diagnose_text(tmp_path, (
        "backend='inductor' raised:\n"
        f"{_TRITON_KEY}\n\n"
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if "
        "you're reporting a bug to PyTorch). For even more developer context, set "
        'TORCH_LOGS="+dynamo"\n'))
    (c,) = diag.compile_crashes
    assert "triton_key" in c.error
    assert "the Triton version your torch pins" in diag.suggestions[0].fix


def test_dockers_own_timestamps_on_every_line_are_taken_off(tmp_path: Path) -> None:
    # sonar#472: `docker logs --timestamps` before torchrun's rank tag on each line of the
    # traceback, cut inside dynamo (it was "not a torch log")
    stamp = "2024-05-29T11:23:16.027957173Z [rank0]: "
    site = "/usr/local/lib/python3.10/dist-packages/torch/_dynamo"
    diag = diagnose_text(tmp_path, "".join(stamp + line + "\n" for line in (
        f'  File "{site}/output_graph.py", line 1168, in compile_and_call_fx_graph',
        "    compiled_fn = self.call_user_compiler(gm)",
        f'  File "{site}/utils.py", line 262, in time_wrapper',
        "    r = func(*args, **kwargs)")))
    (c,) = diag.compile_crashes
    assert c.cut and c.rank == 0 and c.deepest is not None
    assert c.deepest.function == "time_wrapper"


def test_a_docker_stamp_on_a_blank_line_and_a_glog_line_behind_one(tmp_path: Path) -> None:
    # the stamp alone (a blank line of the program's output) stays blank; torch's own record
    # behind it is read as without it
    diag = diagnose_text(tmp_path, (
        "2024-05-29T11:23:16.027957173Z \n"
        "2024-05-29T11:23:16.027957173Z W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py"
        ":1551] [2/8] torch._dynamo hit config.recompile_limit (8)\n"))
    (x,) = diag.recompile_limits
    assert (x.compile_id, x.limit) == ("2/8", "8")


@pytest.mark.parametrize(("line", "name"), [
    # torch 2.9 on (torchtitan#2958, unsloth#6825: the line alone in the report's summary)
    ("torch._dynamo.exc.FailOnRecompileLimitHit: Hard failure due to fullgraph=True", ""),
    # 2.6-2.8 (tritonbench#192: one_graph=True)
    ("torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with one_graph=True. "
     "Excessive recompilations can degrade performance due to the compilation overhead of each "
     "recompilation.", "recompile_limit"),
])
def test_failonrecompilelimithit_alone_is_a_limit_hit_that_stopped_the_program(
        tmp_path: Path, line: str, name: str) -> None:
    # it was "Nothing to fix: no recompiles, specializations or graph breaks found" right after
    # "The recompile limit raised an error"
    diag = diagnose_text(tmp_path, line + "\n")
    (x,) = diag.recompile_limits
    assert (x.limit_name, x.limit, x.function) == (name, "", "")
    (a,) = diag.suggestions
    assert "so the program stopped there" in a.message
    assert "()" not in a.message and "config. " not in a.evidence[0]


def test_the_exception_after_a_limit_warning_adds_no_second_hit() -> None:
    # microsoft/dion#23 (the corpus's dion-23): the warning, then FailOnRecompileLimitHit
    diag = diagnose_logs([Path(__file__).parent.parent / "data" / "pasted" / "dion-23.log"])
    (x,) = diag.recompile_limits
    assert x.function == "dion2_post_orthogonalize"


def test_torch_2_9s_hint_and_caused_by_on_one_line_are_two_facts() -> None:
    # piper1-gpl#148 (ONNX export under torch 2.9): no line break between them in 2.9.0's
    # message; the place was lost
    line = (b"consider using data-dependent friendly APIs such as guard_or_false, guard_or_true "
            b"and statically_known_trueCaused by: (_meta_registrations.py:2449 in pick_memory_format)")
    hint, culprit = events(line, {}, 3)
    assert hint.what == "hint" and "statically_known_true" in hint.value
    assert (culprit.what, culprit.value) == (
        "culprit", "_meta_registrations.py:2449 in pick_memory_format")


def test_a_tools_line_naming_the_compilers_class_before_its_traceback(tmp_path: Path) -> None:
    # sdnext#4085 (hunt 21's leftover): SD.Next logs the class alone, then its rich box, cut
    # above torch's frames; it was "a Python traceback with nothing of torch's compiler"
    diag = diagnose_text(tmp_path, (
        "13:49:33-187606 ERROR    Processing: BackendCompilerFailed\n"
        "╭──────────── Traceback (most recent call last) ────────────╮\n"
        "│D:\\sdnext-master\\modules\\processing_diffusers.py:147 in process_base          │\n"
        "│                                                            │\n"
        "│  146 │   │   else:                                         │\n"
        "│❱ 147 │   │   │   output = shared.sd_model(**base_args)     │\n"))
    (c,) = diag.compile_crashes
    assert (c.error, c.cut) == ("BackendCompilerFailed", True)
    # its message, which names the backend's own error, is what to paste: not "torch's bug"
    (a,) = diag.suggestions
    assert "wraps the error the backend raised" in a.fix and "report it to PyTorch" not in a.fix


def test_a_class_named_alone_away_from_a_traceback_names_nothing(tmp_path: Path) -> None:
    # the program's own line ending in a class name, then output, then a traceback of its own
    log = tmp_path / "p.log"
    log.write_text("status: BackendCompilerFailed\nstep 3 done\n"
                   "Traceback (most recent call last):\n"
                   '  File "/home/u/train.py", line 3, in <module>\n'
                   "    main()\n")
    with pytest.raises(InputError, match="nothing of torch's compiler"):
        diagnose_logs([log])


def test_the_platform_refusal_indented_as_the_paste_indents_it(tmp_path: Path) -> None:
    # openvino_notebooks' SD thread (hunt 21's leftover): the refusal's frame quoted inside a
    # sentence, its raise and exception lines indented; it was "not a torch log"
    diag = diagnose_text(tmp_path, (
        'Or more precisely :  File "C:\\Users\\me\\site-packages\\torch\\_dynamo\\eval_frame.py", '
        "line 375, in check_if_dynamo_supported\n"
        '        raise RuntimeError("Windows not yet supported for torch.compile")\n'
        "    RuntimeError: Windows not yet supported for torch.compile\n"))
    (a,) = diag.suggestions
    assert "does not compile on Windows" in a.fix


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: "2024-05-29T11:23:16." + "1" * n + "Z x", 200_000),
    (lambda n: "2024-05-29T11:23:16.0Z " * n, 50_000),
    (lambda n: "data-dependent friendly APIs such as guard_or_false, guard_or_true and "
     "statically_known_true" + "Caused by: " * n, 20_000),
    (lambda n: "x: " * n + "BackendCompilerFailed", 100_000),
    (lambda n: "Processing: " + "A" * n, 300_000),
], ids=["fraction", "stamps", "caused-by", "colons", "processing"])
def test_a_hostile_line_of_these_forms_costs_linear_time(make: Callable[[int], str],
                                                          n: int) -> None:
    assert_linear(lambda line: list(parse_lines([line.encode(), b"\n"] * 2)), make, n)

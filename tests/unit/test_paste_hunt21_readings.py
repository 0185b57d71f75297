"""Paste hunt 21 (round 25): torch.compile refusing the platform (Windows, the Python version)
and 2.1-2.6's UserError for a branch on a tensor's value, each checked on the corpus's copy
(tests/data/pasted/, manifest.toml) or on the lines the thread's excerpt has. The drawn forms
(IPython, rich, colours): test_drawn_tracebacks.py."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.read import diagnose_logs


def test_windows_refused_by_torch_2_0_and_2_1_is_the_platforms_not_torchs_bug(
        tmp_path: Path) -> None:
    # AMD-SHARK-Studio#1315 (torch 2.0 on Windows, a plain traceback; the corpus's copy too)
    assert "does not compile on Windows" in \
        diagnose_logs([PASTED / "amd-shark-1315.log"]).suggestions[0].fix
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "E:\\shark\\shark_model.py", line 172, in <module>\n'
        "    dynamo_callable = dynamo.optimize(backend)(compile_via_shark)\n"
        '  File "E:\\shark\\.venv\\Lib\\site-packages\\torch\\_dynamo\\eval_frame.py", line 479, in optimize\n'
        "    check_if_dynamo_supported()\n"
        '  File "E:\\shark\\.venv\\Lib\\site-packages\\torch\\_dynamo\\eval_frame.py", line 433, in '
        "check_if_dynamo_supported\n"
        '    raise RuntimeError("Windows not yet supported for torch.compile")\n'
        "RuntimeError: Windows not yet supported for torch.compile\n"))
    (a,) = diag.suggestions
    assert "does not compile on Windows" in a.fix and "torch >= 2.5" in a.fix
    assert "report it" not in a.fix


def test_the_python_version_refused_is_named_so(tmp_path: Path) -> None:
    # the exception alone, torch's words (2.1's check_if_dynamo_supported)
    diag = diagnose_text(tmp_path, "RuntimeError: Python 3.12+ not yet supported for torch.compile\n")
    (a,) = diag.suggestions
    assert "does not run on this Python" in a.fix


def test_a_free_threaded_python_refused_is_named_so_and_not_a_failed_compile(
        tmp_path: Path) -> None:
    # torch 2.11's and 2.15's check_if_dynamo_supported, word for word: its traceback (it was
    # "[1 failed compile(s)] … report it to PyTorch") and its line alone ("not a torch log")
    said = ("RuntimeError: torch.compile is not supported on Python < 3.13.3 built with GIL "
            "disabled. Please use Python 3.13.3+.\n")
    site = "/home/u/.venv/lib/python3.13t/site-packages/torch"
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 12, in <module>\n'
        "    model = torch.compile(model)\n"
        f'  File "{site}/__init__.py", line 2810, in compile\n'
        "    return torch._dynamo.optimize(\n"
        f'  File "{site}/_dynamo/eval_frame.py", line 1500, in optimize\n'
        "    check_if_dynamo_supported()\n"
        f'  File "{site}/_dynamo/eval_frame.py", line 1444, in check_if_dynamo_supported\n'
        "    raise RuntimeError(\n")
    for text in (traceback + said, said):
        diag = diagnose_text(tmp_path, text)
        (a,) = diag.suggestions
        assert "free-threaded Python" in a.fix and "3.13.3" in a.fix, a.fix
        assert "report it" not in a.fix
        assert diag.causes[0].line().startswith("[refused before compiling]")


def test_torch_2_7_refuses_every_free_threaded_python(tmp_path: Path) -> None:
    # torch 2.7.0's check_if_dynamo_supported (eval_frame.py:899, read in round 26): any build
    # with the GIL disabled, without 2.11's "< 3.13.3" (so a newer free-threaded Python does not
    # help there). Before round 26 the line alone was "not a torch log" and its traceback
    # "[1 failed compile(s)] … report it to PyTorch".
    said = "RuntimeError: torch.compile is not supported on Python built with GIL disabled\n"
    site = "/home/u/.venv/lib/python3.13t/site-packages/torch"
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 12, in <module>\n'
        "    model = torch.compile(model)\n"
        f'  File "{site}/_dynamo/eval_frame.py", line 900, in check_if_dynamo_supported\n'
        "    raise RuntimeError(\n")
    for text in (traceback + said, said):
        diag = diagnose_text(tmp_path, text)
        (a,) = diag.suggestions
        assert "every free-threaded Python" in a.fix and "torch 2.11 or newer" in a.fix, a.fix
        assert "report it" not in a.fix
        assert diag.causes[0].line().startswith("[refused before compiling]")


def test_a_rich_box_cut_inside_the_platform_check_is_the_platform_refused(tmp_path: Path) -> None:
    # kohya_ss#1141: the box's excerpt ends at eval_frame.py's check_if_dynamo_supported
    (a,) = diagnose_logs([PASTED / "kohya_ss-1141.log"]).suggestions
    assert "refused this machine before compiling anything" in a.fix


def test_the_dynamic_control_flow_user_error_is_a_branch_on_a_tensors_value(
        tmp_path: Path) -> None:
    # unsloth#2307: the message alone, then dynamo's stack (its "..." kept): raised (round 26).
    # Dynamo writes the sentence only behind words of its own ("Graph break: ", a traceback's
    # class, "Reason: Unsupported: "), 2.1-2.6; alone, it is the exception the program caught
    (b,) = diagnose_logs([PASTED / "unsloth-2307.log"]).graph_breaks
    assert (b.file, b.user_line, b.raised) == ("unsloth_compiled_module_phi3.py", 395, True)
    (a,) = diagnose_logs([PASTED / "unsloth-2307.log"]).suggestions
    assert "torch.cond" in a.fix and "untraceable" not in a.fix
    # as a traceback ends in it (its class named): raised, the program stopped there
    diag = diagnose_text(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 9, in <module>\n'
        "    model(x)\n"
        '  File "/usr/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py", line 328, in _fn\n'
        "    return fn(*args, **kwargs)\n"
        "torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment. Please "
        "use functorch.experimental.control_flow.cond to explicitly capture the control flow.\n"
        "\n"
        "from user code:\n"
        '   File "/home/u/model.py", line 40, in forward\n'
        "    if x.sum() > 0:\n"))
    (b,) = diag.graph_breaks
    assert (b.file, b.user_line, b.raised) == ("/home/u/model.py", 40, True)
    assert diag.compile_crashes == ()


def test_a_traceback_behind_a_markdown_quote_is_read(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, (
        "> Traceback (most recent call last):\n"
        '>   File "/home/u/a.py", line 3, in <module>\n'
        ">     f(x)\n"
        '>   File "/usr/lib/python3.10/site-packages/torch/_dynamo/convert_frame.py", line 5, in _compile\n'
        ">     x()\n"
        "> torch._dynamo.exc.InternalTorchDynamoError: boom\n"))
    (c,) = diag.compile_crashes
    assert c.error == "torch._dynamo.exc.InternalTorchDynamoError: boom"
    assert c.user is not None and (c.user.file, c.user.line) == ("/home/u/a.py", 3)
    # pytorch#90540: old IPython's frames, quoted and re-indented by the reporter; the frame's
    # line from its indented arrow (" --> 915"), the function said once
    (c,) = diagnose_logs([PASTED / "pytorch-90540.log"]).compile_crashes
    assert c.at is not None and (c.at.file.rsplit("/", 1)[-1], c.at.line) == ("debug_utils.py", 915)
    (a,) = diagnose_logs([PASTED / "pytorch-90540.log"]).suggestions
    assert a.message.count("in debug_wrapper") == 1


def test_a_platform_refusal_is_not_counted_as_a_failed_compile(tmp_path: Path) -> None:
    # torch.compile refusing the machine raises before anything compiles (eval_frame.py's
    # check_if_dynamo_supported): the corpus's refusals (the exception alone, a plain
    # traceback, a rich box cut inside the check) said "[1 failed compile(s)]"
    for name in ("audioldm2-39", "amd-shark-1315", "kohya_ss-1141"):
        diag = diagnose_logs([PASTED / f"{name}.log"])
        (c,) = diag.causes
        assert c.line().startswith("[refused before compiling] the program stopped"), name
        assert "failed compile" not in c.line(), name
    diag = diagnose_text(tmp_path, "RuntimeError: Python 3.12+ not yet supported for torch.compile\n")
    assert diag.causes[0].line().startswith("[refused before compiling]")


def test_an_ipython_traceback_cut_in_the_platform_check_is_the_platform_refused(
        tmp_path: Path) -> None:
    # stablecascade-33 (torch 2.1.0: torch/__init__.py:1723 is compile's call of optimize,
    # eval_frame.py:583 optimize's call of check_if_dynamo_supported; the thread's title is
    # the Windows refusal): IPython names the class in its head, RuntimeError, and the paste
    # ends in optimize's listing, before the message. The RuntimeError optimize raises (2.0 to
    # 2.15) is its platform check's: not torch's bug to report
    diag = diagnose_logs([PASTED / "stablecascade-33.log"])
    (a,) = diag.suggestions
    assert "refused this machine before compiling anything" in a.fix and "report it" not in a.fix
    assert diag.causes[0].line().startswith("[refused before compiling]")
    # IPython's frame of the check itself, the message cut
    diag = diagnose_text(tmp_path, (
        "RuntimeError                              Traceback (most recent call last)\n"
        "Cell In[4], line 2\n"
        "----> 2 m = torch.compile(m)\n"
        "\n"
        "File ~\\env\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py:583, in optimize(backend)\n"
        "--> 583     check_if_dynamo_supported()\n"
        "\n"
        "File ~\\env\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py:535, in "
        "check_if_dynamo_supported()\n"
        "    533 def check_if_dynamo_supported():\n"
        "    534     if sys.platform == \"win32\":\n"))
    (a,) = diag.suggestions
    assert "refused this machine before compiling anything" in a.fix
    # another class under optimize is no refusal (IPython names InvalidBackend so)
    diag = diagnose_text(tmp_path, (PASTED / "stablecascade-33.log").read_text().replace(
        "RuntimeError      ", "InvalidBackend    ", 1))
    assert all("refused this machine" not in a.fix for a in diag.suggestions)

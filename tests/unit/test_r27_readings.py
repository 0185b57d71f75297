"""Round 27's readings and output of diagnose: a program's warning that quotes torch.compile's
refusal (the program went on uncompiled: sdnext#2699), torch 2.3's ``No module named
'triton.common'`` under Triton 3 (fish-speech#541, ComfyUI-MochiWrapper#94), a CompileProfiler
report cut before its end, the torch-to-Triton pins the Triton fix names, and one order
of the dynamic sources (tests/data/pasted/ holds the pastes; ``-v`` and ``--fail-on``: tests/cli)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear
from pasted_reading import diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.releases import TRITON_PINS, pins_text
from dyncli.logparse.textcrash import refusal_warned

_DATA = Path(__file__).parents[1] / "data"
_PASTED = _DATA / "pasted"
_DOCS = Path(__file__).parents[2] / "docs"


def test_a_refusal_the_program_warned_of_went_on_uncompiled() -> None:
    # sdnext#2699: SD.Next caught torch 2.0's refusal and logged it as a WARNING (it was "not a
    # torch log"); the program ran on, uncompiled: not "the program stopped"
    diag = diagnose_logs([_PASTED / "sdnext-2699.log"])
    (x,) = diag.compile_crashes
    assert x.went_on and x.line == 2 and "Windows not yet supported" in x.error
    (a,) = diag.suggestions
    assert "went on uncompiled" in a.message and "stopped" not in a.message
    assert "torch >= 2.5" in a.fix
    assert diag.causes[0].line().startswith("[refused before compiling]")


@pytest.mark.parametrize(("line", "said"), [
    ("22:25:45-339909 WARNING  Model compile not supported: Windows not yet supported for "
     "torch.compile", "Model compile not supported: Windows not yet supported for torch.compile"),
    ("[2024-01-08 23:14:52,512] sd: [WARNING] Model compile not supported: Python 3.12+ not "
     "yet supported for torch.compile", "Model compile not supported: Python 3.12+ not yet "
     "supported for torch.compile"),
    ("WARNING:root:Windows not yet supported for torch.compile", "root:Windows not yet "
     "supported for torch.compile"),
    # (no level word before torch's words, an exception's line, or another error's words)
    ("Windows not yet supported for torch.compile", ""),
    ("RuntimeError: Windows not yet supported for torch.compile", ""),
    ("22:25:45-339909 WARNING  Model compile not supported: Invalid backend: 'stable-fast'", ""),
    ("UserWarning: Windows not yet supported for torch.compile", ""),
    # (quoted in prose: a sentence, a bullet's code span)
    ("The log says WARNING  Windows not yet supported for torch.compile", ""),
    ("- `22:25:45-339909 WARNING  Model compile not supported: Windows not yet supported for "
     "torch.compile` is what it wrote", ""),
    ("2024-01-08 23:14:52.512 | WARNING  | sd_models:compile:12 - Windows not yet supported "
     "for torch.compile", "sd_models:compile:12 - Windows not yet supported for torch.compile"),
])
def test_which_warnings_quote_a_refusal(line: str, said: str) -> None:
    assert refusal_warned(line) == said


@pytest.mark.parametrize(("make", "n"), [
    (lambda n: "WARNING " * n + "Windows not yet supported for torch.compile", 200_000),
    (lambda n: "W" * n + " Windows not yet supported for torch.compile", 1_000_000),
], ids=["levels", "one-word"])
def test_refusal_warned_is_linear(make: Callable[[int], str], n: int) -> None:
    # (a level's word at each of 200k places, or none in a word of 1M letters: no stamp of one
    # word either way; benchmarks/regex_linearity.py times both)
    assert refusal_warned(make(n)) == ""
    assert_linear(refusal_warned, make, n)


def test_triton_common_under_torchs_compiler_is_the_triton_mismatch() -> None:
    # fish-speech#541: torch 2.3's utils/_triton.py imports triton.common, which Triton 3.0
    # removed; it was "an error in torch's compiler … report it"
    diag = diagnose_logs([_PASTED / "fish-speech-541.log"])
    (a,) = diag.suggestions
    assert "No module named 'triton.common'" in a.message
    assert "the Triton version your torch pins" in a.fix and "report it" not in a.fix
    assert "torch 2.3 imports triton.common" in a.fix


def test_torchs_backend_raised_words_without_the_class_are_the_crash() -> None:
    # ComfyUI-MochiWrapper#94: "backend='inductor' raised:" then the backend's exception, as
    # ComfyUI shows BackendCompilerFailed (it was "not a torch log")
    diag = diagnose_logs([_PASTED / "comfyui-mochiwrapper-94.log"])
    (x,) = diag.compile_crashes
    assert x.error == ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: "
                       "ModuleNotFoundError: No module named 'triton.common'")
    assert "the Triton version your torch pins" in diag.suggestions[0].fix


def test_triton_common_outside_torchs_compiler_is_no_crash(tmp_path: Path) -> None:
    # other packages import triton.common too: their own traceback is not torch's compile
    diag = diagnose_text(tmp_path, (
        "W0101 00:00:00.000000 1 torch/_dynamo/guards.py:3000] [0/1] [__recompiles] "
        "Recompiling function f in /app/f.py:3\n"
        "Traceback (most recent call last):\n"
        '  File "/app/run.py", line 3, in <module>\n'
        "    import xformers.triton\n"
        '  File "/venv/lib/python3.10/site-packages/xformers/triton/__init__.py", line 9, in '
        "<module>\n"
        "    from triton.common import backend\n"
        "ModuleNotFoundError: No module named 'triton.common'\n"))
    assert not diag.compile_crashes


def test_the_triton_fix_names_each_release_pin_once() -> None:
    # each torch minor 2.0-2.15 once, in order, from the wheels' Requires-Dist
    minors = [int(t.split(".")[1]) for t, _ in TRITON_PINS]
    assert minors == list(range(16))
    said = pins_text()
    assert said.startswith("torch 2.0 → triton 2.0.0, 2.1 → 2.1.0")
    assert "2.3 → 2.3.x, 2.4 → 3.0.0" in said and "2.10-2.11 → 3.6.0" in said
    # docs/diagnose.md's table is the same one
    rows = re.findall(r"^\| (2\.\d+) \| (\d\.\d\.[\dx]) \|", (_DOCS / "diagnose.md").read_text(),
                      re.M)
    assert tuple(rows) == TRITON_PINS


def test_one_order_of_dynamic_sources_in_the_cause_and_the_suggestion() -> None:
    # hf_tiny_bert: the cause sorted its entries, the suggestion kept the log's order
    diag = diagnose_logs([_DATA / "logs" / "hf_tiny_bert.log"])
    entries = ("L['kwargs']['input_ids']:0,L['kwargs']['input_ids']:1,"
               "L['kwargs']['attention_mask']:0,L['kwargs']['attention_mask']:1")
    (cause,) = diag.causes
    assert cause.fix == f'TORCH_COMPILE_DYNAMIC_SOURCES="{entries}"'
    assert f"inputs {entries} change" in cause.title
    assert diag.suggestions[0].fix.startswith(cause.fix)
    assert ",".join(diag.dynamic_sources) == entries

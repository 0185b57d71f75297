"""torch._dynamo.reset()'s own INFO lines (torch 2.15 under TORCH_LOGS="dynamo,recompiles").

A test suite that compiles, resets and compiles again (diffusers' compile tests) logs
``torch._dynamo.reset`` and ``torch._dynamo.reset_code_caches`` between the runs; compile ids
start over at 0/0 after them. diagnose counted the runs apart already (the ids starting over
are the next generation, ``r1:``) but called the two lines "not understood"."""

from __future__ import annotations

from pathlib import Path

from pasted_reading import diagnose_text

_P = "I1203 08:36:58.143000 4762 torch/_dynamo/"
# the lines of one capture (torch 2.15.0, f compiled for sizes 3 and 4, reset, and again)
_RUN = """\
I1203 08:36:57.736000 4762 torch/_dynamo/symbolic_convert.py:5795] [0/0] Step 1: torchdynamo start tracing f /tmp/reset_prog.py:2
V1203 08:36:57.893000 4762 torch/_dynamo/guards.py:6374] [0/1] [__recompiles] Recompiling function f in /tmp/reset_prog.py:2
V1203 08:36:57.893000 4762 torch/_dynamo/guards.py:6374] [0/1] [__recompiles]     triggered by the following guard failure(s):
V1203 08:36:57.893000 4762 torch/_dynamo/guards.py:6374] [0/1] [__recompiles]     - 0/0: tensor 'x' size mismatch at index 1. expected 3, actual 4
I1203 08:36:57.894000 4762 torch/_dynamo/symbolic_convert.py:5795] [0/1] Step 1: torchdynamo start tracing f /tmp/reset_prog.py:2
"""
_RESET = f"{_P}__init__.py:152] torch._dynamo.reset\n{_P}__init__.py:208] torch._dynamo.reset_code_caches\n"


def test_the_reset_lines_are_read_and_each_run_counted(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _RUN + _RESET + _RUN)
    assert diag.stats.unrecognized == 0
    assert diag.compiles == 4
    assert [r.compile_id for r in diag.recompiles] == ["0/1", "r1:0/1"]


def test_a_reset_line_alone_is_no_compile(tmp_path: Path) -> None:
    diag = diagnose_text(tmp_path, _RESET)
    assert diag.stats.unrecognized == 0 and diag.compiles == 0 and not diag.recompiles

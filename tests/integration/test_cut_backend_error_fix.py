"""A backend's error known only by torch's class, its message cut (paste hunt 22: SD.Next logs
``ERROR    Processing: BackendCompilerFailed`` above a traceback without its exception line,
sdnext#4085). diagnose asks for the message, which names the backend's own error, or a rerun
with TORCHDYNAMO_VERBOSE=1, rather than "report it to PyTorch". Applied on real torch.compile:
a backend that raises Triton's ``triton_key`` ImportError (torch's words when the Triton is
not the one torch pins, coreweave/ml-containers#64); the cut paste gets the ask, and the rerun
the advice names gives the message, which diagnose reads as the machine's error with its own
fix (installing the pinned Triton itself is not applied: this machine's torch reads both of
Triton's places for triton_key, 2.9 on).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch

def backend(gm, example_inputs):
    raise ImportError("cannot import name 'triton_key' from 'triton.compiler.compiler' "
                      "(/opt/conda/lib/python3.10/site-packages/triton/compiler/compiler.py)")

def f(x):
    return x + 1

torch.compile(f, backend=backend)(torch.randn(4))
"""


def test_a_cut_backend_error_asks_for_its_message_and_the_rerun_names_it(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "verbose").mkdir()
    plain = run_variants({"crash": PROGRAM}, tmp_path / "plain")["crash"]
    assert plain.raised
    text = plain.log.read_text()
    # the paste as SD.Next's console has it: its line naming the class, then the last
    # traceback's frames, without the exception's lines
    last = text[text.rindex("Traceback (most recent call last):"):]
    frames = last[:last.index("torch._dynamo.exc.BackendCompilerFailed")]
    assert "triton_key" not in frames
    cut = tmp_path / "cut.log"
    cut.write_text("13:49:33-187606 ERROR    Processing: BackendCompilerFailed\n" + frames)
    (asked,) = diagnose_logs([cut]).suggestions
    assert "wraps the error the backend raised" in asked.fix
    assert "TORCHDYNAMO_VERBOSE=1" in asked.fix and "report it to PyTorch" not in asked.fix
    # the advice applied: the rerun it names prints the message, and its reading is the
    # backend's error's own (a Triton torch does not pin), not torch's bug
    verbose = run_variants({"crash": PROGRAM}, tmp_path / "verbose",
                           env={"TORCHDYNAMO_VERBOSE": "1"})["crash"]
    assert verbose.raised
    (named,) = diagnose_logs([verbose.log]).suggestions
    assert "the Triton version your torch pins" in named.fix

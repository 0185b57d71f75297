"""A traceback the paste cut in dynamo's ``unimplemented`` (huggingface/speech-to-speech#27: a
Whisper forward compiled with fullgraph=True, its excerpt ending at ``exc.py … in
unimplemented``). diagnose reads it as a graph break raised to the program, its message past the
paste's end, and prints: rerun with TORCHDYNAMO_VERBOSE=1, which prints the exception and the
line; to run meanwhile, compile without fullgraph=True. Applied on real torch.compile: a
program whose compiled function branches on a tensor's value under fullgraph=True; its
TORCHDYNAMO_VERBOSE=1 traceback cut after the ``unimplemented`` frame is the paste; the whole
of that rerun names the break at the program's line; without fullgraph=True it runs, the
break splitting the graph.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, run_variants

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = COUNTING_BACKEND + """
import torch

def step(x):
    y = x * 2
    if y.sum() > 0:  # a Python branch on a tensor's value: a graph break
        return y + 1
    return y - 1

out = torch.compile(step, backend=backend, fullgraph=FULLGRAPH)(torch.ones(4))
print(out.tolist(), len(graphs))
"""


def test_a_traceback_cut_in_unimplemented_gets_the_rerun_and_runs_without_fullgraph(
        tmp_path: Path) -> None:
    ran = run_variants({"fullgraph": PROGRAM.replace("FULLGRAPH", "True"),
                        "split": PROGRAM.replace("FULLGRAPH", "False")},
                       tmp_path, env={"TORCHDYNAMO_VERBOSE": "1"})
    assert ran["fullgraph"].raised and not ran["split"].raised
    text = ran["fullgraph"].log.read_text()
    # the paste as speech-to-speech#27's excerpt has it: the traceback to the frame of
    # exc.py's unimplemented, the raise and the exception past its end
    last = text[text.rindex("Traceback (most recent call last):"):]
    frame = last.index("in unimplemented\n")
    assert "_dynamo" in last[last.rindex("File ", 0, frame):frame]
    cut = tmp_path / "cut.log"
    cut.write_text(last[:frame + len("in unimplemented\n")])
    diag = diagnose_logs([cut])
    assert not diag.compile_crashes
    (b,) = diag.graph_breaks
    assert b.raised and not b.file
    (a,) = diag.suggestions
    assert "TORCHDYNAMO_VERBOSE=1" in a.fix and "compile without fullgraph=True" in a.fix
    # the advice applied: the rerun it names (TORCHDYNAMO_VERBOSE=1, this run) gives the
    # exception and the line; the program's own line is the break's place
    (whole,) = diagnose_logs([ran["fullgraph"].log]).graph_breaks
    branch = next(i for i, t in enumerate(PROGRAM.splitlines(), 1) if "if y.sum() > 0" in t)
    assert whole.raised and (whole.file, whole.user_line) == ("<string>", branch)
    # and without fullgraph=True the program goes on: the break splits the graph in two
    result, graphs = ran["split"].stdout.split("\n")[-2].rsplit(" ", 1)
    assert result == "[3.0, 3.0, 3.0, 3.0]" and int(graphs) == 2

"""A rank's output as torchrun tags it (``--tee 3``: tail_log.py's ``[default0]:`` before every
line of the program's stdout and stderr; ``[rank0]:`` under ``--role rank``), with a fullgraph
graph break whose message has no
Hint lines (two blank lines in a row, 2.8-2.15).

Before round 19 diagnose read none of the break's 20-odd lines on torch 2.15 (paste hunt 9's
repro; ezpz#236 was refused): the tag hid torch's ``Unsupported:`` and, without it, the two
blanks ended the message before ``from user code:``. Run here under torch's own launcher: the
break is read at the user's line, rank 0's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch

def attention(q):
    n = torch.cuda.device_count()
    return q * (n + 1)

@torch.compile(fullgraph=True, backend="eager")
def forward(q):
    return attention(q)

forward(torch.ones(3))
"""


def test_a_ranks_tagged_graph_break_is_read_at_the_users_line(tmp_path: Path) -> None:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    log = tmp_path / "run.log"
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {"OMP_NUM_THREADS": "1"}
    with open(log, "wb") as out:
        run = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
             "1", "--tee", "3", str(script)],
            stdout=out, stderr=subprocess.STDOUT, env=env, timeout=300, cwd=tmp_path)
    assert run.returncode != 0  # fullgraph=True raised
    text = log.read_text()
    assert "[default0]:" in text and "Unsupported" in text, text[-2000:]
    diag = diagnose_inputs([log])
    (b,) = diag.graph_breaks
    assert (Path(b.file).name, b.user_line, b.rank) == ("prog.py", 5, 0)
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "prog.py:5" in a.message
    assert diag.compile_crashes == ()  # torch's Unsupported is the break's, not a crash

"""A library's logger call inside compiled code: transformers' ``logger.warning_once`` (trl#3839:
gemma-3's forward, GRPO with torch_compile). Before round 20 diagnose said "move the untraceable
call out of the compiled function" for a line in transformers; torch's own answer is the set of
logging methods dynamo skips. The setting diagnose prints is applied here as printed: the break
is gone and the program's result is unchanged.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # imports transformers twice: 10-20 s
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

PROGRAM = """
import logging
import torch
import torch._dynamo
from transformers.utils import logging as hf_logging

logger = hf_logging.get_logger("gemma_like")
{fix}

def forward(x):
    logger.warning_once("sliding window attention is not supported here")
    return x * 2 + 1

print(torch.compile(forward, backend="eager")(torch.arange(4.0)).tolist())
"""

# the fix's setting as diagnose prints it: "torch._dynamo.config.<set>.add(<method>)"
_SETTING_RE = re.compile(r"torch\._dynamo\.config\.\w+\.add\([\w.]+\)")


def _run(tmp_path: Path, name: str, fix: str) -> tuple[Path, str]:
    """The program as a file of its own (torch quotes the line that broke from it), its stderr
    under TORCH_LOGS=graph_breaks; the log and the program's stdout."""
    script = tmp_path / f"{name}.py"
    script.write_text(PROGRAM.format(fix=fix))
    log = tmp_path / f"{name}.log"
    env = os.environ | {"TORCH_LOGS": "graph_breaks", "OMP_NUM_THREADS": "1"}
    with open(log, "wb") as err:
        run = subprocess.run([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=err,
                             env=env, timeout=300, text=True, check=True)
    return log, run.stdout


def test_a_libraries_logger_call_gets_the_setting_that_skips_it(tmp_path: Path) -> None:
    log, before = _run(tmp_path, "run", "")
    diag = diagnose_inputs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    setting = _SETTING_RE.search(a.fix)
    assert setting is not None, a.fix
    assert setting[0].endswith(".add(logging.Logger.warning_once)"), a.fix

    fixed, after = _run(tmp_path, "fixed", setting[0])
    assert after == before == "[1.0, 3.0, 5.0, 7.0]\n"
    assert "Graph break" not in fixed.read_text(), fixed.read_text()[-2000:]

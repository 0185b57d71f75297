"""diagnose against torch's own CUDA-graph logging, and its fix applied.

On a GPU (``gpu``-marked, skipped elsewhere): a tiny program runs under reduce-overhead with
``TORCH_LOGS=cudagraphs`` and ``TORCH_TRACE``; diagnose's recordings must equal the
``Recording function…`` lines torch logs, each with its seconds from the trace; then the
program runs again with the fix diagnose printed (pad to its sizes, capture only those) and
must record no more graphs than the fix names.

On CPU: the options of that fix are real ``torch.compile`` options of the torch installed
(torch checks each name when ``torch.compile`` is called and refuses an unknown one).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dyncli.diagnose import run
from dyncli.diagnose.cudagraph_advice import CAPTURE, LIMIT

pytestmark = pytest.mark.slow

PROGRAM = """
import json, sys, torch
options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else None
caps = options.pop("pad", None) if options else None
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()
f = torch.compile(model, options=options) if options else torch.compile(model, mode="reduce-overhead")
with torch.no_grad():
    for b in (2, 3, 5, 8, 3, 13, 16, 5):
        n = min(c for c in caps if c >= b) if caps else b
        for _ in range(3):
            f(torch.randn(n, 32, device="cuda"))
torch.cuda.synchronize()
"""


def _options(fix: str) -> dict[str, object]:
    """The ``options={…}`` dict a fix prints, as Python (it is a literal)."""
    m = re.search(r"options=(\{.*?\})\)", fix)
    assert m is not None, fix
    value = ast.literal_eval(m.group(1))
    assert isinstance(value, dict)
    return value


def _record(tmp_path: Path, name: str, *args: str) -> tuple[str, Path]:
    prog = tmp_path / "cg_program.py"
    prog.write_text(PROGRAM)
    trace = tmp_path / f"trace_{name}"
    env = {**os.environ, "TORCH_LOGS": "cudagraphs", "TORCH_TRACE": str(trace)}
    done = subprocess.run([sys.executable, str(prog), *args], env=env, capture_output=True,
                          text=True, timeout=600, check=True)
    log = tmp_path / f"{name}.log"
    log.write_text(done.stderr)
    return done.stderr, log


@pytest.mark.gpu
def test_recordings_equal_torchs_own_and_the_fix_records_fewer(tmp_path: Path) -> None:
    import json

    text, log = _record(tmp_path, "plain")
    logged = re.findall(r"Recording function[= ](\w+)", text)
    diag = run([log, tmp_path / "trace_plain"])
    c = diag.cudagraphs
    assert c is not None and logged
    assert len(c.recordings) == len(logged)
    assert all(r.seconds is not None and r.seconds > 0 for r in c.recordings)
    sizes = sum(f.distinct_sizes for f in c.frames)
    assert sizes >= 5  # batch 2, 3, 5, 8, 13, 16 (one may ride a static first compile)
    fix = next(a for a in diag.suggestions if a.kind == "cudagraph-sizes").fix
    options = _options(fix)
    assert options["triton.cudagraphs"] is True
    caps = options[CAPTURE]
    assert isinstance(caps, tuple)
    # apply it: pad every batch to the capture sizes, capture only those
    text2, log2 = _record(tmp_path, "fixed", json.dumps({**options, "pad": list(caps)}))
    again = run([log2, tmp_path / "trace_fixed"]).cudagraphs
    assert again is not None
    assert len(again.recordings) == len(re.findall(r"Recording function[= ](\w+)", text2))
    assert len(again.recordings) <= len(caps) + 1 < len(c.recordings)


def test_the_fix_options_are_real_compile_options() -> None:
    if not hasattr(torch._inductor.config.triton, "cudagraph_capture_sizes"):
        pytest.skip("torch < 2.8 has no cudagraph_capture_sizes")
    fix = ('torch.compile(..., options={"triton.cudagraphs": True, "' + CAPTURE + '": (4, 8)})')
    options = _options(fix)
    if hasattr(torch._inductor.config.triton, LIMIT.split(".")[1]):  # torch >= 2.15
        options[LIMIT] = 4
    torch.compile(lambda x: x * 2, options=options)  # torch checks each name (and its type) here
    with pytest.raises(RuntimeError, match="Unexpected optimization option"):
        torch.compile(lambda x: x, options={"triton.cudagraph_capture_sizez": (4,)})

"""A fresh capture with the installed torch: one run writes both a TORCH_LOGS text log and a
TORCH_TRACE trace; dyncli reads the trace (automatically, by content) and agrees with the
text log. Guards against a new torch changing the trace format under the captured files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.read import diagnose_inputs
from dyncli.logparse.textlog import parse_lines

pytest.importorskip("torch")
pytestmark = pytest.mark.slow

PROGRAM = '''
import torch

def scale(x, n):
    y = x * 2
    if n == 7:
        return y + 1
    return y.sum(0) + n

f = torch.compile(scale, backend="aot_eager")
for batch in (2, 3, 4):
    f(torch.randn(batch, 4), 5)
f(torch.randn(4, 4), 7)
'''


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("capture")
    (root / "prog.py").write_text(PROGRAM)
    trace, log = root / "trace", root / "run.log"
    env = {**os.environ, "TORCH_TRACE": str(trace), "OMP_NUM_THREADS": "1",
           "TORCH_LOGS": "+dynamic,recompiles,guards,graph_breaks"}
    with log.open("wb") as err:
        subprocess.run([sys.executable, str(root / "prog.py")], cwd=root, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=err, timeout=300)
    return trace, log


def test_fresh_trace_facts(capture: tuple[Path, Path]) -> None:
    trace, _ = capture
    d = diagnose_inputs([str(trace)], strict=True)  # strict: no unknown kind, hashes match
    assert d.trace is not None
    (frame,) = d.frames
    assert (frame.function, frame.first_line, frame.compiles) == ("scale", 4, 3)
    assert [(r.compile_id, r.cause) for r in d.recompiles] == [("0/1", "size"), ("0/2", "scalar")]
    (spec,) = d.specializations
    assert (spec.sources, spec.value, spec.user.line if spec.user else None) == (("L['n']",), "7", 6)
    assert [c.compile_id for c in d.trace.compile_times] == ["0/0", "0/1", "0/2"]
    (sim,) = d.trace.similar_graphs
    assert sim.compile_ids == ("0/0", "0/1") and sim.inputs[0][0] == "L['x']"


def test_fresh_trace_agrees_with_text_log(capture: tuple[Path, Path]) -> None:
    trace, log = capture
    with log.open("rb") as fh:
        text = analyze(parse_lines(fh))
    d = diagnose_inputs([str(trace)])
    assert [(f.function, f.compiles, f.compile_ids) for f in d.frames] == [
        (f.function, f.compiles, f.compile_ids) for f in text.frames]
    assert [(r.compile_id, r.cause) for r in d.recompiles] == [
        (r.compile_id, r.cause) for r in text.recompiles]
    assert [(s.symbol, s.sources, s.value) for s in d.specializations] == [
        (s.symbol, s.sources, s.value) for s in text.specializations]
    assert d.dynamic_sources == text.dynamic_sources

"""Compiling the DDP wrapper, ``torch.compile(DDP(model))``, under torch's launcher with two gloo
ranks, and the fixes diagnose prints applied to the same program.

DDP's forward broadcasts the module's buffers from rank 0 (``_sync_buffers`` ->
``dist._broadcast_coalesced``), a collective dynamo cannot trace (pytorch#141827, #139440). Until
round 20 diagnose's fix for that break was "torch's own: report it; TORCHINDUCTOR_FX_GRAPH_CACHE=0
avoided it", a sentence from an unrelated thread. The rest of DDP's forward breaks by design
(distributed.py skips ``_inside_ddp_forward`` so that dynamo compiles the module inside), and
diagnose asked the user to "avoid calling" torch's own context manager.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # two gloo ranks under torchrun: 15-30 s
torch = pytest.importorskip("torch")

PROGRAM = """
import sys
import torch
import torch._dynamo
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
for setup in sys.argv[1:]:  # each from a reset dynamo, its lines after a mark of rank 0's
    torch._dynamo.reset()
    sys.stdout.flush(), sys.stderr.flush()
    dist.barrier()  # (every rank's lines of the setup before are written)
    if dist.get_rank() == 0:
        print(MARK + setup, file=sys.stderr, flush=True)
    dist.barrier()
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.ReLU())
    if setup == "wrapper":
        run = torch.compile(DDP(model), backend="eager")
    elif setup == "no-broadcast":
        run = torch.compile(DDP(model, broadcast_buffers=False), backend="eager")
    else:
        run = DDP(torch.compile(model, backend="eager"))
    x = torch.randn(4, 8)
    run(x).sum().backward()
    with torch.no_grad():
        run(x)
    sys.stdout.write(f"ran {setup} {dist.get_rank()}\\n")  # (one write: ranks interleave)
sys.stdout.flush(), sys.stderr.flush()
dist.barrier()
dist.destroy_process_group()
"""
MARK = "--- dyncli test setup: "
SETUPS = ("wrapper", "no-broadcast", "inner")


def _run(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """The three setups, one launch of two ranks (a launch costs three Pythons importing torch):
    each setup's log and its text."""
    script = tmp_path / "prog.py"
    script.write_text(f"MARK = {MARK!r}\n" + PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {
        "OMP_NUM_THREADS": "1", "TORCH_LOGS": "graph_breaks"}
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
         "2", str(script), *SETUPS],
        capture_output=True, env=env, timeout=300, cwd=tmp_path, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    for setup in SETUPS:  # (the ranks' lines may interleave)
        assert run.stdout.count(f"ran {setup}") == 2, run.stdout
    parts = run.stderr.split(MARK)
    assert len(parts) == len(SETUPS) + 1, run.stderr[-3000:]
    logs = {}
    for part in parts[1:]:
        setup, text = part.split("\n", 1)
        (tmp_path / f"{setup}.log").write_text(text)
        logs[setup] = (tmp_path / f"{setup}.log", text)
    return logs


def _fixes(log: Path) -> list[str]:
    diag = diagnose_inputs([log])
    return [s.fix for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]


def test_ddps_buffer_broadcast_break_gets_the_settings_that_remove_it(tmp_path: Path) -> None:
    ran = _run(tmp_path)
    log, text = ran["wrapper"]
    assert "_broadcast_coalesced" in text
    fixes = _fixes(log)
    (broadcast,) = {f for f in fixes if "broadcast_buffers=False" in f}  # (one per rank)
    assert "DDP(torch.compile(model))" in broadcast
    assert "FX_GRAPH_CACHE" not in " ".join(fixes)
    # the rest of DDP's forward is torch's by design, not a call of the user's to avoid
    assert all("Avoid calling" not in f for f in fixes), fixes
    assert any("DDP's own forward" in f for f in fixes) or len(fixes) == 1, fixes

    # the first printed setting, applied: the broadcast is gone, the program runs
    log, text = ran["no-broadcast"]
    assert "_broadcast_coalesced" not in text
    assert all("broadcast_buffers=False" not in f for f in _fixes(log))

    # the second: the module compiled inside DDP breaks nowhere (torch logs nothing)
    log, text = ran["inner"]
    assert "Graph break" not in text and "graph_breaks" not in text, text[-2000:]

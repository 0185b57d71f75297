"""A real log behind the stamps that tools put before every line of a program's output (paste
hunt 14, problem 7): torch's lines and the program's traceback under the same stamp read as the
log without it, one limit hit that stopped the program. The stamps are made here from each
tool's documented form on the lines of tests/data/wrapped/fail_limit_fullgraph.log (a real
torch 2.15 run); no public paste of them was found."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textpaste import wrapper_of

LOG = Path(__file__).resolve().parents[1] / "data" / "wrapped" / "fail_limit_fullgraph.log"

STAMPS = {
    "github-actions": lambda i: f"2025-11-30T06:53:{i % 60:02d}.7440000Z ",
    "ray": lambda i: "(RayWorkerWrapper pid=4321) ",
    "ray-remote": lambda i: "(pid=4321, ip=10.0.0.2) ",
    "srun-label": lambda i: "0: ",
    "srun-label-padded": lambda i: " 3: ",
    "journald": lambda i: f"Nov 30 06:53:{i % 60:02d} gpu-node-7 python[28129]: ",
    "k8s-cri": lambda i: "2025-11-30T06:53:04.744123456Z stderr F ",
    "k8s-cri-pod": lambda i: "trainer-7d9f 2025-11-30T06:53:04.744Z stderr F ",
    "torchrun-tee": lambda i: "[default0]:",
}


def _read(tmp_path: Path, stamp: str) -> Diagnosis:
    lines = LOG.read_text().splitlines()
    path = tmp_path / f"{stamp}.log"
    path.write_text("".join(STAMPS[stamp](i) + line + "\n" for i, line in enumerate(lines)))
    return diagnose_logs([path])


@pytest.mark.parametrize("stamp", sorted(STAMPS))
def test_a_stamped_log_reads_as_the_log(tmp_path: Path, stamp: str) -> None:
    plain = diagnose_logs([LOG])
    diag = _read(tmp_path, stamp)
    (hit,) = diag.recompile_limits
    assert hit.function == "f" and diag.limit_raised
    assert diag.stats.unrecognized == plain.stats.unrecognized
    assert diag.stats.recognized == plain.stats.recognized
    # torchrun's tag is local rank 0's, on torch's lines and the traceback's alike
    assert hit.rank == (0 if stamp == "torchrun-tee" else None)


@pytest.mark.parametrize("line", [
    b"3: loss 0.25",  # a program's numbered line, no torch line behind it
    b"12: W1130 is a word here",
    b"(pid=4321) starting",
    b"Nov 30 06:53:04 host python[1]: hello",
    b"2025-11-30T06:53:04.7440000Z Traceback (most recent call last):",
    b"W1130 06:53:04.744000 28129 torch/_dynamo/convert_frame.py:2061] [0/4] x",  # no stamp
])
def test_a_stamp_is_learned_only_in_front_of_torchs_line(line: bytes) -> None:
    assert wrapper_of(line) is None


def test_a_numbered_line_keeps_its_text_without_srun_on_torchs_lines(tmp_path: Path) -> None:
    """``N: `` is taken off the program's lines only where torch's lines had it: in a log
    without it, a line that starts so is the program's as written."""
    lines = LOG.read_text().splitlines()
    path = tmp_path / "numbered.log"
    at = next(i for i, t in enumerate(lines) if t.startswith("torch._dynamo.exc.Fail"))
    lines[at] = "0: " + lines[at]
    path.write_text("\n".join(lines) + "\n")
    # (the exception line read as the program's own: one line more not understood)
    assert diagnose_logs([path]).stats.unrecognized == diagnose_logs([LOG]).stats.unrecognized + 1

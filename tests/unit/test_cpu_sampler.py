"""benchmarks/cpu_sampler.py: a busy process shows up, by pid, with the share of a core it got.

What a spinning process gets depends on what else runs (a share of 0.23 at load 6 on two
cores failed this test's fixed 0.3 once): the share the sampler says is checked against the
CPU time the kernel counted for the process over the same run, not against a constant."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads /proc")
def test_a_busy_child_is_named_with_its_share_of_a_core(tmp_path: Path) -> None:
    out = tmp_path / "samples.csv"
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 30\n"
                             "while time.time() < t: pass"])
    sampler = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "cpu_sampler.py"),
                                str(out), "--interval", "0.2", "--top", "500"])
    t0, cpu0 = time.time(), _cpu_s(busy.pid)
    try:
        deadline = time.time() + 20
        lines: list[str] = []
        while time.time() < deadline and len(lines) < 4:
            time.sleep(0.2)
            lines = out.read_text().splitlines() if out.exists() else []
        got = (_cpu_s(busy.pid) - cpu0) / (time.time() - t0)  # of a core, on average
    finally:
        sampler.kill()
        busy.kill()
        sampler.wait()
        busy.wait()
    assert len(lines) >= 4, lines
    shares = []
    for line in lines[1:]:  # the first interval may start before the child is busy
        stamp, cores, tops = line.split(",", 2)
        assert abs(float(stamp) - time.time()) < 120 and float(cores) >= 0
        named = {int(t.split(":")[0]): float(t.rsplit(":", 1)[1]) for t in tops.split()}
        shares.append(named.get(busy.pid, 0.0))
    # in its busiest interval, at least half of what the kernel says it got on average (quiet:
    # ~1 core; at load 6 on 2 cores: ~0.3)
    assert got > 0.02 and max(shares) >= got / 2, (got, lines)


def _cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (float(fields[11]) + float(fields[12])) / os.sysconf("SC_CLK_TCK")

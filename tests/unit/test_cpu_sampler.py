"""benchmarks/cpu_sampler.py: a busy process shows up, by pid, among the busiest."""

from __future__ import annotations

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
                                str(out), "--interval", "0.2", "--top", "5"])
    try:
        deadline = time.time() + 20
        lines: list[str] = []
        while time.time() < deadline and len(lines) < 4:
            time.sleep(0.2)
            lines = out.read_text().splitlines() if out.exists() else []
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
    # a spinning process takes most of a core in most intervals, whatever else runs beside it
    assert max(shares) > 0.3, lines

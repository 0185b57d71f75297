"""The HTML report renders in a real browser: headless Chromium (Debian's ``chromium``).

Skips cleanly when no chromium binary is installed. Checks the DOM chromium builds (so the
file parses and the inline script runs without breaking it) and that a screenshot is made.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from dyncli.diagnose.html import write_html
from dyncli.diagnose.read_trace import diagnose_traces

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BROWSER is None, reason="no chromium installed")]


def _chromium(*args: str) -> subprocess.CompletedProcess[bytes]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([str(BROWSER), *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, timeout=60, check=False)


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    write_html(report, diagnose_traces([TRACES / "two_rank_diverge"]))
    dom = _chromium("--dump-dom", report.as_uri())
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    text = dom.stdout.decode()
    for needle in ("Similar graphs", "Per-compile details", "dynamic dims differ across ranks",
                   "norm_rows", "</table>"):
        assert needle in text
    shot = tmp_path / "report.png"
    run = _chromium(f"--screenshot={shot}", "--window-size=1280,2000", report.as_uri())
    assert run.returncode == 0 and shot.exists()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 40_000  # a blank 1280x2000 page is ~12 KB

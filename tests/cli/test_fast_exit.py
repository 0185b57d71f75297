"""``diagnose`` ends its process without the interpreter's teardown (``startup.exit_now``):
what it wrote is complete, the exit handlers ran, the exit status is the command's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli import startup

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "hf_tiny_bert"


def test_not_asked_or_not_a_number_is_the_normal_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "fast_exit", False)
    startup.exit_now(0)  # returns: nothing asked
    monkeypatch.setattr(startup, "fast_exit", True)
    startup.exit_now("a message")  # returns: Python prints it and exits 1


def test_exit_handlers_run_and_status_kept(tmp_path: Path) -> None:
    marker = tmp_path / "atexit"
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
            "from dyncli import startup\n"
            "startup.fast_exit = True\n"
            "sys.stdout.write('buffered, not yet flushed')\n"
            "startup.exit_now(3)\n"
            "print('not reached')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 3
    assert done.stdout == "buffered, not yet flushed"
    assert marker.read_text() == "ran"


def _run(extra: list[str], out: Path, fast: bool) -> subprocess.CompletedProcess[str]:
    argv = ["dyncli", "diagnose", str(TRACE), *extra]
    if "--json" not in extra:
        argv += ["--json", str(out)]
    # the console entry (fast exit) or the app's main (the interpreter's normal exit)
    entry = "from dyncli.__main__ import main" if fast else "from dyncli.cli import main"
    code = f"import sys\nsys.argv = {argv!r}\n{entry}\nmain()\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "120",
                               "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


@pytest.mark.parametrize("extra", [[], ["--fail-on", "recompiles"], ["--json", "-"]])
def test_diagnose_output_as_at_a_normal_exit(extra: list[str], tmp_path: Path) -> None:
    fast = _run(extra, tmp_path / "fast.json", True)
    slow = _run(extra, tmp_path / "slow.json", False)
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert fast.returncode == (1 if "--fail-on" in extra else 0)
    if "-" in extra:
        assert json.loads(fast.stdout) == json.loads(slow.stdout)
    else:
        assert fast.stdout == slow.stdout and "Suggestions:" in fast.stdout
        assert (tmp_path / "fast.json").read_text() == (tmp_path / "slow.json").read_text()

"""benchmarks/pytest_cpu.py: a test's CPU seconds include the children it waited for, and the
work of children still running at its end (the fix tests' zygote and its forks)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TESTS = '''
import subprocess, sys

def test_idle():
    pass

def test_child_works():
    # a fixed amount of work in a child process (CPU seconds, whatever the machine's load)
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(4_000_000))"], check=True)

# a child that outlives its test, as the fix tests' zygote does: it forks the work, waits for
# the fork, says so and waits for its end of input (the next test's)
KEPT = """import os, sys
pid = os.fork()
if pid == 0:
    sum(i * i for i in range(4_000_000))
    os._exit(0)
os.waitpid(pid, 0)
print("done", flush=True)
sys.stdin.read()
"""
kept = []

def test_forks_in_a_live_child():
    p = subprocess.Popen([sys.executable, "-c", KEPT], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "done\\n"
    kept.append(p)

def test_stops_the_live_child():
    kept[0].stdin.close()
    assert kept[0].wait() == 0
'''


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("pytest_cpu", ROOT / "benchmarks" / "pytest_cpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_childs_cpu_is_its_tests_and_the_summary_ranks_it(tmp_path: Path) -> None:
    (tmp_path / "test_work.py").write_text(TESTS)
    env = {**os.environ, "PYTEST_CPU_OUT": str(tmp_path / "cpu"),
           "PYTHONPATH": str(ROOT / "benchmarks")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "pytest_cpu", "-q",
                           "-p", "no:cacheprovider", "test_work.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = _module().summary(str(tmp_path / "cpu"), 5)
    lines = text.splitlines()
    assert lines[0].endswith("CPU-s in 4 tests; by file:")
    tests = lines[lines.index("by test (CPU-s, wall s):") + 1:]
    cpu = {line.split("::")[-1]: float(line.split()[0]) for line in tests}
    assert cpu["test_child_works"] > 0.05  # the child's work, counted in its test
    # a live child's fork, waited for by that child: counted in the test that ran it (it was
    # in no test: the child is reaped in the next), and not again when the child is reaped
    assert cpu["test_forks_in_a_live_child"] > 0.05
    assert cpu["test_stops_the_live_child"] < cpu["test_forks_in_a_live_child"] / 2

"""benchmarks/pytest_cpu.py: a test's CPU seconds include the children it waited for."""

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
    assert lines[0].endswith("CPU-s in 2 tests; by file:")
    first_test = lines[lines.index("by test (CPU-s, wall s):") + 1]
    assert first_test.endswith("test_work.py::test_child_works")
    assert float(first_test.split()[0]) > 0.05  # the child's work, counted in its test

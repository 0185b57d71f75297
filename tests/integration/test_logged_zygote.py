"""logged.run_python forks a Python that has imported torch: each program must still run as
``python PROGRAM`` would (its environment, argv, __main__, traceback, exit code, atexit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from logged import _environment, _zygotes, run_python

pytestmark = pytest.mark.slow

PROGRAM = """import atexit, os, sys
import torch
atexit.register(lambda: print("at exit", flush=True))
print("argv", sys.argv[1:], "main", __name__, "file", __file__)
print("env", os.environ.get("DYNCLI_ZYGOTE_PROBE"), "cwd", os.path.basename(os.getcwd()))
f = torch.compile(lambda x: x * 2, backend="eager")
print("sum", f(torch.ones(3)).sum().item())
torch._logging._internal.log_state  # (the child's logging settings, read again from TORCH_LOGS)
if sys.argv[1:] == ["raise"]:
    def inner():
        raise ValueError("from the program")
    inner()
sys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else 0)
"""


def test_a_forked_program_runs_as_a_fresh_python_would(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("DYNCLI_TEST_FRESH_PYTHON") == "1":
        pytest.skip("DYNCLI_TEST_FRESH_PYTHON=1: no zygote")
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    out, err = tmp_path / "out", tmp_path / "err"

    def run(*args: str, logs: str = "") -> tuple[int, str, str]:
        rc = run_python([str(program), *args], _environment(logs, None), tmp_path, out, err)
        return rc, out.read_text(), err.read_text()

    rc, stdout, _ = run("a", "b")
    assert rc == 0, stdout
    assert "argv ['a', 'b'] main __main__ file " + str(program) in stdout
    assert "env None cwd " + tmp_path.name in stdout and "sum 6.0" in stdout
    assert stdout.rstrip().endswith("at exit")  # atexit's functions ran, after the program
    assert run("3")[0] == 3
    # an uncaught exception: Python's traceback from the program's frames, no zygote's, exit 1
    rc, _, stderr = run("raise")
    assert rc == 1 and stderr.startswith("Traceback (most recent call last):\n"), stderr
    assert f'File "{program}", line' in stderr and "ValueError: from the program" in stderr
    assert stderr.count('File "') == 2, stderr  # <module> and inner: nothing of the zygote's
    # TORCH_LOGS is read again in each child: the same zygote, another log
    zygotes = len(_zygotes)
    rc, _, stderr = run(logs="graph_code")
    assert rc == 0 and "TRACED GRAPH" in stderr and len(_zygotes) == zygotes, stderr
    # another environment (read as torch is imported) is another zygote's
    monkeypatch.setenv("DYNCLI_ZYGOTE_PROBE", "seen")
    rc, stdout, _ = run()
    assert rc == 0 and "env seen" in stdout and len(_zygotes) == min(zygotes + 1, 2), stdout

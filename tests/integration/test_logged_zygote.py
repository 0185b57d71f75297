"""logged.run_python forks a Python that has imported torch: each program must still run as
``python PROGRAM`` would (its environment, argv, __main__, __file__, coding cookie, traceback,
exit code, threads, atexit), a variable torch's import read that the program sets fails the
call, and a zygote that ends says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from logged import ImportTimeEnvironment, _environment, _zygotes, run_python

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


def _fresh_python_only() -> None:
    if os.environ.get("DYNCLI_TEST_FRESH_PYTHON") == "1":
        pytest.skip("DYNCLI_TEST_FRESH_PYTHON=1: no zygote")


def _both(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[
        tuple[int, str, str], tuple[int, str, str]]:
    """(exit code, stdout, stderr) of ``python ARGV`` forked from the zygote, and of a fresh
    Python (the programs here import nothing of torch: a fresh one costs little)."""
    env = env or _environment("", None)
    out, err = cwd / ".out", cwd / ".err"
    rc = run_python(argv, env, cwd, out, err)
    forked = rc, out.read_text(), err.read_text()
    fresh = subprocess.run([sys.executable, *argv], env=env, cwd=cwd, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, check=False, timeout=120)
    return forked, (fresh.returncode, fresh.stdout, fresh.stderr)


SEES = """import sys
print("file", __file__)
print("argv", sys.argv)
print("orig_argv", sys.orig_argv)
print("path0", sys.path[0])
"""


def test_the_program_sees_what_python_program_would(tmp_path: Path) -> None:
    # round 28: __file__ was the path as typed (Python makes it absolute), sys.orig_argv the
    # zygote's own command line
    _fresh_python_only()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "sees.py").write_text(SEES)
    forked, fresh = _both(["sub/sees.py", "a", "b c"], tmp_path)
    assert forked == fresh and fresh[0] == 0, (forked, fresh)
    assert f"file {tmp_path / 'sub' / 'sees.py'}" in forked[1]
    assert f"orig_argv {[sys.executable, 'sub/sees.py', 'a', 'b c']}" in forked[1]
    forked, fresh = _both(["-c", "import sys; print(sys.argv, sys.orig_argv, repr(sys.path[0]))",
                           "x"], tmp_path)
    assert forked == fresh and fresh[0] == 0, (forked, fresh)


def test_a_coding_cookie_is_honored(tmp_path: Path) -> None:
    # round 28: the file was read as UTF-8 whatever its cookie said (a UnicodeDecodeError)
    _fresh_python_only()
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nprint(ascii('caf\xe9'))\n")
    forked, fresh = _both(["latin.py"], tmp_path)
    assert forked == fresh == (0, "'caf\\xe9'\n", ""), (forked, fresh)


def test_a_program_that_cannot_be_opened_exits_2_as_python_does(tmp_path: Path) -> None:
    # round 28: an OSError's traceback from the zygote's own frame, exit 1
    _fresh_python_only()
    forked, fresh = _both(["missing.py"], tmp_path)
    assert forked == fresh, (forked, fresh)
    assert forked[0] == 2 and forked[2] == (f"{sys.executable}: can't open file "
                                            f"'{tmp_path / 'missing.py'}': [Errno 2] No such "
                                            "file or directory\n")


THREADS = """import atexit, threading, time
def work():
    time.sleep(0.3)
    print("thread done", flush=True)
worker = threading.Thread(target=work)
atexit.register(lambda: print("at exit, thread alive", worker.is_alive(), flush=True))
worker.start()
"""


def test_the_programs_threads_are_joined_before_atexit(tmp_path: Path) -> None:
    # round 28: atexit's functions ran as the main code ended and the child exited under the
    # thread (its work never done); Python joins the threads first
    _fresh_python_only()
    (tmp_path / "threads.py").write_text(THREADS)
    forked, fresh = _both(["threads.py"], tmp_path)
    assert forked == fresh == (0, "thread done\nat exit, thread alive False\n", ""), \
        (forked, fresh)


def test_a_variable_torchs_import_read_set_by_the_program_fails_the_call(
        tmp_path: Path) -> None:
    # round 28: the program ran with the zygote's value (torch had been imported), silently
    _fresh_python_only()
    env = _environment("", None)
    out, err = tmp_path / "out", tmp_path / "err"
    for name, value in (("TORCHDYNAMO_VERBOSE", "1"), ("OMP_NUM_THREADS", "2"),
                        ("TORCH_LOGS", "recompiles")):
        program = f"import os\nos.environ[{name!r}] = {value!r}\nimport torch\nprint('ran')\n"
        with pytest.raises(ImportTimeEnvironment, match=f"python -c CODE set {name} before "
                                                        "importing torch") as info:
            run_python(["-c", program], env, tmp_path, out, err)
        assert "DYNCLI_TEST_FRESH_PYTHON=1" in str(info.value)
        assert "ran" not in out.read_text()
    # after the import, or a variable the import never read: the run goes on
    for program in ("import os, torch\nos.environ['TORCHDYNAMO_VERBOSE'] = '1'\nprint('ran')\n",
                    "import os\nos.environ['DYNCLI_ZYGOTE_OTHER'] = '1'\nimport torch\n"
                    "print('ran')\n"):
        assert run_python(["-c", program], env, tmp_path, out, err) == 0, err.read_text()
        assert out.read_text() == "ran\n"


def test_a_zygote_that_ends_says_why(tmp_path: Path) -> None:
    _fresh_python_only()
    out, err = tmp_path / "out", tmp_path / "err"
    # killed under a call (the OOM killer's way): its signal
    kill = "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)\n"
    with pytest.raises(RuntimeError, match=r"^the zygote ended \(killed by SIGKILL\)"):
        run_python(["-c", kill], _environment("", None), tmp_path, out, err)
    # its import failed: its traceback's last lines
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "torch.py").write_text("raise ImportError('a broken torch')\n")
    env = _environment("", {"PYTHONPATH": str(broken)})
    with pytest.raises(RuntimeError, match=r"^the zygote ended \(exit 1\):\n") as info:
        run_python(["-c", "pass"], env, tmp_path, out, err)
    assert "ImportError: a broken torch" in str(info.value)
    # the next call starts another zygote
    assert run_python(["-c", "print('again')"], _environment("", None), tmp_path, out, err) == 0
    assert out.read_text() == "again\n"

"""A program run as a user runs it, its stderr the log diagnose reads (the fix tests' one way)."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# A program's lines that count the graphs dynamo hands a backend (``backend=backend``, then
# ``len(graphs)``): the fix tests' programs print the count beside their result.
COUNTING_BACKEND = """graphs = []
def backend(gm, example_inputs):  # counts the graphs dynamo hands a backend
    graphs.append(gm)
    return gm.forward
"""


@dataclass(frozen=True)
class Script:
    """A program in a file, run as ``python PATH ARGS``: its frames name the file."""

    path: Path
    args: tuple[str, ...] = ()


def _environment(logs: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """This environment under TORCH_LOGS=``logs`` (empty: unset) and ``env``, one OpenMP
    thread."""
    full = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {"OMP_NUM_THREADS": "1"}
    if logs:
        full["TORCH_LOGS"] = logs
    return full | dict(env or {})


def run_logged(code: str | Script, log: Path, logs: str = "",
               env: Mapping[str, str] | None = None,
               check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (``python -c``, or a Script: ``python PATH ARGS``) under
    TORCH_LOGS=``logs`` (empty: unset, torch's default warnings: torch 2.15 fails to import
    under an empty TORCH_LOGS) and ``env``, one OpenMP thread, its stderr written to ``log``;
    its stdout as text (``run_python``: a fork of a Python that has imported torch)."""
    out = log.with_name(f".{log.name}.stdout")
    argv = ["-c", code] if isinstance(code, str) else [str(code.path), *code.args]
    rc = run_python(argv, _environment(logs, env), Path.cwd(), out, log)
    ran = subprocess.CompletedProcess([sys.executable, *argv], rc,
                                      out.read_text(errors="replace"), None)
    if check:
        ran.check_returncode()
    return ran


# One process for a program's variants (as run, each fix applied): each variant after the first
# starts from torch._dynamo.reset() ("as if you had started a fresh process": compile ids from
# 0/0, code state, automatic dynamic's sizes, the recompile counts), counters cleared, dynamo's
# and inductor's config as the process started, and Python's once-per-place warnings shown
# again. What reset() cannot undo is the process itself: TORCH_LOGS and env read at import are
# the run's, and so is what a program changes outside torch's config (a default device, a global
# of a library). A fresh Python costs ~7 CPU-s (importing torch and dynamo) before it compiles
# anything: the fix tests ran 2-6 of them each. Each variant's stdout and stderr are cut out by
# a line only the runner writes; a variant that raises prints its traceback as `python -c` would
# (from its own frames on) and the next one runs.
_RUNNER = r'''
import json, sys, traceback, warnings
codes, mark = json.load(open(sys.argv[1])), sys.argv[2]
import torch, torch._dynamo, torch._inductor.config
from torch._dynamo.utils import counters
start = torch._dynamo.config.get_config_copy(), torch._inductor.config.get_config_copy()
failed = []
for i, (code, filename, argv) in enumerate(codes):
    if i:
        torch._dynamo.reset()
        counters.clear()
        with warnings.catch_warnings():  # (restoring a deprecated key warns; leaving bumps the
            warnings.simplefilter("ignore")  # filters' version: once-per-place warnings show again)
            torch._dynamo.config.load_config(start[0])
            torch._inductor.config.load_config(start[1])
    print(mark, flush=True)
    print(mark, file=sys.stderr, flush=True)
    sys.argv[:] = argv
    scope = {"__name__": "__main__"} | ({} if filename == "<string>" else {"__file__": filename})
    try:
        exec(compile(code, filename, "exec"), scope)
    except Exception as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        failed.append(i)
    sys.stdout.flush()
    sys.stderr.flush()
print(mark, flush=True)
print(json.dumps(failed), flush=True)
'''


@dataclass(frozen=True)
class Variant:
    """One variant's run: its stdout, its stderr (the log, in ``log``), whether it raised."""

    stdout: str
    log: Path
    raised: bool

    @property
    def text(self) -> str:
        return self.log.read_text()


# A Python that has imported torch, forked for each program the fix tests run (a "zygote", as
# Android starts its apps): importing torch, dynamo and inductor is most of the CPU-s a small
# fix test's fresh Python costs, and the fix tests start dozens of them in every CI run. Nothing
# is compiled, no thread started and no CUDA touched before the fork: the child starts where a
# fresh `python PROGRAM` would be after its imports, and ends as Python does (the program's
# threads joined, then atexit's functions: torch prints some tables at exit). It sees what
# `python PROGRAM` would: an absolute __file__, sys.argv and sys.orig_argv as typed, the file
# decoded by its coding cookie (compile() of its bytes), and a file that cannot be opened is
# Python's one line and exit 2. What the import read from the environment is the zygote's, so
# a zygote serves only calls whose environment (but for TORCH_LOGS and pytest's
# PYTEST_CURRENT_TEST, which torch never reads) is the one it was started with; the child sets
# TORCH_LOGS and has torch read its logging settings again (torch._logging._internal.
# _init_logs(), as at import: it resets every logger and handler from the environment,
# 2.1-2.15). A call with another environment starts a zygote of its own. A program that itself
# sets a variable the import read (os.environ[...] = ... before `import torch`, as suggest's
# python form does) would run with the zygote's value where a fresh Python reads its own: the
# zygote records every name read while it imports, the child compares them with its
# environment at the program's first import of torch, and the call fails naming them
# (ImportTimeEnvironment). Measured (round 27, torch 2.15, 2 cores): the 49 tests of the 24
# files that use run_variants took 350 CPU-s and 179 s with a fresh Python per call, 173 CPU-s
# and 105 s forked. The zygote imports inductor's compiler too (a first compile's imports: a
# call of two variants compiled by inductor cost 6.3 CPU-s fresh, 2.6 forked without them, 1.9
# with them). DYNCLI_TEST_FRESH_PYTHON=1 runs each program in a fresh Python instead.
_ZYGOTE = r"""
import atexit, builtins, json, os, sys, threading, traceback, types

# the names the imports read (os.environ[k], .get, getenv, `in`), but for a whole environment
# listed (a copy, a prefix scan: tqdm's TQDM_*), and what C code reads as the libraries load
# (OpenMP's thread count: set before `import torch`, 2.15 runs that many threads)
READ = {"OMP_NUM_THREADS"}
_getitem, _iter, _listed = os._Environ.__getitem__, os._Environ.__iter__, [None]

def _listing(self):
    for key in _iter(self):
        _listed[0] = key
        yield key
    _listed[0] = None

def _reading(self, key):
    if key != _listed[0]:
        READ.add(os.fsdecode(key))
    return _getitem(self, key)

os._Environ.__getitem__, os._Environ.__iter__ = _reading, _listing
try:
    import torch, torch._dynamo, torch._inductor.config, torch._logging._internal
    try:  # (what inductor's first compile imports, most of its CPU-s on a warm cache)
        import torch._inductor.compile_fx, torch._inductor.codegen.cpp, torch._inductor.fx_passes.post_grad
    except ImportError:
        pass
finally:
    os._Environ.__getitem__, os._Environ.__iter__ = _getitem, _iter

def watch_first_torch_import(env, report):
    # at the program's first `import torch` (or torch.X, from any module), the names the
    # zygote's import read must hold what they held then; else say which, and stop
    real = builtins.__import__
    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            builtins.__import__ = real
            changed = sorted(k for k in READ if os.environ.get(k) != env.get(k))
            if changed:
                os.write(report, json.dumps(changed).encode())
                print("zygote: the program set " + ", ".join(changed) + " before importing "
                      "torch, which read it as the zygote imported it", file=sys.stderr)
                sys.stderr.flush()
                os._exit(1)
        return real(name, globals, locals, fromlist, level)
    builtins.__import__ = importing

def child(req, report):
    # (exit code, whether Python's ending runs: threads joined, atexit's functions)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path in ((1, req["out"]), (2, req["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    torch._logging._internal._init_logs()
    argv = req["argv"]
    sys.orig_argv[:] = [sys.executable, *argv]
    main = types.ModuleType("__main__")
    if argv[0] == "-c":  # python -c CODE ARGS
        source, filename, sys.argv[:] = argv[1], "<string>", ["-c", *argv[2:]]
        sys.path[0] = ""
    else:  # python PROGRAM ARGS
        filename = os.path.abspath(argv[0])
        try:
            with open(filename, "rb") as f:
                source = f.read()  # (bytes: compile() honors a coding cookie, as Python does)
        except OSError as e:  # Python's words, before anything runs
            print(f"{sys.executable}: can't open file {filename!r}: [Errno {e.errno}] "
                  f"{e.strerror}", file=sys.stderr)
            return 2, False
        sys.argv[:] = argv
        sys.path[0] = os.path.dirname(filename)
        main.__file__ = filename
    sys.modules["__main__"] = main
    watch_first_torch_import(req["env"], report)
    try:
        exec(compile(source, filename, "exec"), main.__dict__)
        return 0, True
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0, True
        print(e.code, file=sys.stderr)
        return 1, True
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 1, True

for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    report, said = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(report)
            code, ending = child(req, said)
            if ending:  # as Py_FinalizeEx: the threads first, then atexit's functions
                threading._shutdown()
                atexit._run_exitfuncs()
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(said)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    os.set_blocking(report, False)  # (a process the program forked may hold the pipe open)
    try:
        changed = json.loads(os.read(report, 1 << 16) or b"[]")
    except BlockingIOError:
        changed = []
    os.close(report)
    print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "changed": changed}), flush=True)
"""
# what the child sets itself
_PER_CALL = ("TORCH_LOGS", "PYTEST_CURRENT_TEST")


class ImportTimeEnvironment(RuntimeError):
    """A program set a variable that torch's import read, which the zygote had done already."""


@dataclass
class _Zygote:
    proc: subprocess.Popen[bytes]
    log: IO[bytes]  # its own stderr (its children write theirs to the call's files)
    buffer: bytes = b""

    def answer(self, timeout: float) -> dict[str, Any]:
        """The zygote's next line, within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            if not select.select([fd], [], [], timeout)[0]:
                raise TimeoutError(f"the zygote gave no answer in {timeout:.0f} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(self.why_ended())
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def why_ended(self) -> str:
        """How the zygote ended and the end of what it wrote (an import's error, a failed
        fork's traceback)."""
        rc = self.proc.wait()
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
        self.log.seek(0)
        tail = self.log.read().decode(errors="replace").strip().splitlines()[-12:]
        return f"the zygote ended ({how})" + (":\n" + "\n".join(tail) if tail else
                                              ", writing nothing on its stderr")

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the zygote's loop ends at end of input
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


_zygotes: dict[tuple[tuple[str, str], ...], _Zygote] = {}


@atexit.register
def _stop_all() -> None:
    for z in _zygotes.values():
        z.stop()


def _zygote(env: Mapping[str, str]) -> _Zygote:
    """The zygote for ``env`` (but for ``_PER_CALL``), started on first use; two live at most."""
    base = {k: v for k, v in env.items() if k not in _PER_CALL}
    key = tuple(sorted(base.items()))
    z = _zygotes.get(key)
    if z is None or z.proc.poll() is not None:
        if z is not None:
            _zygotes.pop(key).stop()  # (it ended: its stderr file is closed)
        if len(_zygotes) >= 2:
            _zygotes.pop(next(iter(_zygotes))).stop()
        log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop(), with the zygote)
        z = _Zygote(subprocess.Popen([sys.executable, "-c", _ZYGOTE], env=base, bufsize=0,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log), log)
        _zygotes[key] = z
    return z


def run_python(argv: list[str], env: Mapping[str, str], cwd: Path, out: Path, err: Path,
               timeout: float = 300) -> int:
    """``python ARGV`` (``-c CODE …`` or ``PROGRAM …``) in ``cwd`` under ``env``, its stdout
    and stderr written to ``out`` and ``err``: its exit code. A fork of the zygote for ``env``
    (above), or a fresh Python under DYNCLI_TEST_FRESH_PYTHON=1. ``ImportTimeEnvironment``
    when the program set a variable torch's import read (pass it in ``env`` instead)."""
    if os.environ.get("DYNCLI_TEST_FRESH_PYTHON") == "1":
        with open(out, "wb") as o, open(err, "wb") as e:
            return subprocess.run([sys.executable, *argv], env=dict(env), cwd=cwd, stdout=o,
                                  stderr=e, stdin=subprocess.DEVNULL, timeout=timeout,
                                  check=False).returncode
    z = _zygote(env)
    assert z.proc.stdin is not None
    try:
        z.proc.stdin.write(json.dumps({"argv": argv, "env": dict(env), "cwd": str(cwd),
                                       "out": str(out), "err": str(err)}).encode() + b"\n")
    except BrokenPipeError:
        raise RuntimeError(z.why_ended()) from None
    pid = z.answer(120)["pid"]
    try:
        done = z.answer(timeout)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        z.answer(30)
        raise subprocess.TimeoutExpired(argv, timeout) from None
    if done["changed"]:
        names = ", ".join(done["changed"])
        program = "python -c CODE" if argv[0] == "-c" else f"python {argv[0]}"
        held = ", ".join(f"{n}={env[n]!r}" if n in env else f"{n} unset" for n in done["changed"])
        raise ImportTimeEnvironment(
            f"{program} set {names} before importing torch, which reads it as it is imported; "
            f"the zygote imported torch with {held}, and the program would have run with that. "
            "Pass it in the call's env (a zygote of its own imports torch under it), or set "
            "DYNCLI_TEST_FRESH_PYTHON=1")
    rc: int = done["rc"]
    return rc


def run_variants(programs: Mapping[str, str | Script], where: Path, logs: str = "",
                 env: Mapping[str, str] | None = None) -> dict[str, Variant]:
    """Run ``programs`` (name: code for ``python -c``, or a Script) one after another in one
    Python under TORCH_LOGS=``logs`` and ``env`` (as run_logged), in ``where``, each from a
    reset dynamo; each one's stderr in ``where``/NAME.log. A variant that raises is ``raised``; the process itself must not fail."""
    mark = f"--- dyncli variant {os.getpid()} {id(programs)} ---"
    codes = where / "variants.json"
    codes.write_text(json.dumps([
        [p, "<string>", ["-c"]] if isinstance(p, str)
        else [p.path.read_text(), str(p.path), [str(p.path), *p.args]]
        for p in programs.values()]))
    runner = where / "variants_runner.py"
    runner.write_text(_RUNNER)
    argv = [str(runner), str(codes), mark]
    out, err = where / ".variants.stdout", where / ".variants.stderr"
    rc = run_python(argv, _environment(logs, env), where, out, err)
    ran = subprocess.CompletedProcess(argv, rc, out.read_text(errors="replace"),
                                      err.read_text(errors="replace"))
    assert ran.returncode == 0, ran.stderr[-4000:]
    outs = ran.stdout.split(mark + "\n")
    errs = ran.stderr.split(mark + "\n")
    assert len(outs) == len(programs) + 2 and len(errs) == len(programs) + 1, ran.stderr[-4000:]
    failed = set(json.loads(outs[-1]))
    result = {}
    for i, name in enumerate(programs):
        log = where / f"{name}.log"
        log.write_text((errs[0] if i == 0 else "") + errs[i + 1])  # the first: what came before it (import's, in a fresh Python)
        result[name] = Variant(outs[i + 1], log, i in failed)
    return result

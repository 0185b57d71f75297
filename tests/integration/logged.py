"""A program run as a user runs it, its stderr the log diagnose reads (the fix tests' one way)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# A program's lines that count the graphs dynamo hands a backend (``backend=backend``, then
# ``len(graphs)``): the fix tests' programs print the count beside their result.
COUNTING_BACKEND = """graphs = []
def backend(gm, example_inputs):  # counts the graphs dynamo hands a backend
    graphs.append(gm)
    return gm.forward
"""


def _environment(logs: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """This environment under TORCH_LOGS=``logs`` (empty: unset) and ``env``, one OpenMP
    thread."""
    full = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"} | {"OMP_NUM_THREADS": "1"}
    if logs:
        full["TORCH_LOGS"] = logs
    return full | dict(env or {})


def run_logged(code: str, log: Path, logs: str = "", env: Mapping[str, str] | None = None,
               check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (``python -c``) under TORCH_LOGS=``logs`` (empty: unset, torch's default
    warnings: torch 2.15 fails to import under an empty TORCH_LOGS) and ``env``, one OpenMP
    thread, its stderr written to ``log``; its stdout as text."""
    with open(log, "wb") as err:
        return subprocess.run([sys.executable, "-c", code], env=_environment(logs, env),
                              stderr=err, stdout=subprocess.PIPE, text=True, check=check,
                              timeout=300)


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
class Script:
    """A program in a file, run as ``python PATH ARGS``: its frames name the file."""

    path: Path
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Variant:
    """One variant's run: its stdout, its stderr (the log, in ``log``), whether it raised."""

    stdout: str
    log: Path
    raised: bool

    @property
    def text(self) -> str:
        return self.log.read_text()


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
    ran = subprocess.run([sys.executable, str(runner), str(codes), mark],
                         env=_environment(logs, env), capture_output=True, text=True,
                         timeout=300, check=False, cwd=where)
    assert ran.returncode == 0, ran.stderr[-4000:]
    outs = ran.stdout.split(mark + "\n")
    errs = ran.stderr.split(mark + "\n")
    assert len(outs) == len(programs) + 2 and len(errs) == len(programs) + 1, ran.stderr[-4000:]
    failed = set(json.loads(outs[-1]))
    result = {}
    for i, name in enumerate(programs):
        log = where / f"{name}.log"
        log.write_text((errs[0] if i == 0 else "") + errs[i + 1])  # the first: import's too
        result[name] = Variant(outs[i + 1], log, i in failed)
    return result

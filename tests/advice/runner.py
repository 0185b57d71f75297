"""Run corpus programs in ONE process, with a log level, a trace, PGO, or a fix applied.

``python tests/advice/runner.py JOBS.json RESULTS.json``: JOBS is a list of jobs, each

- ``program``: a name of ``corpus.PROGRAMS``;
- ``level``: ``none`` (torch's default warnings), ``recompiles`` or ``full``
  (``+dynamic,recompiles,graph_breaks,guards``), written to ``log`` (TORCH_LOGS_OUT);
- ``trace``: a TORCH_TRACE directory for this run; ``pgo``: ``[cache_dir, job_id]``;
- ``env``: ``{NAME: value}``: environment variables of a fix, applied as torch reads them
  (the config entry whose ``env_name_default``/``env_name_force`` is NAME, read at import);
- ``config``: ``[[module, attr, python literal], ...]``: config lines of a fix;
- ``compile``: ``{name: python literal}``: torch.compile arguments of a fix (``dynamic``),
  replacing the program's own;
- ``python``: the python form of a fix: module-level lines run once, ``# FILE:LINE FUNC:``
  blocks run on the arguments of every call of FUNC (names bound as FUNC's parameters,
  ``args``/``kwargs`` too), as the comment tells a user;
- ``save``/``compare``: a file for the outputs (the baseline) / to compare the outputs with.

Each job starts from a reset dynamo (``torch._dynamo.reset()``: "as if you had started a fresh
process"), fresh counters and no config patches, so jobs are independent. A result row has
``compiles`` (graphs handed to the backend), ``frames`` (torch's ``frames.ok`` counter),
``error``, ``equal`` and, for PGO runs, ``torch_hint``: the allow-list torch's own
``render_code_state`` prints for the state.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import os
import re
import sys
import time
import traceback
from contextlib import ExitStack
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch._dynamo
import torch._logging._internal as log_internal
import torch._logging.structured as structured
from torch._dynamo import pgo
from torch._dynamo.utils import counters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PROGRAMS

CONFIG_MODULES = ("torch.compiler.config", "torch._dynamo.config", "torch._inductor.config",
                  "torch.fx.experimental._config")
LEVELS: dict[str, dict[str, Any]] = {
    "none": {},
    "recompiles": {"recompiles": True},
    "verbose": {"recompiles_verbose": True},
    "full": {"dynamic": logging.DEBUG, "recompiles": True, "graph_breaks": True, "guards": True},
}
_ENVIRON_RE = re.compile(r"^os\.environ\[(?P<name>'[^']*'|\"[^\"]*\")\] = (?P<value>.+)$")
_BLOCK_RE = re.compile(r"^# (?P<file>.+):(?P<line>\d+) (?P<fn>[\w<>.]+): before calling it")


def _env_config(name: str) -> tuple[Any, str, Any] | None:
    """(module, attr, default) of the config entry torch reads from environment variable NAME.

    Read from the config module's own ``Config(env_name_default=…/env_name_force=…)``
    declarations: torch reads the variable once, at import, so the runner sets the entry.
    """
    for modname in CONFIG_MODULES:
        mod = importlib.import_module(modname)
        tree = ast.parse(Path(mod.__file__).read_text())
        for node in tree.body:
            value = getattr(node, "value", None)
            target = (node.targets[0] if isinstance(node, ast.Assign) else
                      node.target if isinstance(node, ast.AnnAssign) else None)
            if not (isinstance(value, ast.Call) and isinstance(target, ast.Name)
                    and getattr(value.func, "id", "") == "Config"):
                continue
            for kw in value.keywords:
                if kw.arg in ("env_name_default", "env_name_force"):
                    names = [c.value for c in ast.walk(kw.value) if isinstance(c, ast.Constant)]
                    if name in names:
                        return mod, target.id, getattr(mod, target.id)
    return None


def _env_value(default: Any, text: str) -> Any:
    if isinstance(default, bool):
        return text.lower() in ("1", "true")
    if isinstance(default, int) and not isinstance(default, bool):
        return int(text)
    return text


class Ctx:
    """What a program sees: compile, call, config, restart."""

    def __init__(self, job: dict[str, Any], stack: ExitStack) -> None:
        self.job, self.stack = job, stack
        self.compiles = 0
        self.outputs: list[torch.Tensor] = []
        self.targets: dict[int, Any] = {}
        self.blocks: dict[str, list[str]] = {}
        self.module_lines: list[str] = []
        if job.get("python"):
            self._read_python(job["python"])

    def _read_python(self, text: str) -> None:
        current: list[str] | None = None
        for line in text.splitlines():
            m = _BLOCK_RE.match(line)
            if m:
                current = self.blocks.setdefault(m["fn"], [])
            elif not line.strip():
                current = None
            elif line.startswith("#") or line.startswith("import ") or _ENVIRON_RE.match(line):
                continue
            elif current is not None:
                current.append(line)
            else:
                self.module_lines.append(line)
        for line in self.module_lines:
            exec(line, {"torch": torch})

    def backend(self, gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        self.compiles += 1
        return gm.forward

    def compile(self, fn: Any, **kw: Any) -> Any:
        # a fix's torch.compile arguments replace the program's own
        kw.update({k: ast.literal_eval(v) for k, v in (self.job.get("compile") or {}).items()})
        compiled = torch.compile(fn, backend=self.backend, **kw)
        target = fn.forward if isinstance(fn, torch.nn.Module) else fn
        self.targets[id(compiled)] = target
        return compiled

    def config(self, module: str, attr: str, value: Any) -> None:
        self.stack.enter_context(importlib.import_module(module).patch(**{attr: value}))

    def restart(self) -> None:
        """A second process: PGO state written (torch does after each compile) and read back."""
        pgo.put_code_state()
        torch._dynamo.reset()

    def call(self, compiled: Any, *args: Any, **kwargs: Any) -> Any:
        target = self.targets[id(compiled)]
        for fn_name, lines in self.blocks.items():
            if fn_name in (target.__name__, "forward", "inner", "_call_impl", "__call__"):
                ns = {"torch": torch, "args": args, "kwargs": kwargs}
                try:
                    bound = inspect.signature(target).bind(*args, **kwargs)
                    ns.update(bound.arguments)
                except TypeError:
                    pass
                for line in lines:
                    exec(line, ns)
        out = compiled(*args, **kwargs)
        self.outputs.append(out.detach().clone())
        return out


def _switch_logs(level: str, log: str | None, trace: str | None) -> None:
    """TORCH_LOGS_OUT / TORCH_TRACE for this job, as a fresh process would set them up."""
    handler = log_internal.LOG_TRACE_HANDLER
    if handler is not None:
        handler.close()
        log_internal.trace_log.removeHandler(handler)
    log_internal.LOG_TRACE_HANDLER = None
    structured.INTERN_TABLE.clear()
    structured.DUMPED_FILES.clear()
    for name, value in (("TORCH_LOGS_OUT", log), ("TORCH_TRACE", trace)):
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
    torch._logging.set_logs(**LEVELS[level])


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)
    result: dict[str, Any] = {"program": job["program"], "error": None}
    _switch_logs(job.get("level", "none"), job.get("log"), job.get("trace"))
    with ExitStack() as stack:
        if job.get("pgo"):
            cache, job_id = job["pgo"]
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
            stack.enter_context(torch.compiler.config.patch(job_id=job_id))
        unknown = []
        env = dict(job.get("env") or {})
        # suggest's python form sets the unbacked/static lists as os.environ lines before
        # `import torch` (torch reads them once, at import): applied as torch reads them
        for line in (job.get("python") or "").splitlines():
            m = _ENVIRON_RE.match(line)
            if m:
                env[ast.literal_eval(m["name"])] = ast.literal_eval(m["value"])
        for name, value in env.items():
            found = _env_config(name)
            if found is None:
                unknown.append(name)
                continue
            mod, attr, default = found
            stack.enter_context(mod.patch(**{attr: _env_value(default, value)}))
        result["unknown_env"] = unknown
        for module, attr, literal in job.get("config") or ():
            stack.enter_context(importlib.import_module(module).patch(
                **{attr: ast.literal_eval(literal)}))
        ctx = Ctx(job, stack) if not job.get("python_error") else None
        fn = PROGRAMS[job["program"]][0]
        start = time.perf_counter()
        try:
            if ctx is None:
                raise RuntimeError(job["python_error"])
            fn(ctx)
        except Exception as e:  # the program raising is a result, not a crash
            result["error"] = f"{type(e).__name__}: {str(e)[:600]}"
            result["traceback"] = traceback.format_exc()[-2000:]
        result["seconds"] = round(time.perf_counter() - start, 3)
        result["torch_hint"] = _torch_hint()
    _switch_logs("none", None, None)
    if ctx is not None:
        result["compiles"] = ctx.compiles
        result["frames"] = int(counters["frames"]["ok"])
        if job.get("save"):
            torch.save(ctx.outputs, job["save"])
        if job.get("compare") and result["error"] is None:
            base = torch.load(job["compare"])
            result["equal"] = len(base) == len(ctx.outputs) and all(
                a.shape == b.shape and torch.allclose(a, b) for a, b in zip(base, ctx.outputs, strict=True))
    return result


def _torch_hint() -> str:
    """The TORCH_COMPILE_DYNAMIC_SOURCES value torch's render_code_state recommends, or ''."""
    state = pgo._CODE_STATE
    if not state:
        return ""
    text = pgo.render_code_state(state)
    m = re.search(r'TORCH_COMPILE_DYNAMIC_SOURCES="([^"]*)"', text)
    return m.group(1) if m else ""


def main() -> int:
    jobs = json.loads(Path(sys.argv[1]).read_text())
    out = []
    for job in jobs:
        out.append(run_job(job))
    Path(sys.argv[2]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Counting compiles and recompiles at the source. Every hook restores torch's state.

- :class:`CountingBackend` wraps inductor as ``torch.compile(model)`` runs it: each
  call is one graph handed to the compiler, i.e. one (re)compilation of a frame. One instance
  is used per strategy: dynamo checks the backend of cached entries, so a new callable for the
  same code would itself force a recompile ("BACKEND_MATCH failure" in torch 2.14).
- :func:`watch` snapshots ``torch._dynamo.utils.guard_failures`` — the reason strings dynamo
  stores for every guard that failed before a recompile (``guards.get_guard_fail_reason``) —
  and installs a logging handler on ``torch._dynamo.convert_frame`` to catch the
  "torch._dynamo hit config.recompile_limit" warning, after which dynamo silently runs the
  frame in eager mode.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

LIMIT_LOGGER = "torch._dynamo.convert_frame"
LIMIT_MARKER = "torch._dynamo hit config."


class CountingBackend:
    """A torch.compile backend that counts graphs and times the backend, then runs inductor."""

    def __init__(self, inner: Any = None) -> None:
        if inner is None:
            import torch

            # what torch.compile(model) itself runs (its default mode): not dynamo's registered
            # "inductor" backend, which (where it calls async_compile.maybe_warm_pool: 2.11,
            # 2.13, 2.14.1 and 2.15, not 2.4.1) starts inductor's pool of compile workers at
            # the first graph (each imports torch) where torch.compile(model) on CPU starts
            # none: 20 % more CPU per compiling process, charged to the strategy
            inner = torch._TorchCompileInductorWrapper(None, None, None)
        self._inner = inner
        self.compiles = 0
        self.attempts = 0
        self.backend_seconds = 0.0
        self.graph_sizes: list[int] = []
        self.graph_calls = 0  # calls of the graphs it returned: a call that ran none ran eager

    def __repr__(self) -> str:
        inner = self._inner
        name = getattr(inner, "__name__", None) or getattr(inner, "compiler_name", None)
        return f"CountingBackend({name or type(inner).__name__})"

    def count(self) -> int:
        """The graphs compiled so far (a callable for whoever polls it)."""
        return self.compiles

    def with_mode(self, mode: str, dynamic: bool | None) -> None:
        """Hand graphs to inductor as ``torch.compile(mode=mode, dynamic=dynamic)`` does: through
        the same wrapper torch builds for it (its mode's options as config patches — CUDA
        graphs, autotuning — and its ``reset`` of the CUDA-graph trees). A mode cannot be passed
        to a backend function: torch hands it on as a keyword inductor does not take."""
        import torch

        self._inner = torch._TorchCompileInductorWrapper(mode, None, dynamic)

    def reset(self) -> None:
        """What ``torch._dynamo.reset()`` asks of a backend: the inner one's reset, if any
        (inductor's under a CUDA-graph mode clears the CUDA-graph trees)."""
        reset = getattr(self._inner, "reset", None)
        if callable(reset):
            reset()

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        """Hand the graph to inductor; count it when inductor returns a compiled graph.

        An attempt that raises is not a compile: dynamo may catch the error and restart the
        analysis of the frame (seen with HF BERT under ``dynamic=True`` in torch 2.14: the
        backend is entered twice, one graph is installed). ``attempts`` counts those too.
        """
        self.attempts += 1
        t0 = time.perf_counter()
        try:
            out = self._inner(gm, example_inputs, **kwargs)
        finally:
            self.backend_seconds += time.perf_counter() - t0
        self.compiles += 1
        self.graph_sizes.append(len(getattr(getattr(gm, "graph", None), "nodes", ())))
        return self._counted(out)

    def _counted(self, graph: Any) -> Any:
        """``graph`` as dynamo will call it, each call counted in :attr:`graph_calls`.

        This is how bench knows, at the source, that a compiled callable ran eagerly: dynamo
        runs a frame without any compiled graph when it hit ``recompile_limit``, when it skips
        the frame, or (torch < 2.13, strategies side by side) when another strategy's entries
        filled the cache. One Python call per graph call (~0.1 us).
        """
        def run(*args: Any, **kwargs: Any) -> Any:
            self.graph_calls += 1
            return graph(*args, **kwargs)

        boxed = getattr(graph, "_boxed_call", None)  # a boxed graph takes its inputs as one list
        if boxed is not None:
            run._boxed_call = boxed  # type: ignore[attr-defined]
        return run


class _LimitHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # a malformed record must never break the benchmark
            return
        if msg.startswith(LIMIT_MARKER):
            self.messages.append(msg)


@dataclass
class Watch:
    """What :func:`watch` saw; :meth:`reasons_since` gives the new guard-failure reasons."""

    limit_messages: list[str] = field(default_factory=list)
    _seen: dict[Any, int] = field(default_factory=dict)

    def mark(self) -> None:
        """Remember how many reasons each code object has now."""
        from torch._dynamo.utils import guard_failures

        self._seen = {code: len(reasons) for code, reasons in guard_failures.items()}

    def reasons_since(self) -> list[str]:
        """Reasons recorded since the last :meth:`mark`, in order, then mark again."""
        from torch._dynamo.utils import guard_failures

        out: list[str] = []
        for code, reasons in list(guard_failures.items()):
            out.extend(str(r) for r in reasons[self._seen.get(code, 0):])
        self.mark()
        return out

    @property
    def limit_hit(self) -> bool:
        """Whether dynamo reported hitting ``recompile_limit`` (or another cache limit)."""
        return bool(self.limit_messages)


@contextmanager
def watch() -> Iterator[Watch]:
    """Collect recompile reasons and recompile-limit warnings; undo the hooks on exit.

    ``torch._dynamo.config.report_guard_failures`` is forced on inside (it is the default) so
    reasons are recorded, and restored afterwards.
    """
    import torch._dynamo.config as dynamo_config

    handler = _LimitHandler()
    logger = logging.getLogger(LIMIT_LOGGER)
    old_level = logger.level
    old_report = dynamo_config.report_guard_failures
    result = Watch(limit_messages=handler.messages)
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    dynamo_config.report_guard_failures = True
    try:
        result.mark()
        yield result
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        dynamo_config.report_guard_failures = old_report


def clean_reason(reason: str) -> str:
    """A recompile reason without its ``[0/1]: `` compile-id prefix and stack trace tail."""
    text = reason.split("\nUser stack trace:", 1)[0].strip()
    head, sep, tail = text.partition(": ")
    if sep and head.count("/") == 1 and head.replace("/", "").replace("_", "").isdigit():
        return tail
    return text


def settle_compile_workers(timeout: float = 60.0) -> float:
    """Wait until inductor's compile-worker pool, if one is starting, is ready; seconds waited.

    At its first compile inductor starts worker subprocesses in the background (each imports
    torch). On a small machine that start-up steals the CPU for a while, and the calls timed
    right after a compile ran 10-100x slower in our measurements. Waiting here keeps that out
    of the timed reps; the caller counts the wait as compile time
    (:func:`~dyncli.bench.torch_compat.wait_compile_workers`: a no-op when the pool was never
    created, and before torch 2.9, which cannot wait for it).
    """
    from dyncli.bench import torch_compat

    t0 = time.perf_counter()
    with contextlib.suppress(Exception):  # a private API: never let it break a benchmark
        torch_compat.wait_compile_workers(timeout)
    return time.perf_counter() - t0


def code_modules() -> int:
    """How many output-code modules inductor has loaded in this process (a mark for
    :func:`sources_since`); 0 where torch keeps no such list."""
    with contextlib.suppress(Exception):  # PyCodeCache is inductor's: never break a benchmark
        from torch._inductor.codecache import PyCodeCache

        return len(PyCodeCache.modules)
    return 0


def sources_since(mark: int) -> list[str]:
    """The text of the output-code modules inductor loaded after ``mark`` (its generated
    Python, with its C++ kernels' source inside); [] where it cannot be read. A module it had
    loaded before from the same file is not listed again (``modules_no_attr``, torch 2.15)."""
    out: list[str] = []
    with contextlib.suppress(Exception):
        from pathlib import Path

        from torch._inductor.codecache import PyCodeCache

        for mod in PyCodeCache.modules[mark:]:
            path = getattr(mod, "__file__", None)
            if path:
                out.append(Path(path).read_text(encoding="utf-8", errors="replace"))
    return out

"""The compile caches a strategy's compiles start from, and the hits torch counts. Needs torch.

:func:`scope` is the one way bench gives a strategy its caches (its measurement, a profiling
pass, a probe, a replay): under ``fresh`` directories of bench's own, empty, set where torch
and Triton read them —

- ``TORCHINDUCTOR_CACHE_DIR``: inductor's FX graph cache (``fxgraph/``), the AOTAutograd cache
  (``aotautograd/``), compiled kernels (C++ ``.so``, Triton ``.py``), autotuning results
  (``.best_config`` beside each kernel, the ``select_algorithm`` cache) and PGO state
  (``dynamo/``): inductor reads the variable at every use
  (:func:`~dyncli.bench.torch_compat.inductor_cache_dir`);
- ``TRITON_CACHE_DIR``: Triton's compiled kernels (by default under inductor's directory since
  inductor sets it, else ``~/.triton/cache``);

inductor's in-memory caches cleared on the way in and out
(:func:`~dyncli.bench.torch_compat.clear_caches`: loaded kernel modules, autotuning choices),
and its remote caches (FX graph, autotuning, AOTAutograd: only on when the user turned them
on) off inside.
That is what torch's own ``fresh_cache`` does (``fresh_inductor_cache`` in 2.4-2.7), with
directories named for the strategy and the remote caches added. Under ``warm`` nothing
changes: the user's directories as found (:func:`state` says where).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dyncli.bench import torch_compat
from dyncli.bench.core import caches as core
from dyncli.bench.core.caches import CacheState

ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
# inductor/functorch config flags of the remote caches, where the running torch has them
_REMOTE = (("torch._inductor.config", "fx_graph_remote_cache"),
           ("torch._inductor.config", "autotune_remote_cache"),
           ("torch._inductor.config", "bundled_autotune_remote_cache"),
           ("torch._functorch.config", "enable_remote_autograd_cache"))


def hits() -> dict[str, int]:
    """torch's cache-hit counters now (:data:`dyncli.bench.core.caches.COUNTED`)."""
    from torch._dynamo.utils import counters

    return {c.name: int(counters[c.group][c.key]) for c in core.COUNTED}


def state(fresh: bool) -> CacheState:
    """The state the strategies start from: fresh, or the user's directories (warm)."""
    if fresh:
        return CacheState(core.FRESH)
    inductor = torch_compat.inductor_cache_dir()  # what torch's first compile would set
    triton = os.environ.get("TRITON_CACHE_DIR") or os.path.join(inductor, "triton")
    return CacheState(core.WARM, inductor, triton)


@contextlib.contextmanager
def _remote_off() -> Iterator[None]:
    import importlib

    stack = contextlib.ExitStack()
    with stack:
        for module, key in _REMOTE:
            try:
                config: Any = importlib.import_module(module)
            except ImportError:
                continue
            if hasattr(config, key):
                stack.enter_context(config.patch(key, False))
        yield


@contextlib.contextmanager
def scope(strategy: str, fresh: bool, seed: Path | None = None) -> Iterator[Path | None]:
    """``strategy``'s caches for the block: its own empty directories under ``fresh`` (or when
    ``seed``, a PGO state directory copied into ``dynamo/``), else the user's as found.

    Yields the inductor directory (None: the user's). The directories are removed after.
    """
    if not fresh and seed is None:
        yield None
        return
    root = make_dir(strategy, seed)
    try:
        with pointed(root):
            yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def make_dir(strategy: str, seed: Path | None = None, kind: str = "cache") -> Path:
    """A new empty cache directory named for ``strategy`` (``seed`` copied into ``dynamo/``)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", strategy)[:40]
    root = Path(tempfile.mkdtemp(prefix=f"dyncli-{kind}-{slug}-"))
    if seed is not None:
        shutil.copytree(seed, root / "dynamo", dirs_exist_ok=True)
    return root


@contextlib.contextmanager
def pointed(root: Path | None) -> Iterator[None]:
    """torch and Triton pointed at ``root`` for the block (None: the user's directories, left
    as found), inductor's in-memory caches cleared on the way in and out (kernels loaded for
    another strategy would serve this one's compiles) and, under ``root``, remote caches off.
    The environment is restored after; ``root`` is left for the caller to remove."""
    saved = {k: os.environ.get(k) for k in ENV}
    if root is not None:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root)
        os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    torch_compat.clear_caches()
    try:
        with _remote_off() if root is not None else contextlib.nullcontext():
            yield
    finally:
        torch_compat.clear_caches()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

"""Every difference between the torch releases bench runs on, in one place.

bench supports torch 2.4 and later (``OLDEST``; docs/torch-versions.md has the survey: each
release's own source, read from its wheel, and the integration tests run on it). The engine
asks this module instead of reaching for an API that moved or is missing in older releases:
one function per difference, with the release it is for in its docstring. torch is imported
inside the functions, never at module level: importing this module, :func:`parse` and
:func:`recompile_limit_setting` with a version need no torch.

What a release lacks is said, not worked around with a guess: a strategy whose API is missing
is ``not_applicable`` with the release it needs (its row's ``needs_torch`` in
:mod:`dyncli.bench.core.strategy`), and where torch cannot do something at all (keep
strategies' compiles apart in one process before 2.13) the function says so by returning
False and the caller decides.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from dyncli.bench.core import strategy as table

Version = tuple[int, int]

OLDEST: Version = (2, 4)  # the oldest release CI proves (.ci/constraints-oldest.txt)


def parse(version: str) -> Version | None:
    """``"2.11.0+cu130"`` → ``(2, 11)``; None when the text is no torch version."""
    got = table.release(version)
    return None if got == (0, 0) else got


def installed() -> Version:
    """The running torch's (major, minor)."""
    return parse(installed_text()) or OLDEST


def installed_text() -> str:
    """The running torch's version as torch says it (``2.11.0+cu130``)."""
    import torch

    return str(torch.__version__)


def strategy_unsupported(strategy: str, version: str | None = None) -> str | None:
    """Why ``strategy`` cannot run on this torch (``not_applicable``), or None when it can: the
    release its row of the strategy table needs (``needs_torch``, read from each release's
    source: docs/torch-versions.md). ``version`` defaults to the installed torch."""
    why = table.unsupported(table.find(strategy), version or installed_text())
    return f"{strategy} {why}" if why else None  # a sentence that stands alone


def fresh_cache() -> AbstractContextManager[Any]:
    """An empty inductor cache for the block: ``torch._inductor.utils.fresh_cache`` (2.8), named
    ``fresh_inductor_cache`` in 2.4-2.7 (the same context manager: a temporary
    ``TORCHINDUCTOR_CACHE_DIR`` and ``TRITON_CACHE_DIR``, in-memory caches cleared around it)."""
    from torch._inductor import utils

    fresh: Callable[[], AbstractContextManager[Any]] = (
        getattr(utils, "fresh_cache", None) or utils.fresh_inductor_cache)
    return fresh()


def clear_caches() -> None:
    """Clear inductor's in-memory code caches: ``torch._inductor.utils.clear_caches`` (2.8),
    ``clear_inductor_caches`` in 2.4-2.7."""
    from torch._inductor import utils

    clear: Callable[[], None] = (getattr(utils, "clear_caches", None)
                                 or utils.clear_inductor_caches)
    clear()


def inductor_cache_dir() -> str:
    """The directory inductor's first compile would use (``TORCHINDUCTOR_CACHE_DIR`` or its
    default): ``torch._inductor.runtime.cache_dir_utils.cache_dir`` (2.9),
    ``runtime_utils.cache_dir`` in 2.4-2.8."""
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir  # 2.9 on
    except ImportError:  # 2.4-2.8
        from torch._inductor.runtime.runtime_utils import cache_dir
    return str(cache_dir())


def can_isolate_recompiles() -> bool:
    """Whether ``torch.compile(..., isolate_recompiles=True)`` exists (2.13).

    With it, each compiled callable's cache entries sit in their own region of every code
    object's cache: one strategy's entries neither serve another's calls nor count against its
    recompile limit. Before 2.13 strategies compiled in one process share one limit (item 1
    of issue #32): only separate processes, or ``torch._dynamo.reset()`` between them, keep
    them apart.
    """
    import inspect

    import torch

    try:
        return "isolate_recompiles" in inspect.signature(torch.compile).parameters
    except (TypeError, ValueError):  # pragma: no cover - a signature torch cannot give
        return False


def isolate_kwargs() -> dict[str, Any]:
    """``torch.compile`` keyword arguments for a compile in its own recompile region:
    ``{"isolate_recompiles": True}`` on 2.13 and later, nothing before (no such region)."""
    return {"isolate_recompiles": True} if can_isolate_recompiles() else {}


def reset_code_state() -> bool:
    """Forget automatic dynamic's size memory (and PGO's), keeping compiled code:
    ``torch._dynamo.pgo.reset_code_state()`` (2.6).

    Before 2.6 that memory is each code object's ``frame_state``, kept beside its compiled
    code and cleared only by ``torch._dynamo.reset()``: returns False there (nothing cleared).
    """
    try:
        from torch._dynamo import pgo
    except ImportError:
        return False
    pgo.reset_code_state()
    return True


def code_state() -> Any:
    """The automatic-dynamic/PGO state torch holds now (``torch._dynamo.pgo._CODE_STATE``,
    2.6; None before)."""
    try:
        from torch._dynamo import pgo
    except ImportError:
        return None
    return pgo._CODE_STATE


def set_code_state(state: Any) -> None:
    """Put back what :func:`code_state` returned (None: torch loads it at its next use).
    A no-op before 2.6."""
    try:
        from torch._dynamo import pgo
    except ImportError:
        return
    pgo._CODE_STATE = state


def pgo_state_loaded() -> bool:
    """Whether torch loaded PGO state from disk at its first use (``pgo._INIT_CODE_STATE``,
    2.6; False before, where there is no PGO)."""
    try:
        from torch._dynamo import pgo
    except ImportError:
        return False
    return getattr(pgo, "_INIT_CODE_STATE", None) is not None


def stance_examples() -> Any:
    """The ``eager_then_compile`` stance's example inputs per code location
    (``torch._dynamo.eval_frame._EXAMPLE_INPUTS``, 2.7; None before, where there is no such
    stance). ``torch._dynamo.reset()`` does not clear them."""
    import torch._dynamo.eval_frame as eval_frame

    return getattr(eval_frame, "_EXAMPLE_INPUTS", None)


def set_stance_examples(examples: Any) -> None:
    """Put back (or, with None, clear) the stance's example inputs. A no-op before 2.7."""
    import torch._dynamo.eval_frame as eval_frame

    if hasattr(eval_frame, "_EXAMPLE_INPUTS"):
        eval_frame._EXAMPLE_INPUTS = examples


def wait_compile_workers(timeout: float) -> None:
    """Block until inductor's compile-worker pool, if one is starting, is ready (private
    APIs): ``AsyncCompile.wait_process_pool_ready`` (2.14 on), ``AsyncCompile.wait_pool_ready``
    (2.9-2.13; 2.14 and 2.15 keep it). Read in each release's ``_inductor/async_compile.py``:
    2.4.1, 2.6.0 and 2.8.0 have neither, so there it returns at once (the pool warms up on its
    own; compile times may carry its start). torch 2.11, which GPU images ship, has only
    ``wait_pool_ready``: bench did not wait there, so one strategy's compiles could meet the
    pool still starting (a worker per core, each importing torch) where a later one's, or its
    replay's, met it ready."""
    from torch._inductor import async_compile

    if not getattr(async_compile, "_pool_set", None):
        return
    cls = async_compile.AsyncCompile
    wait = getattr(cls, "wait_process_pool_ready", None) or getattr(cls, "wait_pool_ready", None)
    if wait is not None:
        wait(timeout=timeout)


# transformers needs a newer torch as it goes on (its import_utils): 5.0 torch 2.2, 5.1-5.14
# torch 2.4, 5.15-5.19 torch 2.5, 5.20 on torch 2.6. pip installs the newest whatever the torch,
# and an older torch then makes transformers hide every model class.
TRANSFORMERS_HINT = ("On torch 2.4 install transformers<5.15, on torch 2.5 transformers<5.20 "
                     "(pip install 'transformers<5.15'); or a newer torch")


def transformers_refuses_torch() -> str | None:
    """Why the installed transformers will not run this torch's models, or None when it will.

    transformers checks the torch release at import (5.20: torch >= 2.6) and, below it, hides
    its model classes behind placeholders that raise at first use.
    """
    import transformers
    from transformers.utils import is_torch_available

    if is_torch_available():
        return None
    import torch

    return (f"transformers {transformers.__version__} does not run on torch "
            f"{torch.__version__}: it needs a newer torch (hf: models)")


def recompile_limit_setting(version: str | None = None) -> str:
    """The config that bounds recompiles per code object: ``torch._dynamo.config.
    recompile_limit`` (2.7), ``cache_size_limit`` in 2.4-2.6 (2.7 keeps it as an alias).
    Torch-free with ``version`` (e.g. a result's ``environment.torch``)."""
    have = installed() if version is None else parse(version)
    name = "recompile_limit" if have is None or have >= (2, 7) else "cache_size_limit"
    return f"torch._dynamo.config.{name}"

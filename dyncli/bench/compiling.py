"""A plan compiled as bench measures it, and the torch state between strategies. Needs torch.

:func:`compile_plan` is ``torch.compile(model, **plan.compile_kwargs())`` with bench's
:class:`~dyncli.bench.compile_watch.CountingBackend` in place of the plan's backend name (and,
when strategies must keep their compiled code side by side, a recompile region of its own),
wrapped by :func:`dyncli.bench.served.wrap` — the per-call code ``--emit python`` writes. So a
strategy's config, stance, marks and padding reach the measured calls exactly as they reach a
served model.

Between strategies either everything is reset (:func:`fresh_start`, the sequential drivers) or
only what one strategy learnt about sizes (:func:`forget_sizes`, the same-window driver).
"""

from __future__ import annotations

from typing import Any

from dyncli.bench import served
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.measured import ISOLATION_TORCH

__all__ = ["ISOLATION_TORCH", "compile_plan", "fresh_start", "isolation_available"]


def compile_plan(model: Any, plan: Plan, backend: Any, isolated: bool = False) -> Any:
    """The callable that serves ``model`` as ``plan`` says, compiled through ``backend``."""
    import torch

    kwargs = plan.compile_kwargs()
    if not kwargs:  # eager
        return model
    kwargs["backend"] = backend
    compile_fn: Any = torch.compile  # its typed overloads omit isolate_recompiles (2.14, 2.15)
    if isolated:
        try:
            compiled = compile_fn(model, isolate_recompiles=True, **kwargs)
        except TypeError:  # a torch without isolate_recompiles (< 2.13)
            compiled = compile_fn(model, **kwargs)
    else:
        compiled = compile_fn(model, **kwargs)
    return served.wrap(compiled, plan.as_dict())


def isolation_available() -> bool:
    """Whether this torch keeps strategies' compiled code apart in one process (>= 2.13)."""
    import inspect

    import torch

    try:
        return "isolate_recompiles" in inspect.signature(torch.compile).parameters
    except (TypeError, ValueError):
        return False


def fresh_start() -> None:
    """``torch._dynamo.reset()`` and the state it leaves behind: a strategy starts from none.

    torch 2.14 keeps the ``eager_then_compile`` stance's example inputs per code location in a
    module global that ``reset()`` does not clear: a second run would compile at its first call.
    """
    import torch._dynamo
    import torch._dynamo.eval_frame as eval_frame

    torch._dynamo.reset()
    if hasattr(eval_frame, "_EXAMPLE_INPUTS"):
        eval_frame._EXAMPLE_INPUTS = None


def forget_sizes() -> None:
    """Clear what one strategy learnt about sizes, keeping every strategy's compiled code.

    Three places (torch 2.14.1 and 2.15.0): automatic dynamic's ``CodeId``-keyed state (and
    PGO's) in ``torch._dynamo.pgo``; the ``"dynamism"`` that ``eager_then_compile`` stores per
    code object in ``torch._dynamo.code_context`` (``eval_frame._create_delayed_compile_callback``):
    left there, every later strategy's first compile of the model came out dynamic (a pgo cold
    pass compiled 2 graphs instead of 3 after eager-then-compile); and the stance's example
    inputs.
    """
    import importlib.util

    import torch._dynamo.eval_frame as eval_frame

    if importlib.util.find_spec("torch._dynamo.pgo") is not None:  # 2.6 on (before: none)
        from torch._dynamo import pgo

        pgo.reset_code_state()
    take_dynamism()
    if hasattr(eval_frame, "_EXAMPLE_INPUTS"):
        eval_frame._EXAMPLE_INPUTS = None


def _contexts() -> dict[int, Any]:
    from torch._dynamo.code_context import code_context

    values = getattr(getattr(code_context, "code_context", None), "values", None)
    return values if isinstance(values, dict) else {}


def take_dynamism() -> dict[int, Any]:
    """Remove eager_then_compile's per-code ``dynamism`` everywhere; what was there, by code id."""
    out = {}
    for idx, ctx in _contexts().items():
        if isinstance(ctx, dict) and "dynamism" in ctx:
            out[idx] = ctx.pop("dynamism")
    return out


def give_dynamism(saved: dict[int, Any]) -> None:
    """Put back what :func:`take_dynamism` took."""
    contexts = _contexts()
    for idx, dyn in saved.items():
        if isinstance(contexts.get(idx), dict):
            contexts[idx]["dynamism"] = dyn

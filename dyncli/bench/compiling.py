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

from dyncli.bench import served, torch_compat
from dyncli.bench.core.apply import Plan


def compile_plan(model: Any, plan: Plan, backend: Any, isolated: bool = False) -> Any:
    """The callable that serves ``model`` as ``plan`` says, compiled through ``backend``."""
    import torch

    kwargs = plan.compile_kwargs()
    if not kwargs:  # eager
        return model
    mode = kwargs.pop("mode", None)
    if mode is not None:  # the counting backend runs inductor as torch.compile(mode=) does
        backend.with_mode(mode, kwargs.get("dynamic"))
    kwargs["backend"] = backend
    compile_fn: Any = torch.compile  # its typed overloads omit isolate_recompiles (2.14, 2.15)
    if isolated:  # a recompile region of its own where torch has one (2.13)
        kwargs.update(torch_compat.isolate_kwargs())
    compiled = compile_fn(model, **kwargs)
    return served.wrap(compiled, plan.as_dict())


def fresh_start() -> None:
    """``torch._dynamo.reset()`` and the state it leaves behind: a strategy starts from none.

    torch (2.7 on) keeps the ``eager_then_compile`` stance's example inputs per code location
    in a module global that ``reset()`` does not clear: a second run would compile at its first
    call.
    """
    import torch._dynamo

    torch._dynamo.reset()
    torch_compat.set_stance_examples(None)


def forget_sizes() -> None:
    """Clear what one strategy learnt about sizes, keeping every strategy's compiled code.

    Three places (torch 2.14.1 and 2.15.0): automatic dynamic's ``CodeId``-keyed state (and
    PGO's) in ``torch._dynamo.pgo``; the ``"dynamism"`` that ``eager_then_compile`` stores per
    code object in ``torch._dynamo.code_context`` (``eval_frame._create_delayed_compile_callback``):
    left there, every later strategy's first compile of the model came out dynamic (a pgo cold
    pass compiled 2 graphs instead of 3 after eager-then-compile); and the stance's example
    inputs.
    """
    torch_compat.reset_code_state()  # before torch 2.6 only a reset clears that memory
    take_dynamism()
    torch_compat.set_stance_examples(None)


def between(isolated: bool) -> None:
    """After a strategy's pass: where strategies keep their compiled code side by side
    (``isolated``, the same-window driver) only what it learnt about sizes is cleared
    (:func:`forget_sizes`: a reset would drop every strategy's code before it); else everything
    (:func:`fresh_start`)."""
    if isolated:
        forget_sizes()
    else:
        fresh_start()


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

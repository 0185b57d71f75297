"""How a model is compiled under each strategy, and the eager/compiled step for a mode.

- ``static``       ``torch.compile(dynamic=False)``: one graph per distinct shape.
- ``automatic``    plain ``torch.compile``: static first, then a dim that changed is made
                   dynamic on the recompile (automatic dynamic shapes) — two compiles.
- ``mark-dynamic`` plain ``torch.compile`` plus ``torch._dynamo.maybe_mark_dynamic`` on the
                   varied dims of every input (what the harness's ``--dynamic-batch-only`` does).
- ``dynamic``      ``torch.compile(dynamic=True)``: every dim symbolic from the first compile.
- ``sources``      plain ``torch.compile`` with ``torch.compiler.config.dynamic_sources`` set to
                   ``bench.dynamic_sources`` (``TORCH_COMPILE_DYNAMIC_SOURCES``): the allow-list
                   that ``dyncli suggest`` writes, measured before it is deployed.
- ``collectives``  ``automatic`` with ``torch._dynamo.config.enable_compiler_collectives``:
                   under torch.distributed the ranks agree on which dims are dynamic, so one
                   rank's new shape recompiles every rank once instead of ranks diverging
                   (``--nproc`` >= 2 only).
- ``pad``          ``torch.compile(dynamic=False)`` on inputs padded up to the next bucket
                   (``bench.buckets``); outputs sliced back (see :mod:`dyncli.bench.padding`).
- ``unbacked``     plain ``torch.compile`` with ``torch._dynamo.config.
                   automatic_dynamic_shapes_mark_as = "unbacked"``: a dim that changes becomes
                   unbacked, not backed, so sizes 0 and 1 are not specialized.
- ``eager-then-compile`` plain ``torch.compile`` under ``torch.compiler.set_stance(
                   "eager_then_compile")``: the first call runs eager, the compile at the second
                   sees two examples and marks what differed dynamic.
- ``pgo``          plain ``torch.compile`` with local PGO under a job id: a cold pass writes the
                   profile, the measured warm pass starts from it (the runner does the passes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from dyncli.bench.core.shapes import DimPlan
from dyncli.config import STRATEGIES

DYNAMIC_ARG: dict[str, bool | None] = {"static": False, "automatic": None,
                                       "mark-dynamic": None, "dynamic": True, "sources": None,
                                       "collectives": None, "pad": False, "unbacked": None,
                                       "eager-then-compile": None, "pgo": None}
assert set(DYNAMIC_ARG) == set(STRATEGIES)


def compile_model(model: Any, strategy: str, backend: Any) -> Any:
    """``torch.compile`` the model for a strategy (after ``torch._dynamo.reset()``)."""
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    return torch.compile(model, backend=backend, dynamic=DYNAMIC_ARG[strategy])


@contextmanager
def _eager_then_compile() -> Iterator[None]:
    import torch

    from dyncli.bench import torch_compat

    # torch (2.7 on) keeps the stance's example inputs per code location in a module global that
    # torch._dynamo.reset() does not clear: a second run would compile at its first call.
    torch_compat.set_stance_examples(None)
    try:
        with torch.compiler.set_stance("eager_then_compile"):
            yield
    finally:
        torch_compat.set_stance_examples(None)


@contextmanager
def _pgo(job_id: str) -> Iterator[None]:
    import torch._dynamo.config as dynamo_config
    import torch.compiler

    # Local PGO only: the profile lives under the inductor cache dir as dynamo/code_state_*.pkl.
    job: AbstractContextManager[Any] = torch.compiler.config.patch(  # type: ignore[attr-defined]
        job_id=job_id)
    with job, dynamo_config.patch(automatic_dynamic_local_pgo=True,
                                  automatic_dynamic_remote_pgo=False):
        yield


def strategy_config(strategy: str, sources: list[str],
                    job_id: str | None = None) -> AbstractContextManager[Any]:
    """torch config a strategy runs under, restored on exit (``sources``: the allow-list)."""
    if strategy == "collectives":
        import torch._dynamo.config as dynamo_config

        # Read in dynamo's OutputGraph while tracing: one gather of every rank's decisions.
        collectives: AbstractContextManager[Any] = dynamo_config.patch(
            enable_compiler_collectives=True)
        return collectives
    if strategy == "unbacked":
        import torch._dynamo.config as dynamo_config

        unbacked: AbstractContextManager[Any] = dynamo_config.patch(
            automatic_dynamic_shapes_mark_as="unbacked")
        return unbacked
    if strategy == "eager-then-compile":
        return _eager_then_compile()
    if strategy == "pgo":
        return _pgo(job_id or "dyncli-bench")
    if strategy != "sources":
        return nullcontext()
    import torch.compiler

    # Read while Dynamo traces (variables/builder.py), so it must hold for every compiling call.
    patch: AbstractContextManager[Any] = torch.compiler.config.patch(  # type: ignore[attr-defined]
        dynamic_sources=",".join(sources))
    return patch


def mark_inputs(strategy: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                dims: DimPlan) -> None:
    """For ``mark-dynamic``: ``maybe_mark_dynamic`` every varied dim of every input tensor."""
    if strategy != "mark-dynamic":
        return
    import torch._dynamo

    named = {str(i): a for i, a in enumerate(args)} | kwargs
    for plan in (dims.batch, dims.seq):
        for name, ds in plan.items():
            if name in named:
                for d in ds:
                    torch._dynamo.maybe_mark_dynamic(named[name], d)


def autocast_context(device: str, dtype: str) -> Callable[[], AbstractContextManager[Any]]:
    """A factory of the autocast context for ``--dtype amp`` (bf16 on CPU, fp16 on CUDA)."""
    if dtype != "amp":
        return nullcontext
    import torch

    dev = "cuda" if device.startswith("cuda") else "cpu"
    amp_dtype = torch.float16 if dev == "cuda" else torch.bfloat16
    return lambda: torch.autocast(device_type=dev, dtype=amp_dtype)


def loss_of(out: Any, kind: str, num_classes: int | None) -> Any:
    """A scalar loss: the model's own (HF with labels), cross-entropy (classifiers), or a sum."""
    import torch

    from dyncli.bench.accuracy import flatten

    if kind == "model":
        return out["loss"] if isinstance(out, dict) else out[0]
    leaves = [t for t in flatten(out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if kind == "cross_entropy" and num_classes and leaves and leaves[0].dim() == 2:
        logits = leaves[0].float()
        # Deterministic targets: the same for eager and compiled, no RNG in the timed loop.
        target = torch.arange(logits.shape[0], device=logits.device) % num_classes
        return torch.nn.functional.cross_entropy(logits, target)
    return sum(t.float().mean() for t in leaves)


def make_step(fn: Any, model: Any, mode: str, args: tuple[Any, ...], kwargs: dict[str, Any],
              loss_kind: str, num_classes: int | None, autocast: Callable[[], Any],
              keep_grads: bool = False) -> Callable[[], Any]:
    """One call as the benchmark times it: inference (no_grad) or forward+loss+backward.

    ``fn`` is the eager model or its compiled wrapper; both steps built for one variation
    close over the same ``args``/``kwargs``. With ``keep_grads`` a training step returns the
    parameter gradients too (for the accuracy check).
    """
    import torch

    if mode == "inference":
        def infer() -> Any:
            with torch.no_grad(), autocast():
                return fn(*args, **kwargs)
        return infer

    params = [p for p in model.parameters() if p.requires_grad]

    def train() -> Any:
        for p in params:
            p.grad = None
        with autocast():
            out = fn(*args, **kwargs)
            loss = loss_of(out, loss_kind, num_classes)
        loss.backward()
        if keep_grads:
            return out, loss.detach(), [p.grad.detach().clone() if p.grad is not None else None
                                        for p in params]
        return loss.detach()
    return train


def prepare_model(model: Any, mode: str, dtype: str, device: str) -> Any:
    """Move and cast the model; eval() for inference, train() with dropout off for training.

    Dropout is switched off in training mode (modules in eval with ``p = 0``; hf models also get
    their ``*dropout*`` config fields set to 0) because eager and compiled draw different random
    masks, which would make every accuracy check fail; batch norm still uses batch statistics.
    """
    import torch

    model = model.to(device)
    if dtype in ("float16", "bfloat16"):
        model = model.to(getattr(torch, dtype))
    if mode == "inference":
        model.eval()
        return model
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            m.eval()
            m.p = 0.0  # some attention code passes `dropout.p` to SDPA while training
    return model

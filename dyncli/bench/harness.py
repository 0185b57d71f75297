"""The one harness every benchmark runs through: a model ready to call, on every shape.

A :class:`Harness` holds what the single-process runner, the strategy passes, every rank of
``--nproc`` and every child process need to call a model: the prepared model (moved, cast,
eval/train), the inputs of each variation (made once, up front, from one seeded generator), the
autocast context, the device's clock, and :meth:`Harness.step` — the one place a call as the
benchmark times it (inference, or forward + loss + backward) is built. :func:`load` is the
setup before it: build the model and find its batch and sequence dims. How a strategy compiles
and wraps the model is its plan's (:mod:`dyncli.bench.compiling`), not the harness's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench import models, tensors
from dyncli.bench.core.result import Call
from dyncli.bench.core.shapes import DimPlan, Variation, detect_dims
from dyncli.bench.device import quiet_torch_noise
from dyncli.bench.timing import Clock, CpuClock, CudaClock
from dyncli.config import BenchConfig

Inputs = tuple[tuple[Any, ...], dict[str, Any]]

quiet_torch_noise()  # every process that benchmarks imports the harness before torch


def load(model_name: str, cfg: BenchConfig, device: str) -> tuple[models.Built, DimPlan]:
    """Build the model named ``model_name`` and detect its batch (and sequence) dims."""
    built = models.build(model_name, device=device, batch_size=cfg.batch_size,
                         seq_len=cfg.seq_len, hf_config=cfg.hf_config,
                         training=cfg.mode == "training")
    dims = detect_dims(tensors.named_shapes(built), built.batch_size, cfg.batch_dim,
                       built.seq_len)
    return built, dims


def make_clock(device: str) -> Clock:
    """The device's clock: CUDA events and syncs on a GPU, ``perf_counter`` on CPU."""
    if device.startswith("cuda"):
        import torch

        return CudaClock(torch, device)
    return CpuClock()


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


@dataclass
class Harness:
    """A prepared model and its inputs per variation; every model call goes through it.

    ``in_calls`` adds up the seconds spent inside :meth:`call` (the rest of a strategy's wall
    time is the harness's own overhead). ``phase`` names what :meth:`call` is doing now for
    ``tap`` (first | warmup | timed).
    """

    cfg: BenchConfig
    built: models.Built
    device: str
    dims: DimPlan
    plan: list[Variation]
    model: Any
    autocast: Callable[[], Any]
    clock: Clock
    inputs: list[Inputs]
    tap: Callable[[Call], None] | None = None
    phase: str = "first"
    in_calls: float = field(default=0.0)
    eager_first: dict[int, float] = field(default_factory=dict)  # manners.warm_device's

    @classmethod
    def create(cls, cfg: BenchConfig, built: models.Built, device: str, dims: DimPlan,
               plan: list[Variation], seed: int, tap: Callable[[Call], None] | None = None
               ) -> Harness:
        """Prepare the model for ``cfg.mode``/``cfg.dtype`` and make every variation's inputs."""
        import torch

        gen = torch.Generator().manual_seed(seed)
        inputs = [tensors.make_inputs(built, dims, v, gen, cfg.dtype, device) for v in plan]
        return cls(cfg, built, device, dims, plan,
                   prepare_model(built.model, cfg.mode, cfg.dtype, device),
                   autocast_context(device, cfg.dtype), make_clock(device), inputs, tap)

    def args(self, index: int) -> Inputs:
        """A fresh copy of variation ``index``'s inputs."""
        return tensors.clone_inputs(*self.inputs[index])

    def step(self, fn: Any, inputs: Inputs, keep_grads: bool = False) -> Callable[[], Any]:
        """One call of ``fn`` (the eager model or a compiled one) as the benchmark times it:
        inference (no_grad) or forward + loss + backward. With ``keep_grads`` a training step
        returns the parameter gradients too (for the accuracy check)."""
        import torch

        args, kwargs = inputs
        autocast = self.autocast
        if self.cfg.mode == "inference":
            def infer() -> Any:
                with torch.no_grad(), autocast():
                    return fn(*args, **kwargs)
            return infer

        params = [p for p in self.model.parameters() if p.requires_grad]
        loss_kind, num_classes = self.built.loss, self.built.num_classes

        def train() -> Any:
            for p in params:
                p.grad = None
            with autocast():
                out = fn(*args, **kwargs)
                loss = loss_of(out, loss_kind, num_classes)
            loss.backward()
            if keep_grads:
                return out, loss.detach(), [p.grad.detach().clone() if p.grad is not None
                                            else None for p in params]
            return loss.detach()
        return train

    def call(self, step: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``step`` once; (its result, seconds), the seconds added to ``in_calls``."""
        t0 = time.perf_counter()
        try:
            return step(), time.perf_counter() - t0
        finally:
            self.in_calls += time.perf_counter() - t0

    def first_call(self, step: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``step`` once with the device synchronized after it: (result, seconds)."""
        t0 = time.perf_counter()
        try:
            out = step()
            self.clock.synchronize()
            return out, time.perf_counter() - t0
        finally:
            self.in_calls += time.perf_counter() - t0

    def tapped(self, fn: Any, strategy: str, index: int, side: str) -> Any:
        """``fn``, reporting each call to ``tap`` first (``fn`` itself when there is no tap)."""
        tap = self.tap
        if tap is None:
            return fn

        def call(*args: Any, **kwargs: Any) -> Any:
            tap(Call(strategy, index, self.phase, side, args, kwargs))
            return fn(*args, **kwargs)
        return call

"""The one harness every benchmark runs through: a model ready to call, on every shape.

A :class:`Harness` holds what the single-process runner, the strategy passes, every rank of
``--nproc`` and every suite child (which runs the single-process runner) need to call a model:
the prepared model (moved, cast, eval/train), the inputs of each variation (made once, up
front, from one seeded generator), the autocast context, the device's clock, and
:meth:`Harness.step` — the one place a call as the benchmark times it (inference, or
forward + loss + backward) is built. :func:`load` is the setup before it: build the model
and find its batch and sequence dims.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench import models, strategies, tensors
from dyncli.bench.core.result import Call
from dyncli.bench.core.shapes import DimPlan, Variation, detect_dims
from dyncli.bench.timing import Clock, CpuClock, CudaClock
from dyncli.config import BenchConfig

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


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

    @classmethod
    def create(cls, cfg: BenchConfig, built: models.Built, device: str, dims: DimPlan,
               plan: list[Variation], seed: int, tap: Callable[[Call], None] | None = None
               ) -> Harness:
        """Prepare the model for ``cfg.mode``/``cfg.dtype`` and make every variation's inputs."""
        import torch

        gen = torch.Generator().manual_seed(seed)
        inputs = [tensors.make_inputs(built, dims, v, gen, cfg.dtype, device) for v in plan]
        return cls(cfg, built, device, dims, plan,
                   strategies.prepare_model(built.model, cfg.mode, cfg.dtype, device),
                   strategies.autocast_context(device, cfg.dtype), make_clock(device), inputs,
                   tap)

    def args(self, index: int, strategy: str | None = None) -> Inputs:
        """A fresh copy of variation ``index``'s inputs, marked dynamic as ``strategy`` wants."""
        args, kwargs = tensors.clone_inputs(*self.inputs[index])
        if strategy is not None:
            strategies.mark_inputs(strategy, args, kwargs, self.dims)
        return args, kwargs

    def step(self, fn: Any, inputs: Inputs, keep_grads: bool = False) -> Callable[[], Any]:
        """One call of ``fn`` (the eager model or a compiled one) as the benchmark times it."""
        b = self.built
        return strategies.make_step(fn, self.model, self.cfg.mode, inputs[0], inputs[1], b.loss,
                                    b.num_classes, self.autocast, keep_grads=keep_grads)

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

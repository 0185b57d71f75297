"""A model served as a dyncli plan says: the code bench measures with, and ``--emit python`` writes.

``plan`` is a plan's ``as_dict()`` (``recommendation.apply`` in the bench JSON). Everything a
strategy does on each call happens in :class:`Served`: the torch config that must hold while
dynamo traces, the stance, ``maybe_mark_dynamic`` on the inputs, padding up to a bucket and
cutting the outputs back. bench's runner wraps its own compiled model (the same
``torch_compile`` arguments with a backend that counts) with :func:`wrap`; ``--emit python``
writes this file's code below its docstring, unchanged, with the plan as a literal: what bench
measured is what the emitted module runs. So this file imports only torch and the standard
library, assigns nothing at module level and is valid Python 3.10 without ``__future__``.

Config overrides in torch's config modules are thread-local (``torch/utils/_config_module.py``):
a value set once on the main thread does not reach a serving thread. So the config is applied
around each call, on the calling thread, unless it is already in effect there (set by the
environment variables the plan lists, or by the caller).
"""

import contextlib
import importlib
from typing import Any

import torch
import torch._dynamo


def serve(model: Any, plan: dict[str, Any]) -> Any:
    """The callable to serve ``model`` with, as ``plan`` says (the model itself for eager)."""
    if not plan["torch_compile"]:
        return model
    return wrap(torch.compile(model, **plan["torch_compile"]), plan)


def wrap(compiled: Any, plan: dict[str, Any]) -> Any:
    """``compiled`` called as ``plan`` says; ``compiled`` itself when the plan needs nothing
    per call (no config, stance, marks or padding)."""
    served = Served(compiled, plan)
    return served if served.per_call else compiled


def bucket(size: int, buckets: list[int]) -> Any:
    """The smallest bucket >= size (``buckets`` empty: the next power of two); None above the
    largest (that call is served unpadded)."""
    if not buckets:
        return 1 if size <= 1 else 1 << (size - 1).bit_length()
    for b in buckets:
        if b >= size:
            return b
    return None


def pad_target(plan: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[dict[str, int], dict[str, int]]:
    """The real sizes of the padded dims (``batch``, ``seq``) and the bucket each pads to.

    A dim the plan does not pad keeps its size; a size above the largest bucket leaves the
    whole call unpadded (the targets equal the real sizes).
    """
    named = {str(i): a for i, a in enumerate(args)}
    named.update(kwargs)
    real: dict[str, int] = {}
    for spec in plan.get("inputs") or ():
        t = named.get(spec["name"])
        if isinstance(t, torch.Tensor):
            for kind in ("batch", "seq"):
                for d in spec[f"{kind}_dims"]:
                    real.setdefault(kind, int(t.shape[d]))
    buckets = list(plan.get("pad_buckets") or ())
    to = {k: bucket(v, buckets) if k in plan.get("pad_dims", ("batch", "seq")) else v
          for k, v in real.items()}
    if any(v is None for v in to.values()):
        return real, dict(real)
    return real, to


def pad(plan: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any],
        to: dict[str, int]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The inputs padded up to ``to`` with each input's fill value (token ids: the pad id)."""
    specs = {s["name"]: s for s in plan.get("inputs") or ()}

    def one(name: str, t: Any) -> Any:
        spec = specs.get(name)
        if spec is None or not isinstance(t, torch.Tensor):
            return t
        shape = list(t.shape)
        for kind in ("batch", "seq"):
            for d in spec[f"{kind}_dims"]:
                if kind in to:
                    shape[d] = max(shape[d], to[kind])
        if shape == list(t.shape):
            return t
        out = t.new_full(shape, spec["fill"])
        out[tuple(slice(0, n) for n in t.shape)] = t
        return out

    return (tuple(one(str(i), a) for i, a in enumerate(args)),
            {k: one(k, v) for k, v in kwargs.items()})


def cut(out: Any, real: dict[str, int], to: dict[str, int], layout: Any = None) -> Any:
    """The outputs with the padded dims cut back to the real sizes.

    ``layout`` (the plan's ``pad_outputs``, learned by bench from eager outputs at two sizes):
    per tensor of the output, in order, the dim that is the batch and the one that is the
    sequence. Without it, the first dim equal to a padded size is cut (ambiguous when, say, the
    hidden size equals the padded length).
    """
    if real == to:
        return out
    leaf = [0]

    def one(t: Any) -> Any:
        i = leaf[0]
        leaf[0] += 1
        index = [slice(None)] * t.dim()
        if layout is not None and i < len(layout):
            for kind, d in zip(("batch", "seq"), layout[i], strict=False):
                if d is not None and d < t.dim() and kind in to:
                    index[d] = slice(0, real[kind])
            return t[tuple(index)]
        todo = [k for k in ("batch", "seq") if k in to and to[k] != real[k]]
        for d, n in enumerate(t.shape):
            hit = [k for k in todo if n == to[k]]
            if hit:
                index[d] = slice(0, real[hit[0]])
                todo.remove(hit[0])
        return t[tuple(index)]

    def walk(obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            return one(obj)
        if isinstance(obj, dict):  # hf ModelOutput too: rebuilt from its (key, value) pairs
            pairs = [(k, walk(obj[k])) for k in obj]
            try:
                return type(obj)(pairs)
            except Exception:
                return dict(pairs)
        if isinstance(obj, (tuple, list)):
            return type(obj)(walk(o) for o in obj)
        return obj

    return walk(out)


def _value(module: Any, key: str) -> Any:
    for part in key.split("."):  # inductor's keys are dotted: triton.cudagraph_capture_sizes
        module = getattr(module, part)
    return module


def _in_effect(module: Any, values: dict[str, Any]) -> bool:
    return all(_value(module, k) == v for k, v in values.items())


class Served:
    """What to serve with: the compiled model, called the way the plan says."""

    def __init__(self, compiled: Any, plan: dict[str, Any]) -> None:
        self.compiled = compiled
        self.plan = plan
        self.configs = []
        for key, values in (("dynamo_config", plan.get("dynamo_config")),
                            ("compiler_config", plan.get("compiler_config")),
                            ("inductor_config", plan.get("inductor_config"))):
            if values:  # torch.compiler.config is touched only when needed (torch >= 2.6)
                if key == "inductor_config":  # CUDA-graph sizes: read when a call meets a size
                    module = importlib.import_module("torch._inductor.config")
                    values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
                else:
                    module = (torch._dynamo.config if key == "dynamo_config"
                              else torch.compiler.config)
                self.configs.append((module, values, module.patch(values)))
        self.stance = plan.get("stance")
        self.marks = [(str(n), int(d)) for n, d in plan.get("mark_dynamic") or ()]
        self.pads = plan.get("pad_buckets") is not None
        self.per_call = bool(self.configs or self.stance or self.marks or self.pads)

    def applied(self) -> contextlib.ExitStack:
        """The config and stance that must hold while dynamo traces, on this thread."""
        stack = contextlib.ExitStack()
        for module, values, patch in self.configs:
            if not _in_effect(module, values):
                stack.enter_context(patch)
        if self.stance is not None:
            stack.enter_context(torch.compiler.set_stance(self.stance))
        return stack

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.configs and self.stance is None:
            return self._call(args, kwargs)
        with self.applied():
            return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.marks:
            named = {str(i): a for i, a in enumerate(args)}
            named.update(kwargs)
            for name, dim in self.marks:
                t = named.get(name)
                if isinstance(t, torch.Tensor) and dim < t.dim():
                    torch._dynamo.maybe_mark_dynamic(t, dim)
        if not self.pads:
            return self.compiled(*args, **kwargs)
        real, to = pad_target(self.plan, args, kwargs)
        args, kwargs = pad(self.plan, args, kwargs, to)
        return cut(self.compiled(*args, **kwargs), real, to, self.plan.get("pad_outputs"))

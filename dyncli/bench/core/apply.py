"""A recommendation as something to apply: ``recommendation.apply`` and ``bench --emit``.

Pure: no torch. A :class:`Plan` says how to serve the model the way bench measured the
recommended strategy — ``torch.compile`` arguments, the torch config that must hold while
dynamo traces, a stance, the pad wrapper with its buckets, the dims to mark dynamic, the
environment — and writes it in three forms:

* ``python``: a standalone module (it imports only torch) defining
  ``compile_for_traffic(model)``, which returns the callable to serve with;
* ``env``: ``export`` lines for what environment variables can say, and a comment naming
  what only code can do;
* ``toml``: the ``[bench]`` table that measures the same plan again with ``dyncli bench``.

Config overrides in torch's config modules are thread-local in torch 2.15
(``torch/utils/_config_module.py``): a ``torch._dynamo.config.X = …`` line run once on the
main thread does not reach a serving thread. So the module applies every config patch around
each call, on the calling thread, where dynamo traces; nothing is set at import.

Every value from the run (input names, sources, job ids, buckets) reaches generated text only
through the target language's quoting (:mod:`dyncli.quoting`): ``repr`` for Python, TOML
strings, shell words. A comment never holds input text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import dyncli
from dyncli.quoting import shell_quote, toml_comment, toml_str

EMIT_FORMS = ("python", "env", "toml")

# torch.compile's ``dynamic`` argument per strategy (what bench's strategies.py passes).
_DYNAMIC: dict[str, bool | None] = {
    "static": False, "automatic": None, "mark-dynamic": None, "dynamic": True,
    "sources": None, "collectives": None, "pad": False, "unbacked": None,
    "eager-then-compile": None, "pgo": None,
}
RECOMMENDABLE = ("eager", *(s for s in _DYNAMIC if s != "collectives"))


@dataclass(frozen=True)
class PlanInput:
    """One model input the plan touches, by position (``"0"``) or keyword name."""

    name: str
    batch_dims: tuple[int, ...] = ()
    seq_dims: tuple[int, ...] = ()
    fill: int = 0  # the pad value (token ids: the model's pad id)

    def as_dict(self) -> dict[str, Any]:
        """This input in ``recommendation.apply``."""
        return {"name": self.name, "batch_dims": list(self.batch_dims),
                "seq_dims": list(self.seq_dims), "fill": self.fill}


@dataclass(frozen=True)
class Plan:
    """How to serve a model as bench measured ``strategy``."""

    strategy: str
    inputs: tuple[PlanInput, ...] = ()
    buckets: tuple[int, ...] | None = None  # pad; None = powers of two
    sources: tuple[str, ...] = ()  # sources: TORCH_COMPILE_DYNAMIC_SOURCES entries
    job_id: str = "dyncli-plan"  # pgo
    predicted_compiles: int | None = None
    backend: str = "inductor"
    start: str = "cold"  # or "warm": the caches a first process left are kept
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.strategy not in RECOMMENDABLE:
            raise ValueError(f"no plan for strategy {self.strategy!r}; one of "
                             f"{', '.join(RECOMMENDABLE)}")

    # ------------------------------------------------------------ what the plan needs

    def compile_kwargs(self) -> dict[str, Any]:
        """``torch.compile`` keyword arguments (none for eager)."""
        if self.strategy == "eager":
            return {}
        out: dict[str, Any] = {"backend": self.backend}
        if _DYNAMIC[self.strategy] is not None:
            out["dynamic"] = _DYNAMIC[self.strategy]
        return out

    def dynamo_config(self) -> dict[str, Any]:
        """``torch._dynamo.config`` values that must hold while dynamo traces."""
        if self.strategy == "unbacked":
            return {"automatic_dynamic_shapes_mark_as": "unbacked"}
        if self.strategy == "pgo":
            return {"automatic_dynamic_local_pgo": True}
        return {}

    def compiler_config(self) -> dict[str, Any]:
        """``torch.compiler.config`` values that must hold while dynamo traces."""
        if self.strategy == "sources":
            return {"dynamic_sources": ",".join(self.sources)}
        if self.strategy == "pgo":
            return {"job_id": self.job_id}
        return {}

    def env(self) -> dict[str, str]:
        """The environment variables torch reads for this plan (read when torch imports)."""
        out: dict[str, str] = {}
        if self.strategy == "sources":
            out["TORCH_COMPILE_DYNAMIC_SOURCES"] = ",".join(self.sources)
        if self.strategy == "pgo":
            out["TORCH_COMPILE_JOB_ID"] = self.job_id
            out["TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO"] = "1"
        return out

    def stance(self) -> str | None:
        """The ``torch.compiler.set_stance`` each call runs under."""
        return "eager_then_compile" if self.strategy == "eager-then-compile" else None

    def pad_buckets(self) -> list[int] | None:
        """The pad wrapper's buckets ([] = powers of two); None when the plan does not pad."""
        if self.strategy != "pad":
            return None
        return list(self.buckets) if self.buckets is not None else []

    def mark_dynamic(self) -> list[tuple[str, int]]:
        """``(input, dim)`` pairs ``maybe_mark_dynamic`` marks before each call."""
        if self.strategy != "mark-dynamic":
            return []
        return [(i.name, d) for i in self.inputs for d in (*i.batch_dims, *i.seq_dims)]

    def requires(self) -> list[str]:
        """Steps that must come before serving (said in every form)."""
        steps: list[str] = []
        if self.strategy == "pgo":
            steps.append("Run one profiling process first (the same plan, representative "
                         "traffic): torch writes the profile under TORCHINDUCTOR_CACHE_DIR as "
                         "dynamo/code_state_*.pkl; keep that directory, and point "
                         "TORCHINDUCTOR_CACHE_DIR at it in every serving process.")
        if self.start == "warm" and self.strategy != "eager":
            steps.append("Keep the compile caches across restarts: a persistent "
                         "TORCHINDUCTOR_CACHE_DIR (FX graph and AOTAutograd caches), or "
                         "torch.compiler.save_cache_artifacts() after warm-up and "
                         "torch.compiler.load_cache_artifacts() at start.")
        return steps

    def as_dict(self) -> dict[str, Any]:
        """``recommendation.apply`` in the JSON document."""
        return {"strategy": self.strategy, "torch_compile": self.compile_kwargs(),
                "dynamo_config": self.dynamo_config(),
                "compiler_config": self.compiler_config(), "env": self.env(),
                "stance": self.stance(), "pad_buckets": self.pad_buckets(),
                "mark_dynamic": [[n, d] for n, d in self.mark_dynamic()],
                "inputs": [i.as_dict() for i in self.inputs],
                "predicted_compiles": self.predicted_compiles, "start": self.start,
                "requires": self.requires()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        """Read ``recommendation.apply`` back (``ValueError`` when it names no known strategy)."""
        def ints(x: Any) -> tuple[int, ...]:
            return tuple(i for i in x if isinstance(i, int) and not isinstance(i, bool)) \
                if isinstance(x, list) else ()

        raw = d.get("inputs")
        inputs = tuple(PlanInput(str(i.get("name", "")), ints(i.get("batch_dims")),
                                 ints(i.get("seq_dims")),
                                 i["fill"] if isinstance(i.get("fill"), int) else 0)
                       for i in (raw if isinstance(raw, list) else []) if isinstance(i, dict))
        pad = d.get("pad_buckets")
        compiler = d.get("compiler_config")
        compiler = compiler if isinstance(compiler, dict) else {}
        kwargs = d.get("torch_compile")
        kwargs = kwargs if isinstance(kwargs, dict) else {}
        sources = str(compiler.get("dynamic_sources") or "")
        predicted = d.get("predicted_compiles")
        return cls(str(d.get("strategy")), inputs,
                   buckets=(ints(pad) or None) if isinstance(pad, list) else None,
                   sources=tuple(s for s in sources.split(",") if s),
                   job_id=str(compiler.get("job_id") or "dyncli-plan"),
                   predicted_compiles=predicted if isinstance(predicted, int) else None,
                   backend=str(kwargs.get("backend") or "inductor"),
                   start=str(d.get("start") or "cold"))

    # ------------------------------------------------------------ the forms

    def emit(self, form: str) -> str:
        """The plan as ``python``, ``env`` or ``toml`` text."""
        if form == "python":
            return python_module(self)
        if form == "env":
            return env_lines(self)
        if form == "toml":
            return toml_table(self)
        raise ValueError(f"unknown form {form!r}; one of {', '.join(EMIT_FORMS)}")


# ---------------------------------------------------------------- python

_RUNTIME = '''

def _bucket(size):
    """The smallest bucket >= size; None above the largest (that call is not padded)."""
    if not BUCKETS:
        return 1 if size <= 1 else 1 << (size - 1).bit_length()
    for b in BUCKETS:
        if b >= size:
            return b
    return None


def _named(args, kwargs):
    named = {str(i): a for i, a in enumerate(args)}
    named.update(kwargs)
    return named


def _pad(args, kwargs):
    """Pad every listed input up to its bucket; returns (args, kwargs, real, padded)."""
    named = _named(args, kwargs)
    real = {}
    for name, (bdims, sdims, _fill) in PAD_INPUTS.items():
        t = named.get(name)
        if isinstance(t, torch.Tensor):
            for d in bdims:
                real.setdefault("batch", t.shape[d])
            for d in sdims:
                real.setdefault("seq", t.shape[d])
    to = {k: _bucket(v) for k, v in real.items()}
    if any(v is None for v in to.values()):
        return args, kwargs, real, real  # above the largest bucket: served as it is

    def one(name, t):
        spec = PAD_INPUTS.get(name)
        if spec is None or not isinstance(t, torch.Tensor):
            return t
        bdims, sdims, fill = spec
        shape = list(t.shape)
        for d in bdims:
            shape[d] = max(shape[d], to["batch"])
        for d in sdims:
            shape[d] = max(shape[d], to["seq"])
        if shape == list(t.shape):
            return t
        out = t.new_full(shape, fill)
        out[tuple(slice(0, n) for n in t.shape)] = t
        return out

    args = tuple(one(str(i), a) for i, a in enumerate(args))
    kwargs = {k: one(k, v) for k, v in kwargs.items()}
    return args, kwargs, real, to


def _cut(out, real, to):
    """Outputs cut back: the first dim equal to the padded batch, the next to the padded length."""
    if real == to:
        return out
    if isinstance(out, torch.Tensor):
        index = [slice(None)] * out.dim()
        todo = [k for k in ("batch", "seq") if k in to and to[k] != real[k]]
        for d, n in enumerate(out.shape):
            if todo and n == to[todo[0]]:
                index[d] = slice(0, real[todo.pop(0)])
        return out[tuple(index)]
    if isinstance(out, dict):
        return type(out)((k, _cut(v, real, to)) for k, v in out.items())
    if isinstance(out, (tuple, list)):
        return type(out)(_cut(v, real, to) for v in out)
    return out


class Served:
    """What to serve with: the compiled model, called the way bench measured it."""

    def __init__(self, module, compiled):
        self.module = module
        self.compiled = compiled

    def __call__(self, *args, **kwargs):
        with contextlib.ExitStack() as stack:
            # On the calling thread, where dynamo traces: torch's config overrides are
            # thread-local (torch 2.15), so nothing is set once at import.
            if DYNAMO_CONFIG:
                stack.enter_context(torch._dynamo.config.patch(**DYNAMO_CONFIG))
            if COMPILER_CONFIG:
                stack.enter_context(torch.compiler.config.patch(**COMPILER_CONFIG))
            if STANCE is not None:
                stack.enter_context(torch.compiler.set_stance(STANCE))
            if MARK_DYNAMIC:
                named = _named(args, kwargs)
                for name, dim in MARK_DYNAMIC:
                    t = named.get(name)
                    if isinstance(t, torch.Tensor) and dim < t.dim():
                        torch._dynamo.maybe_mark_dynamic(t, dim)
            if PAD_BUCKETS is None:
                return self.compiled(*args, **kwargs)
            args, kwargs, real, to = _pad(args, kwargs)
            return _cut(self.compiled(*args, **kwargs), real, to)


def compile_for_traffic(model):
    """The callable to serve ``model`` with, as dyncli bench measured this plan."""
    if STRATEGY == "eager":
        return model
    return Served(model, torch.compile(model, **COMPILE_KWARGS))
'''


def python_module(plan: Plan) -> str:
    """A standalone module defining ``compile_for_traffic(model)``."""
    pad = plan.pad_buckets()
    constants = {
        "STRATEGY": plan.strategy,
        "COMPILE_KWARGS": plan.compile_kwargs(),
        "DYNAMO_CONFIG": plan.dynamo_config(),
        "COMPILER_CONFIG": plan.compiler_config(),
        "STANCE": plan.stance(),
        "MARK_DYNAMIC": tuple(plan.mark_dynamic()),
        "PAD_BUCKETS": None if pad is None else tuple(pad),
        "BUCKETS": tuple(pad or ()),
        "PAD_INPUTS": {i.name: (i.batch_dims, i.seq_dims, i.fill) for i in plan.inputs}
        if pad is not None else {},
        "PREDICTED_COMPILES": plan.predicted_compiles,
        "REQUIRES": tuple(plan.requires()),
        "ENV": plan.env(),
    }
    head = [
        f'"""Serve a model as dyncli {dyncli.__version__} bench measured it (the recommendation).',
        "",
        "    from this_module import compile_for_traffic",
        "    serve = compile_for_traffic(model)",
        "    out = serve(*inputs)",
        "",
        "REQUIRES lists what must be done before serving; ENV is what torch reads from the",
        "environment instead (set before torch is imported), not needed with this module.",
        '"""',
        "",
        "import contextlib",
        "",
        "import torch",
        "import torch._dynamo",
        "",
    ]
    body = [f"{k} = {_py(v)}" for k, v in constants.items()]
    return "\n".join(head + body) + "\n" + _RUNTIME


def _py(value: Any) -> str:
    """A Python literal that evaluates to ``value`` (repr is the quoting; checked here)."""
    text = repr(value)
    if "\n" in text or "\r" in text:  # pragma: no cover - repr escapes both
        raise ValueError("a generated literal spans lines")
    return text


# ---------------------------------------------------------------- env

def env_lines(plan: Plan) -> str:
    """``export`` lines, shell-quoted; what only code can do named in a comment."""
    lines = [f"# dyncli {dyncli.__version__}: the environment for strategy "
             f"{plan.strategy} (set before the process imports torch)"]
    for step in plan.requires():
        lines.append(toml_comment("first: " + step))
    env = plan.env()
    for name, value in env.items():
        lines.append(f"export {name}={shell_quote(value)}")
    code_only = []
    if plan.compile_kwargs().get("dynamic") is not None:
        code_only.append(f"torch.compile(dynamic={plan.compile_kwargs()['dynamic']})")
    if plan.pad_buckets() is not None:
        code_only.append("padding inputs to buckets")
    if plan.mark_dynamic():
        code_only.append("maybe_mark_dynamic on the inputs")
    if plan.stance():
        code_only.append(f"torch.compiler.set_stance({plan.stance()!r})")
    if plan.strategy == "unbacked":
        code_only.append("torch._dynamo.config.automatic_dynamic_shapes_mark_as = 'unbacked'")
    if code_only:
        lines.append("# the environment cannot say: " + "; ".join(code_only)
                     + " -- use --emit python for the whole plan")
    elif not env:
        lines.append("# nothing to set: plain torch.compile(model)"
                     if plan.strategy != "eager" else "# nothing to set: serve the model eager")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- toml

def toml_table(plan: Plan) -> str:
    """The ``[bench]`` table that measures this plan again (``dyncli bench --config``)."""
    strategy = "automatic" if plan.strategy == "eager" else plan.strategy
    lines = [f"# dyncli {dyncli.__version__}: measure the plan again with "
             "dyncli bench MODEL --config THIS_FILE",
             "[bench]", f"strategy = [{toml_str(strategy)}]"]
    if plan.strategy == "pad":
        lines.append("buckets = " + toml_str(",".join(map(str, plan.buckets))
                                              if plan.buckets else "pow2"))
    if plan.strategy == "sources":
        lines.append("dynamic_sources = [" + ", ".join(toml_str(s) for s in plan.sources)
                     + "]")
    for step in plan.requires():
        lines.append(toml_comment("first: " + step))
    return "\n".join(lines) + "\n"


def from_dims(batch: Mapping[str, Iterable[int]], seq: Mapping[str, Iterable[int]],
              fills: Mapping[str, int] | None = None) -> tuple[PlanInput, ...]:
    """Plan inputs from bench's dim plan (input name -> batch dims, -> sequence dims)."""
    names = sorted(set(batch) | set(seq), key=lambda n: (not n.isdigit(), n.zfill(8)))
    return tuple(PlanInput(n, tuple(batch.get(n, ())), tuple(seq.get(n, ())),
                           (fills or {}).get(n, 0)) for n in names)

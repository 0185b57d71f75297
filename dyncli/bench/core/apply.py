"""A strategy as something to apply: what bench measures, ``recommendation.apply`` and ``--emit``.

Pure: no torch. A :class:`Plan` is built from a row of the strategy table
(:mod:`dyncli.bench.core.strategy`) and the run's settings: the ``torch.compile`` arguments,
the torch config that must hold while dynamo traces, a stance, the dims to mark dynamic, the
padding with its buckets, the environment, the steps that must come first. Its ``as_dict()`` is
``recommendation.apply`` in the JSON, and it is what :mod:`dyncli.bench.served` applies on every
call — in bench's runner while it measures, and in the module ``--emit python`` writes
(:mod:`dyncli.bench.core.emit`), so what bench measured is what the plan applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core import strategy as table
from dyncli.bench.core.cost import parse_buckets
from dyncli.bench.core.settings import auto_buckets
from dyncli.sources import PER_DIM_SINCE, has_dim, without_dim

PAD_KINDS = ("batch", "seq")


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
    """How to serve a model as bench measures ``strategy`` (a row of the strategy table)."""

    strategy: str
    inputs: tuple[PlanInput, ...] = ()
    buckets: tuple[int, ...] | None = None  # pad: None = powers of two
    pad_dims: tuple[str, ...] = PAD_KINDS  # pad: the kinds of dim it pads (what the stream varies)
    pad_outputs: tuple[tuple[int | None, int | None], ...] | None = None  # per output tensor:
    # its (batch dim, sequence dim), to cut padding back exactly (learned from eager outputs)
    sources: tuple[str, ...] = ()  # the allow-list (TORCH_COMPILE_DYNAMIC_SOURCES entries)
    job_id: str = "dyncli-plan"  # pgo's profile name
    compile_mode: str = "default"  # torch.compile(mode=...): a row of strategy.MODES
    # CUDA graphs (a mode that records them): the sizes to capture, inputs padded up to them
    # (torch._inductor.config.triton.cudagraph_capture_sizes), and the distinct sizes after
    # which new ones run without graphs (cudagraph_dynamic_shape_rerecord_limit, torch >= 2.15)
    capture_sizes: tuple[int, ...] | None = None
    rerecord_limit: int | None = None
    predicted_compiles: int | None = None
    backend: str = "inductor"
    start: str = "cold"  # or "warm": the caches a first process left are kept

    def __post_init__(self) -> None:
        table.find(self.strategy)  # ValueError for a name the table does not have
        table.mode(self.compile_mode)

    @property
    def row(self) -> table.Strategy:
        """The strategy's row in the table."""
        return table.find(self.strategy)

    def _fill(self, value: bool | str) -> bool | str:
        if value == table.SOURCES:
            return ",".join(self.sources)
        if value == table.JOB_ID:
            return self.job_id
        return value

    # ------------------------------------------------------------ what the plan needs

    def compile_kwargs(self) -> dict[str, Any]:
        """``torch.compile`` keyword arguments (none for eager)."""
        row = self.row
        if not row.compiles:
            return {}
        out: dict[str, Any] = {"backend": self.backend}
        if row.dynamic is not None:
            out["dynamic"] = row.dynamic
        if self.compile_mode != "default":
            out["mode"] = self.compile_mode
        return out

    def dynamo_config(self) -> dict[str, Any]:
        """``torch._dynamo.config`` values that must hold while dynamo traces."""
        return {k: self._fill(v) for k, v in self.row.config("dynamo").items()}

    def compiler_config(self) -> dict[str, Any]:
        """``torch.compiler.config`` values that must hold while dynamo traces."""
        return {k: self._fill(v) for k, v in self.row.config("compiler").items()}

    def inductor_config(self) -> dict[str, Any]:
        """``torch._inductor.config`` values (dotted keys) that must hold on every call: torch
        reads the CUDA-graph ones when a call meets a new size, not only while compiling."""
        out: dict[str, Any] = {}
        if self.capture_sizes:
            out[table.CAPTURE_SIZES[0]] = list(self.capture_sizes)
        if self.rerecord_limit is not None:
            out[table.RERECORD_LIMIT[0]] = self.rerecord_limit
        return out

    def unsupported(self, torch_version: str, device: str) -> str | None:
        """Why this plan cannot run on this torch and device (the row, the mode, the CUDA-graph
        config), without the strategy's name (the run's label stands before it); None: it can."""
        reason = table.unsupported(self.row, torch_version, self.compile_mode, device)
        if reason:
            return reason
        for (key, needs), value in ((table.CAPTURE_SIZES, self.capture_sizes),
                                    (table.RERECORD_LIMIT, self.rerecord_limit)):
            if value is not None and table.release(torch_version) < table.release(needs):
                return f"{key.split('.', 1)[1]} needs torch >= {needs} (this is {torch_version})"
        dims = [s for s in self.sources if has_dim(s)]
        if dims and table.SOURCES in self.row.params and \
                table.release(torch_version) < PER_DIM_SINCE:
            # (the list as given would do nothing: 2.11's and 2.12's torch match the entry
            # against the whole input's name; measuring it would report no list as the list's)
            whole = ",".join(dict.fromkeys(without_dim(s) for s in self.sources))
            return (f"the entries {', '.join(dims[:3])}"
                    + (" …" if len(dims) > 3 else "")
                    + f" name a dim (':N'), which needs torch >= "
                    f"{'.'.join(map(str, PER_DIM_SINCE))} (this is {torch_version}, where ':N' "
                    f"matches nothing); on this torch give whole inputs: {whole}")
        if self.capture_sizes and self.row.dynamic is False:
            return ("static graphs have no size key, and torch runs them "
                    "without CUDA graphs when capture sizes are set; capture sizes need a "
                    "dynamic graph (automatic, dynamic, mark-dynamic)")
        return None

    def env(self) -> dict[str, str]:
        """The environment variables torch reads the same config from (read when torch imports)."""
        out: dict[str, str] = {}
        for s in self.row.settings:
            if s.env:
                value = self._fill(s.value)
                out[s.env] = ("1" if value else "0") if isinstance(value, bool) else value
        return out

    def code_only(self) -> list[str]:
        """What only code can do (the ``env`` form names these)."""
        row, out = self.row, []
        if row.dynamic is not None:
            out.append(f"torch.compile(dynamic={row.dynamic})")
        if self.compile_mode != "default":
            out.append(f"torch.compile(mode={self.compile_mode!r})")
        if row.pads:
            out.append("padding inputs to buckets")
        elif self.capture_sizes:
            out.append("padding inputs up to the capture sizes")
        out += [f"torch._inductor.config.{k} = {tuple(v) if isinstance(v, list) else v!r}"
                for k, v in self.inductor_config().items()]
        if row.marks:
            out.append("maybe_mark_dynamic on the inputs")
        if row.stance:
            out.append(f"torch.compiler.set_stance({row.stance!r})")
        modules = {"dynamo": "torch._dynamo.config", "compiler": "torch.compiler.config"}
        out += [f"{modules[s.module]}.{s.key} = {self._fill(s.value)!r}"
                for s in row.settings if not s.env]
        return out

    def stance(self) -> str | None:
        """The ``torch.compiler.set_stance`` each call runs under."""
        return self.row.stance

    def pad_buckets(self) -> list[int] | None:
        """The pad wrapper's buckets ([] = powers of two); None when the plan does not pad.
        A plan with capture sizes pads up to them (a size above the largest runs unpadded)."""
        if not self.row.pads:
            return list(self.capture_sizes) if self.capture_sizes else None
        return list(self.buckets) if self.buckets is not None else []

    def mark_dynamic(self) -> list[tuple[str, int]]:
        """``(input, dim)`` pairs ``maybe_mark_dynamic`` marks before each call."""
        if not self.row.marks:
            return []
        return [(i.name, d) for i in self.inputs for d in (*i.batch_dims, *i.seq_dims)]

    def requires(self) -> list[str]:
        """Steps that must come before serving (said in every form)."""
        row = self.row
        steps = [table.PASS_STEPS[p] for p in row.passes if p in table.PASS_STEPS]
        if self.start == "warm" and row.compiles:
            steps.append("Keep the compile caches across restarts: a persistent "
                         "TORCHINDUCTOR_CACHE_DIR (FX graph and AOTAutograd caches), or "
                         "torch.compiler.save_cache_artifacts() after warm-up and "
                         "torch.compiler.load_cache_artifacts() at start.")
        return steps

    def as_dict(self) -> dict[str, Any]:
        """``recommendation.apply`` in the JSON document, and what :mod:`served` applies."""
        pad = self.pad_buckets()
        padding = {} if pad is None else {
            "pad_dims": list(self.pad_dims),
            "pad_outputs": None if self.pad_outputs is None else [list(o) for o in self.pad_outputs]}
        inductor = self.inductor_config()
        return {"strategy": self.strategy, "torch_compile": self.compile_kwargs(),
                "dynamo_config": self.dynamo_config(),
                "compiler_config": self.compiler_config()} | (
                {"inductor_config": inductor} if inductor else {}) | {"env": self.env(),
                "stance": self.stance(), "pad_buckets": pad} | padding | {
                "mark_dynamic": [[n, d] for n, d in self.mark_dynamic()],
                "inputs": [i.as_dict() for i in self.inputs],
                "predicted_compiles": self.predicted_compiles, "start": self.start,
                "requires": self.requires()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        """Read ``recommendation.apply`` back (``ValueError`` when it names no known strategy)."""
        raw = d.get("inputs")
        inputs = tuple(PlanInput(str(i.get("name", "")), f.ints(i.get("batch_dims")),
                                 f.ints(i.get("seq_dims")),
                                 i["fill"] if isinstance(i.get("fill"), int) else 0)
                       for i in (raw if isinstance(raw, list) else []) if isinstance(i, dict))
        pad = d.get("pad_buckets")
        compiler = f.obj(d.get("compiler_config"))
        kwargs = f.obj(d.get("torch_compile"))
        sources = str(compiler.get("dynamic_sources") or "")
        predicted = d.get("predicted_compiles")
        dims = d.get("pad_dims")
        outputs = d.get("pad_outputs")
        inductor = f.obj(d.get("inductor_config"))
        limit = inductor.get(table.RERECORD_LIMIT[0])
        return cls(str(d.get("strategy")), inputs,
                   buckets=(f.ints(pad) or None) if isinstance(pad, list)
                   and table.find(str(d.get("strategy"))).pads else None,  # else: capture sizes
                   pad_dims=tuple(k for k in dims if k in PAD_KINDS)
                   if isinstance(dims, list) else PAD_KINDS,
                   pad_outputs=tuple(_layout(o) for o in outputs)
                   if isinstance(outputs, list) else None,
                   sources=tuple(s for s in sources.split(",") if s),
                   job_id=str(compiler.get("job_id") or "dyncli-plan"),
                   compile_mode=str(kwargs.get("mode") or "default"),
                   capture_sizes=f.ints(inductor.get(table.CAPTURE_SIZES[0])) or None,
                   rerecord_limit=limit if isinstance(limit, int)
                   and not isinstance(limit, bool) else None,
                   predicted_compiles=predicted if isinstance(predicted, int) else None,
                   backend=str(kwargs.get("backend") or "inductor"),
                   start=str(d.get("start") or "cold"))


def _layout(x: Any) -> tuple[int | None, int | None]:
    pair = [*x, None, None] if isinstance(x, list) else [None, None]
    b, s = (v if isinstance(v, int) and not isinstance(v, bool) else None for v in pair[:2])
    return b, s


def from_dims(batch: Mapping[str, Iterable[int]], seq: Mapping[str, Iterable[int]],
              fills: Mapping[str, int] | None = None) -> tuple[PlanInput, ...]:
    """Plan inputs from bench's dim plan (input name -> batch dims, -> sequence dims)."""
    names = sorted(set(batch) | set(seq), key=lambda n: (not n.isdigit(), n.zfill(8)))
    return tuple(PlanInput(n, tuple(batch.get(n, ())), tuple(seq.get(n, ())),
                           (fills or {}).get(n, 0)) for n in names)


def plan_of(strategy: str, settings: Mapping[str, Any], dims: Mapping[str, Any], *,
            compile_mode: str | None = None, fills: Mapping[str, int] | None = None,
            pad_dims: tuple[str, ...] = PAD_KINDS,
            pad_outputs: tuple[tuple[int | None, int | None], ...] | None = None) -> Plan:
    """The plan for ``strategy`` under ``compile_mode`` (None: the first of the settings'
    ``compile_mode``) and a run's ``settings`` (the bench JSON's) on inputs with ``dims``
    (``{"batch": {input: dims}, "seq": {…}}``): what bench measures, and emits. The settings'
    capture sizes and re-record limit reach only a mode that records CUDA graphs."""
    row = table.find(strategy)
    buckets: tuple[int, ...] | None = None
    text = str(settings.get("buckets") or "pow2")
    if row.pads and not auto_buckets(text):
        given = parse_buckets(text)
        buckets = tuple(given) if given is not None else None
    sources = settings.get("dynamic_sources") or [] if table.SOURCES in row.params else []
    if compile_mode is None:  # settings carry the list of modes measured: the first
        given = settings.get("compile_mode")
        compile_mode = str(given[0] if isinstance(given, list) and given else given or "default")
    graphs = table.mode(compile_mode).cuda_graphs
    capture = (settings.get("capture_sizes") or []) if graphs else []
    limit = settings.get("rerecord_limit") if graphs else None
    return Plan(strategy, inputs=from_dims(dims.get("batch", {}), dims.get("seq", {}), fills),
                buckets=buckets, pad_dims=pad_dims, pad_outputs=pad_outputs,
                sources=tuple(str(s) for s in sources), compile_mode=compile_mode,
                capture_sizes=tuple(sorted({int(s) for s in capture})) or None,
                rerecord_limit=limit if isinstance(limit, int) else None,
                start="warm" if settings.get("start") == "warm" else "cold")

"""The result of ``dyncli bench``: plain dataclasses, no torch, and the one owner of its JSON.

Every class here has ``to_dict()`` (its part of the ``--json`` document, schema_version 1,
docs/bench.md) and ``from_dict()`` (the same part read back, tolerantly: a value of the
wrong type reads as absent). compare, suites and ``--resume`` read bench documents only
through :meth:`BenchResult.from_dict` / :meth:`RunResult.from_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import caches, stats
from dyncli.bench.core import fields as f
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.bench.core.cost import Recommendation, StreamCost
from dyncli.bench.core.cpu_time import CompileCost
from dyncli.bench.core.graphs import RunGraphs, ShapeGraphs
from dyncli.bench.core.hooks import Call, Hooks
from dyncli.bench.core.measured import Measured
from dyncli.bench.core.run_parts import (
    BucketChoice,
    Environment,
    PadTarget,
    PgoPass,
    RankResult,
    RankStep,
    Replay,
    WarmStart,
)
from dyncli.bench.core.stats import Summary, summarize
from dyncli.bench.core.status import FAILURES, Status, worst
from dyncli.output import SCHEMA_VERSION, envelope

NAN = float("nan")
# Kept for callers of the round-2 names: the members of :class:`Status`.
PASS, NOT_APPLICABLE = Status.PASS, Status.NOT_APPLICABLE


@dataclass
class VariationResult:
    """One variation of one strategy: timings, compile facts and how it ended.

    ``status`` is the accuracy verdict when the variation ran (``pass``, ``fail_accuracy``)
    and the failure otherwise (``OOM``, ``fail_to_compile``, ``eager_fail_to_run``); the JSON
    key is ``accuracy``, as in PyTorch's harness.
    """

    index: int
    batch_size: int | None
    seq_len: int | None
    shapes: dict[str, list[int]]
    eager_ms: float = NAN
    compiled_ms: float = NAN
    speedup: float = NAN
    p_value: float = NAN
    eager_samples: list[float] = field(default_factory=list)
    compiled_samples: list[float] = field(default_factory=list)
    recompiled: bool = False
    compiles: int = 0
    first_call_s: float = NAN
    compile_time_s: float = 0.0
    recompile_reasons: list[str] = field(default_factory=list)
    status: Status = Status.PASS
    detail: str = ""
    request: int | None = None  # where its first compiled call sits in the request stream
    padded_to: PadTarget | None = None  # pad: the bucket this shape ran at
    first_call_cpu_s: float | None = None  # a compiling first call's CPU s: self + workers
    loops: int | None = None  # calls per timed sample (the samples are per call)
    cache_hits: dict[str, int] = field(default_factory=dict)  # caches its compile was served from
    graphs: ShapeGraphs | None = None  # a CUDA-graph mode on CUDA: its first calls observed
    eager_first_call_s: float | None = None  # eager's first call of this shape in the process

    @property
    def timed(self) -> bool:
        """Whether steady-state timings exist for this variation."""
        return bool(self.eager_samples) and bool(self.compiled_samples)

    def set_samples(self, eager: list[float], compiled: list[float]) -> None:
        """The timed samples (ms per call) and what is computed from them, in one place:
        the medians, the speedup and the Mann-Whitney p-value."""
        self.eager_samples, self.compiled_samples = eager, compiled
        self.eager_ms, self.compiled_ms = stats.median(eager), stats.median(compiled)
        self.speedup = stats.speedup(eager, compiled)
        self.p_value = stats.p_value(eager, compiled)

    def to_dict(self) -> dict[str, Any]:
        """One ``runs[].variations[]`` entry."""
        return {
            "index": self.index, "batch_size": self.batch_size, "seq_len": self.seq_len,
            "shapes": self.shapes, "eager_ms": self.eager_ms, "compiled_ms": self.compiled_ms,
            "speedup": self.speedup, "p_value": self.p_value, "recompiled": self.recompiled,
            "compiles": self.compiles, "compile_time_s": self.compile_time_s,
            "first_call_s": self.first_call_s, "recompile_reasons": self.recompile_reasons,
            "accuracy": self.status, "detail": self.detail or None,
            "eager_samples_ms": self.eager_samples, "compiled_samples_ms": self.compiled_samples,
            "request": self.request,
            "padded_to": self.padded_to.to_dict() if self.padded_to else None,
        } | {k: v for k, v in (("first_call_cpu_s", self.first_call_cpu_s),
                               ("loops", self.loops),
                               ("eager_first_call_s", self.eager_first_call_s)) if v is not None} \
          | ({"cache_hits": self.cache_hits} if self.cache_hits else {}) \
          | ({"cudagraphs": self.graphs.to_dict()} if self.graphs is not None else {})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VariationResult:
        """Read a variation back (fields of the wrong type read as absent)."""
        shapes = {str(k): [x for x in v if isinstance(x, int) and not isinstance(x, bool)]
                  for k, v in f.obj(d.get("shapes")).items() if isinstance(v, list)}
        padded, graphs = f.opt_obj(d.get("padded_to")), f.opt_obj(d.get("cudagraphs"))
        return cls(
            f.integer(d.get("index")), f.opt_int(d.get("batch_size")), f.opt_int(d.get("seq_len")),
            shapes, f.num(d.get("eager_ms")), f.num(d.get("compiled_ms")),
            f.num(d.get("speedup")), f.num(d.get("p_value")), f.floats(d.get("eager_samples_ms")),
            f.floats(d.get("compiled_samples_ms")), f.flag(d.get("recompiled")),
            f.integer(d.get("compiles")), f.num(d.get("first_call_s")),
            f.num(d.get("compile_time_s"), 0.0), f.texts(d.get("recompile_reasons")),
            Status.parse(d.get("accuracy"), Status.PASS if "accuracy" not in d else None),
            f.text(d.get("detail")), f.opt_int(d.get("request")),
            PadTarget.from_dict(padded) if padded is not None else None,
            f.opt_num(d.get("first_call_cpu_s")), f.opt_int(d.get("loops")),
            caches.read_hits(d.get("cache_hits")),
            ShapeGraphs.from_dict(graphs) if graphs is not None else None,
            f.opt_num(d.get("eager_first_call_s")))


@dataclass
class RunResult:
    """One strategy on one model: its variations and their summary."""

    model: str
    strategy: str
    mode: str
    variations: list[VariationResult] = field(default_factory=list)
    status: Status = Status.PASS
    compiles: int = 0
    compile_time_s: float = 0.0
    backend_compile_s: float = 0.0
    recompile_limit_hit: bool = False
    limit_messages: list[str] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    torch_unique_graphs: int | None = None  # torch's own counter, a cross-check of ``compiles``
    fx_cache_hits: int = 0  # inductor FX graph cache hits: compiles served from disk are fast
    wall_s: float = 0.0
    in_calls_s: float = 0.0
    error: str = ""
    ranks: list[RankResult] = field(default_factory=list)  # --nproc N: one entry per rank
    stream: StreamCost | None = None  # the request stream's cost under this strategy
    passes: list[PgoPass] = field(default_factory=list)  # pgo: cold and warm pass
    replay: Replay | None = None  # --replay: measured against predicted
    prime_s: float | None = None  # eager-then-compile: the first (eager) call of the stream
    prime_compiles: int = 0  # compiles torch made during that first request (inner frames)
    buckets: BucketChoice | None = None  # pad, buckets = auto: the chosen list and the plans
    start: WarmStart | None = None  # --start warm / --requests-per-start: two processes
    eager_share: float | None = None  # of the stream's requests, those that ran eagerly
    # The plan this run measured: what its strategy applied on every call (recommendation.apply
    # is the recommended run's, this same object with the predicted compiles).
    plan: Plan | None = field(default=None, repr=False, compare=False)
    compile_mode: str = table.DEFAULT_MODE  # torch.compile(mode=...): a row of strategy.MODES
    graphs: RunGraphs | None = None  # a CUDA-graph mode on CUDA: recordings, pool, plans

    @property
    def label(self) -> str:
        """The run's name where one is needed: the strategy, with its mode unless default."""
        return table.label(self.strategy, self.compile_mode)

    @property
    def divergent(self) -> bool | None:
        """Whether the ranks' compile counts differ (``None`` for a one-process run)."""
        counted = [r.compiles for r in self.ranks]
        return len(set(counted)) > 1 if counted else None

    @property
    def total_wait_ms(self) -> float:
        """Milliseconds all ranks together spent waiting in the step's collective."""
        return sum(r.wait_ms for r in self.ranks)

    @property
    def slowest_rank(self) -> int | None:
        """The rank that spent the most time computing (compiles and steps, not waits)."""
        if not self.ranks:
            return None
        return max(self.ranks, key=lambda r: (r.busy_s, -r.rank)).rank

    @property
    def speedup(self) -> Summary:
        """Median, min, max, std and geomean of the per-variation speedups."""
        return summarize([v.speedup for v in self.variations if v.timed])

    def finish(self) -> None:
        """Set the run's status to the worst of its variations' (``pass`` when all passed)."""
        if self.status == Status.NOT_APPLICABLE:
            return
        statuses = [v.status for v in self.variations]
        if self.status != Status.PASS:
            statuses.append(self.status)
        self.status = worst(statuses)

    def to_dict(self) -> dict[str, Any]:
        """One ``runs[]`` entry of the JSON document (``--nproc`` runs add their ranks)."""
        extra = {"nproc": len(self.ranks), "divergent": self.divergent,
                 "total_wait_ms": self.total_wait_ms, "slowest_rank": self.slowest_rank,
                 "ranks": [r.to_dict() for r in self.ranks]} if self.ranks else {}
        return extra | {
            "model": self.model, "strategy": self.strategy, "compile_mode": self.compile_mode,
            "mode": self.mode,
            "status": self.status, "error": self.error or None, "compiles": self.compiles,
            "compile_time_s": self.compile_time_s, "backend_compile_s": self.backend_compile_s,
            "recompile_limit_hit": self.recompile_limit_hit,
            "peak_memory_bytes": self.peak_memory_bytes,
            "torch_unique_graphs": self.torch_unique_graphs, "fx_cache_hits": self.fx_cache_hits,
            "wall_s": self.wall_s, "speedup": self.speedup.as_dict(),
            "stream": self.stream.as_dict() if self.stream else None,
            "passes": [p.to_dict() for p in self.passes] or None,
            "replay": self.replay.to_dict() if self.replay else None,
            "first_call_eager_s": self.prime_s,
            "variations": [v.to_dict() for v in self.variations],
        } | ({"first_call_eager_compiles": self.prime_compiles} if self.prime_compiles else {}) \
          | ({"compile_cost": cc} if (cc := self._compile_cost_dict()) else {}) \
          | ({"buckets": self.buckets.to_dict()} if self.buckets is not None else {}) \
          | ({"start": self.start.to_dict()} if self.start is not None else {}) \
          | ({"eager_share": self.eager_share} if self.eager_share is not None else {}) \
          | ({"cudagraphs": self.graphs.to_dict()} if self.graphs is not None else {}) \
          | ({"plan": self.plan.as_dict()} if self.plan is not None else {})

    def _compile_cost_dict(self) -> dict[str, Any] | None:
        """``compile_cost``: wall and CPU, what the cost model charges, and which diverged.

        ``charged_s`` is Σ min(wall, CPU) over the compiling first calls (docs/bench.md,
        "Compile cost that load cannot fake"); ``diverged`` lists the variations whose wall was
        over 1.5x their CPU: they waited for the machine.
        """
        costs = [(v.index, CompileCost(v.first_call_s, v.first_call_cpu_s))
                 for v in self.variations if v.compiles and v.first_call_cpu_s is not None
                 and v.first_call_s == v.first_call_s]
        if not costs:
            return None
        return {"wall_s": sum(c.wall_s for _, c in costs), "cpu_s": sum(c.cpu_s for _, c in costs),
                "charged_s": sum(c.charged_s for _, c in costs), "uses": "min(wall, cpu)",
                "diverged": [i for i, c in costs if c.diverges]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        """Read a run back; ``ValueError`` when it has no model name (not a run at all).

        Its ``speedup`` summary is recomputed from the variations, not read.
        """
        model, strategy = d.get("model"), d.get("strategy")
        if not isinstance(model, str) or not isinstance(strategy, (str, type(None))):
            raise ValueError("a runs[] entry without a model name or strategy")
        stream, replay = f.opt_obj(d.get("stream")), f.opt_obj(d.get("replay"))
        buckets, start = f.opt_obj(d.get("buckets")), f.opt_obj(d.get("start"))
        graphs = f.opt_obj(d.get("cudagraphs"))
        return cls(
            model=model, strategy=str(strategy), mode=f.text(d.get("mode")),
            variations=[VariationResult.from_dict(v) for v in f.objs(d.get("variations"))],
            status=Status.parse(d.get("status"), Status.PASS if "status" not in d else None),
            compiles=f.integer(d.get("compiles")),
            compile_time_s=f.num(d.get("compile_time_s"), 0.0),
            backend_compile_s=f.num(d.get("backend_compile_s"), 0.0),
            recompile_limit_hit=f.flag(d.get("recompile_limit_hit")),
            peak_memory_bytes=f.opt_int(d.get("peak_memory_bytes")),
            torch_unique_graphs=f.opt_int(d.get("torch_unique_graphs")),
            fx_cache_hits=f.integer(d.get("fx_cache_hits")), wall_s=f.num(d.get("wall_s"), 0.0),
            error=f.text(d.get("error")),
            ranks=[RankResult.from_dict(r) for r in f.objs(d.get("ranks"))],
            stream=StreamCost.from_dict(stream) if stream is not None else None,
            passes=[PgoPass.from_dict(p) for p in f.objs(d.get("passes"))],
            replay=Replay.from_dict(replay) if replay is not None else None,
            prime_s=f.opt_num(d.get("first_call_eager_s")),
            prime_compiles=f.integer(d.get("first_call_eager_compiles")),
            buckets=BucketChoice.from_dict(buckets) if buckets is not None else None,
            start=WarmStart.from_dict(start) if start is not None else None,
            eager_share=f.opt_num(d.get("eager_share")),
            plan=_plan(f.opt_obj(d.get("plan"))),
            # a document from before compile modes measured the default mode
            compile_mode=f.text(d.get("compile_mode"), table.DEFAULT_MODE),
            graphs=RunGraphs.from_dict(graphs) if graphs is not None else None)


def _plan(d: dict[str, Any] | None) -> Plan | None:
    try:
        return Plan.from_dict(d) if d is not None else None
    except ValueError:  # a strategy or mode this dyncli does not know
        return None


@dataclass
class BenchResult:
    """Everything ``dyncli bench`` measured, in run order."""

    model: str
    environment: Environment
    settings: dict[str, Any]
    runs: list[RunResult] = field(default_factory=list)
    dims: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    interrupted: bool = False
    requests: int | None = None
    shapes_source: str = "plan"  # plan | sizes | the --shapes path
    stream_ids: list[int] = field(default_factory=list)  # per request: its distinct shape
    eager_stream: StreamCost | None = None
    recommendation: Recommendation | None = None
    compiler_warmup_s: float | None = None  # inductor's process start-up, paid before strategies
    left_out: int = 0  # from_dict: runs[] entries that were not runs (not written back)
    load: dict[str, Any] | None = None  # how busy the machine was (dyncli.bench.core.machine)
    same_window: bool = False  # steady state timed round-robin over every strategy per shape
    measured: Measured | None = None  # the driver, why, and the caches compiles started from
    device_warmup: dict[str, Any] | None = None  # eager until its latency settled (manners)

    @property
    def ran(self) -> bool:
        """Whether at least one variation produced timings."""
        return (any(v.timed for r in self.runs for v in r.variations)
                or any(k.step_ms == k.step_ms for r in self.runs for k in r.ranks))

    def stop(self, asked: list[str], model: str, mode: str) -> None:
        """Ctrl-C (or SIGTERM) ended the run: mark it ``interrupted``, and every run that was
        not measured so (``asked``: the run labels requested, in order).

        A run still ``pass`` whose shapes were not all timed (under the same-window driver a
        strategy's walk compiles and its timing comes after the last strategy) is
        ``interrupted``, saying how many shapes were timed; a requested run that never started
        is added as ``interrupted``. None of them is ever shown, compared or recommended as a
        measured pass; what was timed stays in its variations.
        """
        self.interrupted = True
        shapes = len(set(self.stream_ids))
        for run in self.runs:
            if run.status not in (Status.PASS, Status.INTERRUPTED) or run.ranks:
                continue
            timed = sum(v.timed for v in run.variations)
            if run.status == Status.PASS and run.variations and timed == len(run.variations):
                continue
            run.status = Status.INTERRUPTED
            total = max(shapes, len(run.variations))
            run.error = run.error or (
                "not measured: stopped before it was timed ("
                + (f"{timed} of {total} shapes timed)" if total else "no shape timed)"))
        seen = {r.label for r in self.runs}
        for label in asked:
            if label not in seen:
                strategy, compile_mode = table.split(label)
                self.runs.append(RunResult(model, strategy, mode, status=Status.INTERRUPTED,
                                           error="not measured: stopped before it started",
                                           compile_mode=compile_mode))

    @property
    def failed(self) -> bool:
        """Whether anything did not pass."""
        return self.interrupted or any(Status(r.status).failed for r in self.runs)

    @property
    def tripped(self) -> tuple[str, ...]:
        """The ``fail_on`` items (from the settings) that happened: the command exits 1 on any."""
        fail_on = self.settings.get("fail_on") or ()
        return ("failures",) if "failures" in fail_on and self.failed else ()

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document of ``dyncli bench`` (schema_version 1; docs/bench.md)."""
        return envelope("bench", {
            "model": self.model,
            "interrupted": self.interrupted,
            "environment": self.environment.to_dict(),
            "settings": self.settings,
            "dims": self.dims,
            "warnings": self.warnings,
            "runs": [r.to_dict() for r in self.runs],
            "requests": self.requests,
            "shapes_source": self.shapes_source,
            "eager_stream": self.eager_stream.as_dict() if self.eager_stream else None,
            "recommendation": self.recommendation.as_dict() if self.recommendation else None,
            "compiler_warmup_s": self.compiler_warmup_s,
        } | ({"load": self.load} if self.load is not None else {})
          | ({"same_window": True} if self.same_window else {}) \
          | ({"measured": self.measured.to_dict()} if self.measured is not None else {})
          | ({"device_warmup": self.device_warmup} if self.device_warmup is not None else {}))

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> BenchResult:
        """Read a bench document back (a single model's or a suite's runs).

        ``ValueError`` when it is not a bench document of a schema this dyncli reads; runs
        of the wrong shape are left out (counted in ``left_out``).
        """
        if doc.get("command") != "bench" or not isinstance(doc.get("runs"), list):
            raise ValueError("not a dyncli bench result (no command 'bench' with runs)")
        version = doc.get("schema_version", SCHEMA_VERSION)
        if isinstance(version, int) and not isinstance(version, bool) \
                and version > SCHEMA_VERSION:
            raise ValueError(f"schema_version {version}: written by a newer dyncli "
                             f"(this one reads {SCHEMA_VERSION})")
        runs, left_out = [], 0
        for raw in doc["runs"]:
            try:
                runs.append(RunResult.from_dict(raw if isinstance(raw, dict) else {}))
            except ValueError:
                left_out += 1
        dims = {str(k): {str(n): [x for x in ds if isinstance(x, int)]
                         for n, ds in v.items() if isinstance(ds, list)}
                for k, v in f.obj(doc.get("dims")).items() if isinstance(v, dict)}
        eager, rec = f.opt_obj(doc.get("eager_stream")), f.opt_obj(doc.get("recommendation"))
        return cls(
            f.text(doc.get("model")), Environment.from_dict(f.obj(doc.get("environment"))),
            f.obj(doc.get("settings")), runs, dims, f.texts(doc.get("warnings")),
            f.flag(doc.get("interrupted")), f.opt_int(doc.get("requests")),
            f.text(doc.get("shapes_source"), "plan"), [],
            StreamCost.from_dict(eager) if eager is not None else None,
            Recommendation.from_dict(rec) if rec is not None else None,
            f.opt_num(doc.get("compiler_warmup_s")), left_out,
            f.opt_obj(doc.get("load")), f.flag(doc.get("same_window")),
            Measured.from_dict(m) if (m := f.opt_obj(doc.get("measured"))) is not None else None,
            f.opt_obj(doc.get("device_warmup")))


__all__ = ["FAILURES", "NOT_APPLICABLE", "PASS", "BenchResult", "BucketChoice", "Call",
           "Environment", "Hooks", "PadTarget", "PgoPass", "RankResult", "RankStep", "Replay",
           "RunResult", "Status", "VariationResult", "WarmStart"]

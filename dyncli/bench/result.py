"""The result of ``dyncli bench``: plain dataclasses, no torch, rendered once by render.bench."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.stats import Summary, summarize
from dyncli.bench.traffic import Recommendation, StreamCost
from dyncli.output import envelope

PASS = "pass"
# A strategy that does not apply to this model or torch (pad without a batch dim, pgo where
# torch wrote no state): recorded with the reason, not a failure of the model.
NOT_APPLICABLE = "not_applicable"
# Failure statuses, most severe first (the run's status is the worst of its variations).
FAILURES = ("model_fail_to_load", "timeout", "rank_failed", "eager_fail_to_run", "OOM",
            "fail_to_compile", "fail_accuracy", "interrupted")


@dataclass
class VariationResult:
    """One variation of one strategy: timings, compile facts and the accuracy verdict."""

    index: int
    batch_size: int | None
    seq_len: int | None
    shapes: dict[str, list[int]]
    eager_ms: float = float("nan")
    compiled_ms: float = float("nan")
    speedup: float = float("nan")
    p_value: float = float("nan")
    eager_samples: list[float] = field(default_factory=list)
    compiled_samples: list[float] = field(default_factory=list)
    recompiled: bool = False
    compiles: int = 0
    first_call_s: float = float("nan")
    compile_time_s: float = 0.0
    recompile_reasons: list[str] = field(default_factory=list)
    accuracy: str = PASS
    detail: str = ""
    request: int | None = None  # where its first compiled call sits in the request stream
    padded_to: dict[str, Any] | None = None  # pad: the bucket this shape ran at
    first_call_cpu_s: float | None = None  # CPU of the first call: this process + compile workers
    loops: int | None = None  # calls per timed sample (samples are per call)

    @property
    def timed(self) -> bool:
        """Whether steady-state timings exist for this variation."""
        return bool(self.eager_samples) and bool(self.compiled_samples)


@dataclass
class RunResult:
    """One strategy on one model: its variations and their summary."""

    model: str
    strategy: str
    mode: str
    variations: list[VariationResult] = field(default_factory=list)
    status: str = PASS
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
    passes: list[dict[str, Any]] = field(default_factory=list)  # pgo: cold and warm pass
    replay: dict[str, float] | None = None  # --replay: measured_s and predicted_s
    prime_s: float | None = None  # eager-then-compile: the first (eager) call of the stream
    prime_compiles: int = 0  # compiles during that first request (inner frames torch compiles)

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
        if self.status == NOT_APPLICABLE:
            return
        statuses = [v.accuracy for v in self.variations]
        if self.status != PASS:
            statuses.append(self.status)
        worst = [s for s in FAILURES if s in statuses]
        self.status = worst[0] if worst else PASS


@dataclass
class RankStep:
    """One variation as one rank ran it under ``--nproc``."""

    index: int
    batch_size: int | None
    seq_len: int | None
    compiles: int = 0
    first_call_s: float = float("nan")
    step_ms: float = float("nan")  # median of the timed steps, the collective excluded
    wait_ms: float = 0.0  # time in the collective after this variation's steps
    recompile_reasons: list[str] = field(default_factory=list)


@dataclass
class RankResult:
    """One rank of a ``--nproc`` run: what it compiled, how long it stepped, how long it waited."""

    rank: int
    status: str = PASS
    error: str = ""
    compiles: int = 0
    compile_time_s: float = 0.0
    first_step_s: float = float("nan")
    step_ms: float = float("nan")  # median of every timed step of the rank, collective excluded
    wait_ms: float = 0.0  # total time in the collective that ends each step
    busy_s: float = 0.0  # time in the model calls (compiles included), waits excluded
    steps: list[RankStep] = field(default_factory=list)
    last_lines: list[str] = field(default_factory=list)  # a failed process's last stderr lines


@dataclass
class Environment:
    """Where the benchmark ran."""

    dyncli: str
    torch: str
    python: str
    device: str
    device_name: str
    dtype: str
    threads: int | None = None


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
    load: dict[str, Any] | None = None  # how busy the machine was (dyncli.bench.machine)
    same_window: bool = False  # steady state timed round-robin over all strategies per shape

    @property
    def ran(self) -> bool:
        """Whether at least one variation produced timings."""
        return (any(v.timed for r in self.runs for v in r.variations)
                or any(k.step_ms == k.step_ms for r in self.runs for k in r.ranks))

    @property
    def failed(self) -> bool:
        """Whether anything did not pass."""
        return self.interrupted or any(r.status not in (PASS, NOT_APPLICABLE)
                                       for r in self.runs)

    @property
    def tripped(self) -> tuple[str, ...]:
        """The ``fail_on`` items (from the settings) that happened: the command exits 1 on any."""
        fail_on = self.settings.get("fail_on") or ()
        return ("failures",) if "failures" in fail_on and self.failed else ()

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document of ``dyncli bench`` (schema_version 1; docs/bench.md)."""
        return bench_document(self)


@dataclass
class Hooks:
    """Callbacks from the core to the front end; all optional.

    ``progress(strategy, done, total)`` after each variation; ``warning(text)`` once per
    warning; ``run_done(result)`` after each strategy (the command writes partial files here);
    ``tap(call)`` sees every model call the harness makes (tests prove eager and compiled get
    the same inputs with it).
    """

    progress: Callable[[str, int, int], None] | None = None
    warning: Callable[[str], None] | None = None
    run_done: Callable[[BenchResult], None] | None = None
    tap: Callable[[Call], None] | None = None


@dataclass(frozen=True)
class Call:
    """One model call as the harness made it (for ``Hooks.tap``)."""

    strategy: str
    variation: int
    phase: str  # first | warmup | timed
    side: str   # eager | compiled
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


# ---------------------------------------------------------------- the JSON contract


def run_payload(run: RunResult) -> dict[str, Any]:
    """One ``runs[]`` entry of the JSON document (``--nproc`` runs add their ranks)."""
    extra = run_fields(run) if run.ranks else {}
    return extra | {
        "model": run.model, "strategy": run.strategy, "mode": run.mode, "status": run.status,
        "error": run.error or None, "compiles": run.compiles,
        "compile_time_s": run.compile_time_s, "backend_compile_s": run.backend_compile_s,
        "recompile_limit_hit": run.recompile_limit_hit, "peak_memory_bytes": run.peak_memory_bytes,
        "torch_unique_graphs": run.torch_unique_graphs, "fx_cache_hits": run.fx_cache_hits,
        "wall_s": run.wall_s, "speedup": run.speedup.as_dict(),
        "stream": run.stream.as_dict() if run.stream else None,
        "passes": run.passes or None, "replay": run.replay, "first_call_eager_s": run.prime_s,
        "first_call_eager_compiles": run.prime_compiles,
        "compile_cost": compile_cost(run),
        "variations": [{
            "index": v.index, "batch_size": v.batch_size, "seq_len": v.seq_len,
            "shapes": v.shapes, "eager_ms": v.eager_ms, "compiled_ms": v.compiled_ms,
            "speedup": v.speedup, "p_value": v.p_value, "recompiled": v.recompiled,
            "compiles": v.compiles, "compile_time_s": v.compile_time_s,
            "first_call_s": v.first_call_s, "recompile_reasons": v.recompile_reasons,
            "accuracy": v.accuracy, "detail": v.detail or None,
            "eager_samples_ms": v.eager_samples, "compiled_samples_ms": v.compiled_samples,
            "request": v.request, "padded_to": v.padded_to,
            "first_call_cpu_s": v.first_call_cpu_s, "loops": v.loops,
        } for v in run.variations],
    }


def compile_cost(run: RunResult) -> dict[str, Any] | None:
    """Wall and CPU seconds of the run's compiling first calls, and which the cost model charges.

    ``charged_s`` is Σ min(wall, CPU) (docs/bench.md, "Compile cost"); ``diverged`` lists the
    variations whose wall was over 1.5x their CPU: they waited for the machine.
    """
    from dyncli.bench.cpu_time import CompileCost

    costs = [(v.index, CompileCost(v.first_call_s, v.first_call_cpu_s))
             for v in run.variations if v.compiles and v.first_call_cpu_s is not None
             and v.first_call_s == v.first_call_s]
    if not costs:
        return None
    return {"wall_s": sum(c.wall_s for _, c in costs), "cpu_s": sum(c.cpu_s for _, c in costs),
            "charged_s": sum(c.charged_s for _, c in costs), "uses": "min(wall, cpu)",
            "diverged": [i for i, c in costs if c.diverges]}


def rank_payload(r: RankResult) -> dict[str, Any]:
    """One ``runs[].ranks[]`` entry of the JSON document."""
    return {
        "rank": r.rank, "status": r.status, "error": r.error or None,
        "compiles": r.compiles, "compile_time_s": r.compile_time_s,
        "first_step_s": r.first_step_s, "step_ms": r.step_ms, "wait_ms": r.wait_ms,
        "busy_s": r.busy_s, "last_lines": r.last_lines,
        "steps": [{"index": s.index, "batch_size": s.batch_size, "seq_len": s.seq_len,
                   "compiles": s.compiles, "first_call_s": s.first_call_s,
                   "step_ms": s.step_ms, "wait_ms": s.wait_ms,
                   "recompile_reasons": s.recompile_reasons} for s in r.steps],
    }


def run_fields(run: RunResult) -> dict[str, Any]:
    """The ``runs[]`` keys a ``--nproc`` run adds."""
    return {"nproc": len(run.ranks), "divergent": run.divergent,
            "total_wait_ms": run.total_wait_ms, "slowest_rank": run.slowest_rank,
            "ranks": [rank_payload(r) for r in run.ranks]}


def bench_document(result: BenchResult) -> dict[str, Any]:
    """The whole ``--json`` document of ``dyncli bench``, wrapped in the dyncli envelope."""
    env = result.environment
    return envelope("bench", {
        "model": result.model,
        "interrupted": result.interrupted,
        "environment": {"dyncli": env.dyncli, "torch": env.torch, "python": env.python,
                        "device": env.device, "device_name": env.device_name,
                        "dtype": env.dtype, "threads": env.threads},
        "settings": result.settings,
        "dims": result.dims,
        "warnings": result.warnings,
        "runs": [run_payload(r) for r in result.runs],
        "requests": result.requests,
        "shapes_source": result.shapes_source,
        "eager_stream": result.eager_stream.as_dict() if result.eager_stream else None,
        "recommendation": result.recommendation.as_dict() if result.recommendation else None,
        "compiler_warmup_s": result.compiler_warmup_s,
        "load": result.load,
        "same_window": result.same_window,
    })

"""The trace-only part of a diagnosis: compile times, failures, similar graphs, ranks, PGO.

Plain frozen dataclasses with no dependency on the rest of ``dyncli.diagnose``, so that
``model.Diagnosis`` can hold a ``TraceReport`` and ``trace.TraceAccumulator`` can build one
without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dyncli.logparse.events import split_id


def _asdict(obj: Any) -> dict[str, Any]:
    """``dataclasses.asdict`` for these flat records (no dataclass inside; every value is
    immutable, so nothing needs the deep copy that makes ``asdict`` slow: a trace of 2,000
    compiles spent 0.15 s in it)."""
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}


def _split(text: str, name: str = "compile_id") -> dict[str, Any]:
    """An id as JSON: the bare id torch wrote, its reset generation and its process beside it."""
    bare, generation, process = split_id(text)
    return {name: bare, "generation": generation, "process": process}


@dataclass(frozen=True)
class CompileTime:
    """One compile (restart attempts folded in): how long it took and whether it failed."""

    rank: int | None
    compile_id: str
    function: str
    file: str
    line: int | None
    seconds: float | None  # None: the trace has no time for it (unknown, not 0)
    attempts: int = 1
    fail_type: str | None = None
    fail_reason: str | None = None
    restart_reasons: tuple[str, ...] = ()
    seconds_field: str | None = None  # the compilation_metrics field the seconds came from
    # issue 21: exclusive seconds per phase (dyncli.diagnose.phases), guards, timeline
    phases: tuple[tuple[str, float], ...] = ()
    guard_count: int | None = None
    guard_latency_us: float | None = None
    compile_workers_s: float | None = None
    spans: tuple[tuple[float | None, float, tuple[tuple[str, float], ...]], ...] = ()  # attempts


@dataclass(frozen=True)
class FrameTime:
    """Compile time summed over one frame's compiles."""

    rank: int | None
    frame_id: str
    function: str
    file: str
    line: int | None
    compiles: int
    seconds: float  # over the compiles with a time
    phases: tuple[tuple[str, float], ...] = ()
    unknown: int = 0  # compiles without a time in the trace


@dataclass(frozen=True)
class SimilarGraphs:
    """Compiles of one frame with the same ops that differ only in input sizes."""

    rank: int | None
    frame_id: str
    function: str
    compile_ids: tuple[str, ...]
    ops: int
    inputs: tuple[tuple[str, tuple[str, ...]], ...]  # (source, size per compile)


@dataclass(frozen=True)
class RankView:
    """One rank's compile picture."""

    rank: int | None
    frames: int
    compiles: int
    recompiles: int
    failed: int
    compile_time_s: float
    dynamic: tuple[str, ...]
    process: str = ""  # the file, when several files claim this rank
    unknown_time: int = 0  # compiles without a time in the trace


@dataclass(frozen=True)
class Divergence:
    """Ranks that disagree: ``compiles`` of one frame, or ``dynamic`` dims of one source."""

    kind: str
    subject: str
    values: tuple[tuple[int | None, str], ...]

    @property
    def message(self) -> str:
        """One readable line."""
        per = ", ".join(f"rank {r}: {v}" for r, v in self.values)
        what = "compiles" if self.kind == "compiles" else "dynamic dims"
        return f"{self.subject}: {what} differ across ranks ({per})"


@dataclass(frozen=True)
class PgoFinding:
    """PGO state was loaded for a frame, yet the frame recompiled for size."""

    rank: int | None
    function: str
    file: str
    line: int | None
    loaded_dynamic: tuple[str, ...]
    recompiles: tuple[str, ...]
    allow_list: tuple[str, ...]
    # (compile id, what caused it, user file:line) for recompiles no allow-list entry removes:
    # a size branch in user code, or a specialization (issue 21)
    explained: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class ProcessInfo:
    """One trace file (one process): its rank, where the rank came from, its label when
    another file claims the same rank, and how many compiles it started (``dynamo_start``)."""

    file: str
    rank: int | None
    rank_from: str | None  # "envelope" | "file name" | None (unknown)
    label: str = ""
    dynamo_start: int = 0


@dataclass(frozen=True)
class TraceReport:
    """Everything trace-only; ``to_json`` adds ``compile_time_s``, ``similar_graphs``, ``ranks``."""

    compile_times: tuple[CompileTime, ...] = ()
    frame_times: tuple[FrameTime, ...] = ()
    similar_graphs: tuple[SimilarGraphs, ...] = ()
    ranks: tuple[RankView, ...] = ()
    divergences: tuple[Divergence, ...] = ()
    pgo: tuple[PgoFinding, ...] = ()
    pgo_loaded: bool = False
    pgo_written: tuple[str, ...] = ()  # dynamic sources in the last PGO state torch wrote
    kinds: dict[str, int] = field(default_factory=dict)
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    payload_mismatch: int = 0
    processes: tuple[ProcessInfo, ...] = ()

    @property
    def timed(self) -> bool:
        """Whether any compile has its seconds (torch 2.3 writes no compilation_metrics)."""
        return self.unknown_time < len(self.compile_times)

    @property
    def total_compile_s(self) -> float:
        """Sum of the compile times the trace has (``unknown_time`` counts the others)."""
        return sum(c.seconds for c in self.compile_times if c.seconds is not None)

    @property
    def unknown_time(self) -> int:
        """Compiles whose ``compilation_metrics`` carry no time field (unknown, not 0)."""
        return sum(1 for c in self.compile_times if c.seconds is None)

    @property
    def phases(self) -> tuple[tuple[str, float], ...]:
        """Where the compile time went, all compiles added up (exclusive phases)."""
        from dyncli.diagnose.phases import total_by_phase

        return total_by_phase(c.phases for c in self.compile_times)

    @property
    def failures(self) -> tuple[CompileTime, ...]:
        """Compiles that raised."""
        return tuple(c for c in self.compile_times if c.fail_type)

    def to_json(self) -> dict[str, Any]:
        """The trace extras of the ``--json`` document (see docs/diagnose-trace.md)."""
        return {
            "compile_time_s": {
                "total": round(self.total_compile_s, 6),
                "unknown": self.unknown_time,  # compiles with no time in the trace
                "phases": _phases(self.phases),
                "per_compile": [{**_asdict(c), **_split(c.compile_id),
                                 "seconds": None if c.seconds is None else round(c.seconds, 6),
                                 "restart_reasons": list(c.restart_reasons),
                                 "phases": _phases(c.phases),
                                 "spans": [{"start": s, "seconds": round(d, 6),
                                            "phases": _phases(p)} for s, d, p in c.spans]}
                                for c in self.compile_times],
                "per_frame": [{**_asdict(f), **_split(f.frame_id, "frame_id"),
                               "seconds": round(f.seconds, 6),
                               "phases": _phases(f.phases)} for f in self.frame_times],
            },
            "failed_compiles": [{"rank": c.rank, **_split(c.compile_id), "function": c.function,
                                 "fail_type": c.fail_type, "fail_reason": c.fail_reason}
                                for c in self.failures],
            "similar_graphs": [{
                "rank": s.rank, **_split(s.frame_id, "frame_id"), "function": s.function,
                "compile_ids": [split_id(c)[0] for c in s.compile_ids], "ops": s.ops,
                "inputs": [{"source": src, "sizes": list(sizes)} for src, sizes in s.inputs],
            } for s in self.similar_graphs],
            "rank_view": {
                "ranks": [{**_asdict(r), "compile_time_s": round(r.compile_time_s, 6),
                           "dynamic": list(r.dynamic)} for r in self.ranks],
                "divergences": [{"kind": d.kind, "subject": d.subject, "message": d.message,
                                 "values": [{"rank": r, "value": v} for r, v in d.values]}
                                for d in self.divergences],
            },
            "pgo": {"loaded": self.pgo_loaded, "written_dynamic": list(self.pgo_written),
                    "recompiled_anyway": [_asdict(p) for p in self.pgo]},
            "processes": [_asdict(p) for p in self.processes],
            "trace_stats": {"kinds": dict(sorted(self.kinds.items())),
                            "unknown_kinds": dict(sorted(self.unknown_kinds.items())),
                            "payload_mismatch": self.payload_mismatch},
        }


def _phases(phases: tuple[tuple[str, float], ...]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in phases}

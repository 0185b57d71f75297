"""The parts of a bench result beyond its variations: the environment, ranks, pgo passes, replay,
pad buckets, restarts.

Each has ``to_dict()`` (its object in the bench document) and a tolerant ``from_dict()``;
:mod:`dyncli.bench.core.result` puts them together. No torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core.buckets import BucketPlan
from dyncli.bench.core.caches import read_hits
from dyncli.bench.core.status import Status

NAN = float("nan")


@dataclass(frozen=True)
class PadTarget:
    """pad: the bucket a shape ran at (``None``: that dim was not padded)."""

    batch: int | None
    seq: int | None
    unpadded: bool = False  # above the largest bucket: ran at its own size

    def to_dict(self) -> dict[str, Any]:
        """The ``padded_to`` object of a variation."""
        return {"batch": self.batch, "seq": self.seq, "unpadded": self.unpadded}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PadTarget:
        """Read ``padded_to`` back."""
        return cls(f.opt_int(d.get("batch")), f.opt_int(d.get("seq")), f.flag(d.get("unpadded")))


@dataclass
class RankStep:
    """One variation as one rank ran it under ``--nproc``."""

    index: int
    batch_size: int | None
    seq_len: int | None
    compiles: int = 0
    first_call_s: float = NAN
    step_ms: float = NAN  # median of the timed steps, the collective excluded
    wait_ms: float = 0.0  # time in the collective after this variation's steps
    recompile_reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """One ``runs[].ranks[].steps[]`` entry."""
        return {"index": self.index, "batch_size": self.batch_size, "seq_len": self.seq_len,
                "compiles": self.compiles, "first_call_s": self.first_call_s,
                "step_ms": self.step_ms, "wait_ms": self.wait_ms,
                "recompile_reasons": self.recompile_reasons}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RankStep:
        """Read a rank's step back."""
        return cls(f.integer(d.get("index")), f.opt_int(d.get("batch_size")),
                   f.opt_int(d.get("seq_len")), f.integer(d.get("compiles")),
                   f.num(d.get("first_call_s")), f.num(d.get("step_ms")),
                   f.num(d.get("wait_ms"), 0.0), f.texts(d.get("recompile_reasons")))


@dataclass
class RankResult:
    """One rank of a ``--nproc`` run: what it compiled, how long it stepped, how long it waited."""

    rank: int
    status: Status = Status.PASS
    error: str = ""
    compiles: int = 0
    compile_time_s: float = 0.0
    first_step_s: float = NAN
    step_ms: float = NAN  # median of every timed step of the rank, collective excluded
    wait_ms: float = 0.0  # total time in the collective that ends each step
    busy_s: float = 0.0  # time in the model calls (compiles included), waits excluded
    steps: list[RankStep] = field(default_factory=list)
    last_lines: list[str] = field(default_factory=list)  # a failed process's last stderr lines

    def to_dict(self) -> dict[str, Any]:
        """One ``runs[].ranks[]`` entry (also the file each rank writes as it goes)."""
        return {
            "rank": self.rank, "status": self.status, "error": self.error or None,
            "compiles": self.compiles, "compile_time_s": self.compile_time_s,
            "first_step_s": self.first_step_s, "step_ms": self.step_ms, "wait_ms": self.wait_ms,
            "busy_s": self.busy_s, "last_lines": self.last_lines,
            "steps": [s.to_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RankResult:
        """Read a rank back."""
        return cls(f.integer(d.get("rank")), Status.parse(d.get("status")), f.text(d.get("error")),
                   f.integer(d.get("compiles")), f.num(d.get("compile_time_s"), 0.0),
                   f.num(d.get("first_step_s")), f.num(d.get("step_ms")),
                   f.num(d.get("wait_ms"), 0.0), f.num(d.get("busy_s"), 0.0),
                   [RankStep.from_dict(s) for s in f.objs(d.get("steps"))],
                   f.texts(d.get("last_lines")))


@dataclass
class PgoPass:
    """pgo: one of its passes (``cold`` records the profile, ``warm`` is the measured one)."""

    name: str
    compiles: int | None = None
    compile_time_s: float | None = None
    wall_s: float | None = None
    state_files: list[str] | None = None
    state_loaded: bool | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """One ``runs[].passes[]`` entry: the keys that pass has."""
        out: dict[str, Any] = {"pass": self.name}
        for key in ("error", "compiles", "compile_time_s", "wall_s", "state_files",
                    "state_loaded"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PgoPass:
        """Read a pass back."""
        files = d.get("state_files")
        return cls(f.text(d.get("pass")), f.opt_int(d.get("compiles")),
                   f.opt_num(d.get("compile_time_s")), f.opt_num(d.get("wall_s")),
                   f.texts(files) if isinstance(files, list) else None,
                   f.opt_flag(d.get("state_loaded")), f.opt_text(d.get("error")))


@dataclass
class Replay:
    """``--replay``: the whole stream run for real, against the cost model's prediction."""

    measured_s: float
    predicted_s: float
    compiles: int | None = None
    interleaved: bool = False  # taking turns with every strategy and eager, in chunks
    # wall seconds of the replay's requests that compiled (their compile, the wait for
    # inductor's workers, the call): beside the prediction's compile charge (the less of wall
    # and CPU, stream.compile_s) it tells a compile that waited for the CPU from a steady
    # state that moved
    compile_s: float | None = None
    # the caches torch counted hits of during the replay's requests (``cache_hits`` of a
    # variation): under --warm-cache the replay finds the entries the measurement wrote, so its
    # compiles are hits where the prediction priced what the measurement paid
    cache_hits: dict[str, int] = field(default_factory=dict)
    # Python's full garbage collections inside the replay's requests (count, wall seconds):
    # part of measured_s and of no prediction (a compile's garbage is freed by one, in some
    # later request; dyncli.bench.collector). None: not counted (a document from before)
    gc_full: int | None = None
    gc_full_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``runs[].replay`` object."""
        out: dict[str, Any] = {"measured_s": self.measured_s, "predicted_s": self.predicted_s}
        if self.compiles is not None:
            out["compiles"] = self.compiles
        if self.compile_s is not None:
            out["compile_s"] = self.compile_s
        if self.gc_full is not None:
            out |= {"gc_full": self.gc_full, "gc_full_s": self.gc_full_s}
        if self.interleaved:
            out["interleaved"] = True
        if self.cache_hits:
            out["cache_hits"] = dict(self.cache_hits)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Replay:
        """Read ``replay`` back."""
        return cls(f.num(d.get("measured_s")), f.num(d.get("predicted_s")),
                   f.opt_int(d.get("compiles")), f.flag(d.get("interleaved")),
                   f.opt_num(d.get("compile_s")), read_hits(d.get("cache_hits")),
                   f.opt_int(d.get("gc_full")), f.opt_num(d.get("gc_full_s")))


@dataclass(frozen=True)
class BucketChoice:
    """``--buckets auto``: the chosen buckets, and the plans they were chosen from (predicted)."""

    chosen: tuple[int, ...]
    max_buckets: int | None
    compile_s_each: float  # what one compile costs, from the probe pass: min(wall, CPU)
    measured_latency_s: dict[str, float]  # per pow2 bucket the probe measured
    plans: dict[str, BucketPlan]  # auto, pow2 and none
    probe_compiles: int = 0
    probe_compile_time_s: float = 0.0
    compile_wall_s_each: float | None = None  # the same median at wall (None: not recorded)

    def to_dict(self) -> dict[str, Any]:
        """The ``runs[].buckets`` object."""
        return {"chosen": list(self.chosen), "max_buckets": self.max_buckets,
                "compile_s_each": self.compile_s_each,
                "compile_wall_s_each": self.compile_wall_s_each,
                "measured_latency_s": dict(self.measured_latency_s),
                "plans": {k: p.as_dict() for k, p in self.plans.items()},
                "probe": {"buckets": "pow2", "compiles": self.probe_compiles,
                          "compile_time_s": self.probe_compile_time_s}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BucketChoice:
        """Read ``buckets`` back."""
        probe = f.obj(d.get("probe"))
        return cls(chosen=f.ints(d.get("chosen")),
                   max_buckets=f.opt_int(d.get("max_buckets")),
                   compile_s_each=f.num(d.get("compile_s_each"), 0.0),
                   measured_latency_s={str(k): f.num(v) for k, v in
                                       f.obj(d.get("measured_latency_s")).items()},
                   plans={str(k): BucketPlan.from_dict(v) for k, v in f.obj(d.get("plans")).items()
                          if isinstance(v, dict)},
                   probe_compiles=f.integer(probe.get("compiles")),
                   probe_compile_time_s=f.num(probe.get("compile_time_s"), 0.0),
                   compile_wall_s_each=f.opt_num(d.get("compile_wall_s_each")))


@dataclass(frozen=True)
class WarmStart:
    """``--start warm``: a strategy in a cold then a warm fresh process over one cache directory.

    ``status``/``error`` say how the two processes ended; the counts are there when both ran.
    """

    status: Status
    error: str | None = None
    cold_compiles: int | None = None
    cold_compile_time_s: float | None = None
    compiles: int | None = None  # the warm process's
    compile_time_s: float | None = None
    fx_cache_hits: int | None = None
    cold_event_s: tuple[float, ...] | None = None  # each compile's seconds, in stream order
    warm_event_s: tuple[float, ...] | None = None

    @property
    def measured(self) -> bool:
        """Whether both processes ran and the warm one's compiles were recorded."""
        return self.warm_event_s is not None

    def to_dict(self) -> dict[str, Any]:
        """The ``runs[].start`` object."""
        out: dict[str, Any] = {"status": self.status, "error": self.error}
        if self.measured:
            out |= {"cold_compiles": self.cold_compiles,
                    "cold_compile_time_s": self.cold_compile_time_s,
                    "compiles": self.compiles, "compile_time_s": self.compile_time_s,
                    "fx_cache_hits": self.fx_cache_hits,
                    "cold_event_s": list(self.cold_event_s or ()),
                    "warm_event_s": list(self.warm_event_s or ())}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WarmStart:
        """Read ``start`` back."""
        warm = d.get("warm_event_s")
        return cls(status=Status.parse(d.get("status")), error=f.opt_text(d.get("error")),
                   cold_compiles=f.opt_int(d.get("cold_compiles")),
                   cold_compile_time_s=f.opt_num(d.get("cold_compile_time_s")),
                   compiles=f.opt_int(d.get("compiles")),
                   compile_time_s=f.opt_num(d.get("compile_time_s")),
                   fx_cache_hits=f.opt_int(d.get("fx_cache_hits")),
                   cold_event_s=tuple(f.floats(d.get("cold_event_s"))),
                   warm_event_s=tuple(f.floats(warm)) if isinstance(warm, list) else None)


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
    matmul_precision: str | None = None  # torch.get_float32_matmul_precision() during the run

    def to_dict(self) -> dict[str, Any]:
        """The ``environment`` object."""
        return {"dyncli": self.dyncli, "torch": self.torch, "python": self.python,
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype,
                "threads": self.threads} | ({"matmul_precision": self.matmul_precision}
                                            if self.matmul_precision is not None else {})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Environment:
        """Read ``environment`` back (absent fields: empty strings)."""
        return cls(f.text(d.get("dyncli")), f.text(d.get("torch")), f.text(d.get("python")),
                   f.text(d.get("device")), f.text(d.get("device_name")), f.text(d.get("dtype")),
                   f.opt_int(d.get("threads")), f.opt_text(d.get("matmul_precision")))

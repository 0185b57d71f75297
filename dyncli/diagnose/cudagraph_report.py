"""The CUDA-graph part of a diagnosis: recordings per graph and size, skips, re-record limits.

Plain frozen dataclasses (built by ``dyncli.diagnose.cudagraphs``), with no dependency on the
rest of ``dyncli.diagnose`` so that ``model.Diagnosis`` can hold a ``CudagraphReport`` without
an import cycle. ``to_json`` is the ``cudagraphs`` key of ``--json`` (docs/diagnose.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dyncli.logparse.events import UserLoc, split_id

UNKNOWN = "?"  # the size of a recording only a trace shows: "? (4/1)", per compile


def _id(text: str, name: str = "compile_id") -> dict[str, Any]:
    bare, generation, process = split_id(text)
    return {name: bare, "generation": generation, "process": process}


def _s(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 6)


@dataclass(frozen=True)
class Recording:
    """One CUDA graph recorded: where (compile, graph), for which size, and how long it took.

    ``key``: torch's symint key (``4``, ``(4, 16)``; "" for a graph without symints; None when
    the input does not say: a trace alone); ``size``: what told this size apart (the inputs
    whose shapes differ between the frame's recordings, else the key; ``? (4/1)`` when only
    the compile is known); ``seconds``: the
    ``CUDAGraphNode.record`` span of the trace (None without a trace); ``rerecord``: this graph
    was recorded for this size before.
    """

    rank: int | None
    compile_id: str
    graph: str  # torch's name of the recorded function (partition_0, or its number before 2.11)
    key: str | None
    size: str
    seconds: float | None = None
    mode: str = ""
    graph_id: int | None = None
    rerecord: bool = False
    line: int = 0
    source: str = "log"  # log | trace | log+trace


@dataclass(frozen=True)
class FrameRecordings:
    """A compiled frame's recordings summed up: per size, how many, and their seconds."""

    rank: int | None
    frame_id: str
    function: str
    compile_ids: tuple[str, ...]
    recordings: int
    # (size, recordings, seconds or None); a size of UNKNOWN ("? (4/1)") holds the recordings
    # of one compile whose sizes the input does not name (a trace alone)
    sizes: tuple[tuple[str, int, float | None], ...]
    rerecords: int = 0
    seconds: float | None = None  # all its recordings (None: no trace time for any)

    @property
    def distinct_sizes(self) -> int:
        """How many sizes (that the input names) got a CUDA graph of their own."""
        return sum(not size.startswith(UNKNOWN) for size, _, _ in self.sizes)


@dataclass(frozen=True)
class Skip:
    """Graphs run without CUDA graphs: one row per reason (and compile)."""

    rank: int | None
    compile_id: str
    kind: str
    reason: str
    user: UserLoc | None = None
    count: int = 1
    sources: tuple[str, ...] = ("log",)
    line: int = 0


@dataclass(frozen=True)
class GraphError:
    """An error (or warning) of the CUDA-graph trees while the graphs ran, one row per kind
    and place (``dyncli.logparse.cudagraph_events.ERROR_KINDS``)."""

    rank: int | None
    kind: str
    message: str
    user: UserLoc | None = None  # the innermost frame of the stack torch names
    count: int = 1
    line: int = 0
    raised: bool = False  # the log shows one of them raised: the program stopped there


@dataclass(frozen=True)
class LimitHit:
    """2.15's ``cudagraph_dynamic_shape_rerecord_limit`` reached: new sizes of it run eager."""

    rank: int | None
    compile_id: str
    mode: str
    limit: int | None
    line: int = 0


@dataclass(frozen=True)
class CudagraphReport:
    """Everything the input says about CUDA graphs (``None`` on the Diagnosis when nothing)."""

    recordings: tuple[Recording, ...] = ()
    frames: tuple[FrameRecordings, ...] = ()
    skips: tuple[Skip, ...] = ()
    limit_hits: tuple[LimitHit, ...] = ()
    errors: tuple[GraphError, ...] = ()
    # compiles whose graph partitions were captured (cudagraphable), and the reasons torch
    # kept ops out of them where it did with CUDA graphs on
    captured_compiles: tuple[str, ...] = ()
    partition_reasons: tuple[str, ...] = ()
    # per compile that logged its partitions (2.9+): (compile id, partitions, outside CUDA
    # graphs); and the ops kept out, (reason, IR, count): what runs eagerly between replays
    partitions: tuple[tuple[str, int, int], ...] = ()
    kept_out: tuple[tuple[str, str, int], ...] = ()
    distinct_sizes_warned: int = 0  # the largest N of torch's "observed N distinct sizes"
    # the symint keys of the tree lines ("Recording cudagraph tree for symint key N": a size
    # met, warmed up, and recorded on its next call): what a log of INFO lines alone shows
    tree_keys: tuple[str, ...] = ()
    tree_lines: int = 0  # the tree lines themselves: one per graph and key (pytorch#124506: 2, one key)
    timed: bool = False  # recordings carry seconds from a trace's CUDAGraphNode.record spans
    dropped: int = 0  # recordings past the bound kept (counted, not listed)
    notes: tuple[str, ...] = ()  # how the log and the trace were joined, when they were not

    @property
    def record_seconds(self) -> float | None:
        """Seconds of all recordings (None when the input has no time for any)."""
        times = [r.seconds for r in self.recordings if r.seconds is not None]
        return sum(times) if times else None

    def to_json(self) -> dict[str, Any]:
        """The ``cudagraphs`` object of the ``--json`` document."""
        return {
            "recordings": len(self.recordings) + self.dropped,
            "record_s": _s(self.record_seconds),
            "timed": self.timed,
            "per_frame": [{
                "rank": f.rank, **_id(f.frame_id, "frame_id"), "function": f.function,
                "compile_ids": [split_id(c)[0] for c in f.compile_ids],
                "recordings": f.recordings, "distinct_sizes": f.distinct_sizes,
                "rerecords": f.rerecords, "record_s": _s(f.seconds),
                "sizes": [{"size": size, "recordings": n, "record_s": _s(secs)}
                          for size, n, secs in f.sizes],
            } for f in self.frames],
            "per_recording": [{
                "rank": r.rank, **_id(r.compile_id), "graph": r.graph, "mode": r.mode,
                "graph_id": r.graph_id, "key": r.key, "size": r.size,
                "record_s": _s(r.seconds), "rerecord": r.rerecord, "line": r.line,
                "source": r.source,
            } for r in self.recordings],
            "skips": [{
                "rank": x.rank, **_id(x.compile_id), "kind": x.kind, "reason": x.reason,
                "count": x.count, "sources": list(x.sources), "line": x.line,
                "user_file": x.user.file if x.user else None,
                "user_line": x.user.line if x.user else None,
            } for x in self.skips],
            "errors": [{
                "rank": x.rank, "kind": x.kind, "message": x.message, "count": x.count,
                "line": x.line, "user_file": x.user.file if x.user else None,
                "user_line": x.user.line if x.user else None,
                "user_function": x.user.function if x.user else None,
                "raised": x.raised,
            } for x in self.errors],
            "limit_hits": [{"rank": x.rank, **_id(x.compile_id), "mode": x.mode,
                            "limit": x.limit, "line": x.line} for x in self.limit_hits],
            "captured_compiles": [split_id(c)[0] for c in self.captured_compiles],
            "partition_reasons": list(self.partition_reasons),
            "partitions": [{**_id(c), "partitions": n, "outside": other}
                           for c, n, other in self.partitions],
            "kept_out": [{"reason": r, "ir": ir, "count": n} for r, ir, n in self.kept_out],
            "distinct_sizes_warned": self.distinct_sizes_warned,
            "tree_keys": list(self.tree_keys), "tree_lines": self.tree_lines,
            "dropped": self.dropped,
            "notes": list(self.notes),
        }

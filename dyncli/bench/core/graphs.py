"""What CUDA graphs did in a run: recordings, their seconds, the pool, how calls were served.

Pure: no torch. bench measures these at the source on CUDA, under a mode that records CUDA
graphs (``reduce-overhead``, ``max-autotune``; :mod:`dyncli.bench.graph_watch`): per shape, how
each of its first calls was served, how long each took, what recording its graph cost and how
much the graphs' memory pool grew; per run, torch's own counters and the pool. On CPU, and under
the other modes, none of this exists: the JSON has no ``cudagraphs`` key (absent, not zero).

How a call is served, as torch's CUDA-graph trees serve it (``_inductor/cudagraph_trees.py``):
the first call of a new size runs a warm-up (``no_graph``), the second records the size's graph
(``recorded``), later calls replay it (``replayed``); a size torch does not record (a skip, a
size outside ``cudagraph_capture_sizes``, past ``cudagraph_dynamic_shape_rerecord_limit``) keeps
running without graphs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import fields as f

REPLAYED, RECORDED, NO_GRAPH = "replayed", "recorded", "no_graph"
KINDS = (REPLAYED, RECORDED, NO_GRAPH)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20, "mib": 1 << 20,
          "mb": 1000**2, "g": 1 << 30, "gib": 1 << 30, "gb": 1000**3, "t": 1 << 40,
          "tib": 1 << 40, "tb": 1000**4}
_BYTES = re.compile(r"^\s*(\d{1,15}(?:\.\d{1,9})?)\s*([a-zA-Z]{0,3})\s*$")


def parse_bytes(text: str) -> int:
    """``"2GiB"``, ``"512 MiB"``, ``"1.5GB"`` or ``"1048576"`` as bytes (``ValueError``: not a
    size). Binary units are KiB/MiB/GiB/TiB (and K/M/G/T), decimal ones kB/MB/GB/TB."""
    m = _BYTES.match(text)
    unit = _UNITS.get(m[2].lower()) if m else None
    if m is None or unit is None:
        raise ValueError(f"expected a size like 2GiB, 512MiB or a number of bytes, got "
                         f"{text[:40]!r}")
    return int(float(m[1]) * unit)


@dataclass
class ShapeGraphs:
    """One shape under a CUDA-graph mode: its first calls as bench observed them.

    ``calls[k]`` is how the shape's k-th call was served (k = 0 is its first call, the one
    that compiles when the shape is new; the next ones are the untimed calls bench makes until
    a call replays); ``call_s[k]`` that call's seconds; ``recordings``/``record_s`` what torch's
    recording callback saw during them; ``pool_growth_bytes`` how much the graphs' memory pool
    grew over them.
    """

    calls: list[str] = field(default_factory=list)
    call_s: list[float] = field(default_factory=list)
    recordings: int = 0
    record_s: float = 0.0
    pool_growth_bytes: int | None = None

    @property
    def steady(self) -> str:
        """How the shape's later calls are served: as its last observed call was."""
        return self.calls[-1] if self.calls else NO_GRAPH

    def kind_at(self, occurrence: int) -> str:
        """How the shape's ``occurrence``-th request is served (0: its first)."""
        return self.calls[occurrence] if occurrence < len(self.calls) else self.steady

    def to_dict(self) -> dict[str, Any]:
        """A variation's ``cudagraphs`` object."""
        return {"calls": list(self.calls), "call_s": list(self.call_s),
                "recordings": self.recordings, "record_s": self.record_s,
                "pool_growth_bytes": self.pool_growth_bytes}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShapeGraphs:
        """Read a variation's ``cudagraphs`` back (unknown call kinds are left out)."""
        return cls([k for k in f.texts(d.get("calls")) if k in KINDS], f.floats(d.get("call_s")),
                   f.integer(d.get("recordings")), f.num(d.get("record_s"), 0.0),
                   f.opt_int(d.get("pool_growth_bytes")))


@dataclass(frozen=True)
class GraphPlan:
    """A way to serve the stream under a CUDA-graph mode, and what it costs (predicted).

    ``name``: ``record-all`` (what bench measured: every size records its graph), ``capture``
    (inputs padded up to ``capture_sizes``, only those recorded) or ``rerecord-limit`` (the
    first ``limit`` sizes recorded, later new sizes without graphs). ``fits``: within the
    memory budget (no budget: True).
    """

    name: str
    total_s: float
    record_s: float
    recordings: int
    pool_bytes: int | None
    capture_sizes: tuple[int, ...] | None = None
    limit: int | None = None
    pad_waste: float | None = None
    fits: bool = True
    chosen: bool = False

    def to_dict(self) -> dict[str, Any]:
        """One ``cudagraphs.plans[]`` entry."""
        out: dict[str, Any] = {"name": self.name, "total_s": self.total_s,
                               "record_s": self.record_s, "recordings": self.recordings,
                               "pool_bytes": self.pool_bytes, "fits": self.fits,
                               "chosen": self.chosen}
        if self.capture_sizes is not None:
            out["capture_sizes"] = list(self.capture_sizes)
        if self.limit is not None:
            out["limit"] = self.limit
        if self.pad_waste is not None:
            out["pad_waste"] = self.pad_waste
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GraphPlan:
        """Read a plan back."""
        sizes = d.get("capture_sizes")
        return cls(f.text(d.get("name")), f.num(d.get("total_s")), f.num(d.get("record_s"), 0.0),
                   f.integer(d.get("recordings")), f.opt_int(d.get("pool_bytes")),
                   f.ints(sizes) if isinstance(sizes, list) else None, f.opt_int(d.get("limit")),
                   f.opt_num(d.get("pad_waste")), f.flag(d.get("fits"), True),
                   f.flag(d.get("chosen")))


@dataclass
class RunGraphs:
    """What CUDA graphs did over one run (``runs[].cudagraphs``).

    ``recordings``/``record_s``: torch's recordings over the run and their seconds;
    ``pool_bytes``: the private memory pools' size at the end (the graphs' pool);
    ``skips`` and ``recorded_non_static_inputs``: torch's own counters
    (``counters["inductor"]``); ``calls``: the share of the stream's requests served each way
    (:func:`stream_calls`); ``plans``: the ways to serve the stream, costed
    (:mod:`dyncli.bench.core.capture`), one of them ``chosen``.
    """

    recordings: int | None = None
    record_s: float | None = None
    pool_bytes: int | None = None
    skips: int | None = None
    recorded_non_static_inputs: int | None = None
    calls: dict[str, float] = field(default_factory=dict)
    plans: list[GraphPlan] = field(default_factory=list)
    budget_bytes: int | None = None

    @property
    def chosen(self) -> GraphPlan | None:
        """The plan the recommendation applies for this run (None: none fits the budget)."""
        return next((p for p in self.plans if p.chosen), None)

    def to_dict(self) -> dict[str, Any]:
        """The ``runs[].cudagraphs`` object."""
        return {"recordings": self.recordings, "record_s": self.record_s,
                "pool_bytes": self.pool_bytes, "skips": self.skips,
                "recorded_non_static_inputs": self.recorded_non_static_inputs,
                "calls": dict(self.calls), "budget_bytes": self.budget_bytes,
                "plans": [p.to_dict() for p in self.plans]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunGraphs:
        """Read ``cudagraphs`` back."""
        return cls(f.opt_int(d.get("recordings")), f.opt_num(d.get("record_s")),
                   f.opt_int(d.get("pool_bytes")), f.opt_int(d.get("skips")),
                   f.opt_int(d.get("recorded_non_static_inputs")),
                   {k: f.num(v) for k, v in f.obj(d.get("calls")).items() if k in KINDS},
                   [GraphPlan.from_dict(p) for p in f.objs(d.get("plans"))],
                   f.opt_int(d.get("budget_bytes")))


def occurrences(ids: Sequence[int]) -> list[int]:
    """Per request: how many requests of its shape came before it."""
    seen: dict[int, int] = {}
    out = []
    for i in ids:
        out.append(seen.get(i, 0))
        seen[i] = out[-1] + 1
    return out


def stream_calls(ids: Sequence[int], shapes: Mapping[int, ShapeGraphs]) -> dict[str, float]:
    """The share of the stream's requests that replayed a graph, recorded one, or ran without
    graphs, each request served as its shape's call at that occurrence was observed."""
    counts = dict.fromkeys(KINDS, 0)
    n = 0
    for shape, k in zip(ids, occurrences(ids), strict=True):
        g = shapes.get(shape)
        if g is not None and g.calls:
            counts[g.kind_at(k)] += 1
            n += 1
    return {kind: c / n for kind, c in counts.items()} if n else {}

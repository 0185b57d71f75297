"""What a TORCH_TRACE trace tells beyond the shared Diagnosis: time, failures, similar graphs,
ranks and PGO.

``TraceAccumulator`` watches the same event stream as ``dyncli.diagnose.analyzer.Analyzer`` and
keeps only per-compile facts (bounded by the number of compiles, not the trace size);
``finish(diagnosis)`` combines them with the Diagnosis into a ``TraceReport``:

- compile time per compile id and per frame (restarts included; the field each release
  writes is chosen by ``trace_events.compile_seconds``; a compile without one is unknown,
  never 0), and the failed compiles with their reason;
- similar graphs: compiles of one frame whose ``dynamo_output_graph`` has the same sequence
  of operations and differs only in sizes (the reference guide's "Finding Similar Graphs"),
  with the inputs whose sizes differ: candidates for one dynamic graph;
- ranks: per-rank compiles and recompiles, and where ranks diverge (compile counts of the
  same frame, or different dynamic dims for the same source);
- PGO: state was loaded (``get_*_code_state``) yet the frame recompiled for size.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

from dyncli.diagnose import phases as ph
from dyncli.diagnose.branches import crossing
from dyncli.diagnose.model import (
    Diagnosis,
    FrameReport,
    RecompileReport,
    SpecializationReport,
    compile_id_key,
    rank_key,
)
from dyncli.diagnose.trace_report import (
    CompileTime,
    Divergence,
    FrameTime,
    PgoFinding,
    RankView,
    SimilarGraphs,
    TraceReport,
)
from dyncli.logparse import events as ev
from dyncli.logparse import trace_events as te
from dyncli.logparse.events import split_id
from dyncli.sources import is_input

_PLACEHOLDER = re.compile(r"[^a-zA-Z0-9]+")
_SIZE_KEY = re.compile(r"^(?P<base>.+?)(?::(?P<dim>\d+))?$")


class _Run(NamedTuple):
    """One compile attempt's ``CompileMetrics``, as the accumulator keeps it."""

    function: str | None
    file: str | None
    first_line: int | None
    fail_type: str | None
    fail_reason: str | None
    restart_reasons: tuple[str, ...]
    compile_time_s: float | None
    compile_time_field: str | None
    keys: tuple[str, ...]
    values: tuple[float, ...]

    @property
    def numbers(self) -> dict[str, float]:
        """``CompileMetrics.numbers`` as a dict."""
        return dict(zip(self.keys, self.values, strict=True))


@functools.lru_cache(maxsize=4096)  # one TENSOR_MATCH per input per compile: few sources
def _placeholder(source: str) -> str:
    return _PLACEHOLDER.sub("_", source)


class TraceAccumulator:
    """Collects the trace-only events of one or more trace files (bounded memory)."""

    def __init__(self) -> None:
        self._metrics: dict[tuple[int | None, str], list[_Run]] = defaultdict(list)
        self._graphs: dict[tuple[int | None, str], dict[str, te.OutputGraph]] = defaultdict(dict)
        self._shared: dict[Any, Any] = {}  # one copy of each equal tuple the graphs keep
        self._loaded: dict[tuple[int | None, str], set[str]] = defaultdict(set)
        self._loaded_any: set[int | None] = set()
        self._written: tuple[str, ...] = ()
        # graph placeholder name -> guard source, per frame (print_readable names a
        # placeholder by replacing every non-alphanumeric run of its source with "_")
        self._sources: dict[tuple[int | None, str], dict[str, str]] = defaultdict(dict)

    def feed(self, event: ev.Event) -> None:
        """Take one event; shared events are ignored here (the Analyzer has them)."""
        cid = event.compile_id
        if isinstance(event, te.CompileMetrics) and cid is not None:
            runs = self._metrics[(event.rank, cid.key)]
            if len(runs) < 16:  # restart attempts of one compile; a repeated trace reuses ids
                runs.append(self._run(event))
        elif isinstance(event, te.OutputGraph) and cid is not None:
            # Kept per compile: only what _similar reads (the inputs' sizes, not every node's),
            # and one copy of each distinct op sequence, input list and (input, size) pair
            # (recompiles of a frame repeat them; parameters keep their sizes).
            inputs = {name.lower() for name in event.inputs}
            share = self._shared.setdefault
            self._graphs[(event.rank, cid.frame_key)][cid.key] = dataclasses.replace(
                event, sizes=share(sizes := tuple(share(p, p) for p in event.sizes
                                                  if p[0] in inputs), sizes),
                inputs=share(event.inputs, event.inputs), ops=share(event.ops, event.ops))
        elif isinstance(event, ev.TensorMatch) and cid is not None:
            names = self._sources[(event.rank, cid.frame_key)]
            if len(names) < 4096:
                names[_placeholder(event.source)] = event.source
        elif isinstance(event, te.CodeState) and event.action == "put":
            self._written = tuple(dict.fromkeys(e.source for e in event.entries if e.dynamic))
        elif isinstance(event, te.CodeState) and event.action == "get":
            self._loaded_any.add(event.rank)
            for entry in event.entries:
                frame = self._loaded[(event.rank, entry.frame)]
                if entry.dynamic:
                    frame.add(entry.source)

    def _run(self, m: te.CompileMetrics) -> _Run:
        """What ``_compile_times`` reads of one compile attempt, compactly: a tuple, its
        numbers as values beside one shared tuple of their field names, names interned
        (a trace of thousands of compiles kept ~1.5 KB per compile as events)."""
        share = self._shared.setdefault
        keys = share(keys := tuple(k for k, _ in m.numbers), keys)
        text = lambda s: None if s is None else sys.intern(s)  # noqa: E731
        return _Run(text(m.function), text(m.file), m.first_line, text(m.fail_type),
                    m.fail_reason, m.restart_reasons, m.compile_time_s,
                    m.compile_time_field, keys, tuple(v for _, v in m.numbers))

    # ------------------------------------------------------------ result

    def finish(self, diag: Diagnosis, kinds: Counter[str] | None = None,
               unknown: Counter[str] | None = None, payload_mismatch: int = 0) -> TraceReport:
        """Combine the collected facts with ``diag`` into the report."""
        frames = {(f.rank, f.frame_id): f for f in diag.frames}
        times = self._compile_times(frames)
        return TraceReport(
            compile_times=times, frame_times=self._frame_times(diag, times),
            similar_graphs=self._similar(frames), ranks=self._rank_views(diag, times),
            divergences=self._divergences(diag), pgo=self._pgo(diag),
            pgo_loaded=bool(self._loaded_any), pgo_written=self._written, kinds=dict(kinds or {}),
            unknown_kinds=dict(unknown or {}), payload_mismatch=payload_mismatch)

    def _compile_times(self, frames: dict[tuple[int | None, str], FrameReport]) -> tuple[CompileTime, ...]:
        out = []
        for (rank, key), runs in self._metrics.items():
            last = runs[-1]
            frame = frames.get((rank, key.rsplit("/", 1)[0]))
            failed = next((r for r in reversed(runs) if r.fail_type), None)
            spans: list[tuple[float | None, float, tuple[tuple[str, float], ...]]] = []
            phases: dict[str, float] = {}
            for r in runs:  # each attempt: when, how long, by phase
                numbers = r.numbers
                split = ph.split(numbers, r.compile_time_s)
                ph.add(phases, split)
                spans.append((ph.start_of(numbers), r.compile_time_s or 0.0, ph.ordered(split)))
            nums = last.numbers
            workers = sum(r.numbers.get("triton_compile_time_us", 0.0) for r in runs) / 1e6
            out.append(CompileTime(
                rank=rank, compile_id=key, function=last.function or (frame.function if frame else ""),
                file=last.file or (frame.file if frame else ""), line=last.first_line,
                seconds=_seconds(runs), attempts=len(runs),
                fail_type=failed.fail_type if failed else None,
                fail_reason=failed.fail_reason if failed else None,
                restart_reasons=tuple(x for r in runs for x in r.restart_reasons),
                phases=ph.ordered(phases),
                guard_count=int(nums["guard_count"]) if "guard_count" in nums else None,
                guard_latency_us=nums.get("guard_latency_us"),
                compile_workers_s=workers or None, spans=tuple(spans),
                seconds_field=next((r.compile_time_field for r in runs if r.compile_time_field),
                                   None)))
        # compiles without any compilation_metrics (torch 2.3-2.4 write none): time unknown
        timed = {(c.rank, c.compile_id) for c in out}
        for f in frames.values():
            for cid in f.compile_ids:
                if (f.rank, cid) not in timed:
                    out.append(CompileTime(rank=f.rank, compile_id=cid, function=f.function,
                                           file=f.file, line=f.first_line, seconds=None))
        return tuple(sorted(out, key=lambda c: (rank_key(c.rank), compile_id_key(c.compile_id))))

    @staticmethod
    def _frame_times(diag: Diagnosis, times: tuple[CompileTime, ...]) -> tuple[FrameTime, ...]:
        per: dict[tuple[int | None, str], float] = defaultdict(float)
        unknown: Counter[tuple[int | None, str]] = Counter()
        phases: dict[tuple[int | None, str], dict[str, float]] = defaultdict(dict)
        for c in times:
            key = (c.rank, c.compile_id.rsplit("/", 1)[0])
            if c.seconds is None:
                unknown[key] += 1
            else:
                per[key] += c.seconds
            ph.add(phases[key], dict(c.phases))
        return tuple(FrameTime(rank=f.rank, frame_id=f.frame_id, function=f.function, file=f.file,
                               line=f.first_line, compiles=f.compiles,
                               seconds=per.get((f.rank, f.frame_id), 0.0),
                               phases=ph.ordered(phases.get((f.rank, f.frame_id), {})),
                               unknown=unknown[(f.rank, f.frame_id)]) for f in diag.frames)

    def _similar(self, frames: dict[tuple[int | None, str], FrameReport]) -> tuple[SimilarGraphs, ...]:
        out = []
        for (rank, frame_id), graphs in self._graphs.items():
            groups: dict[tuple[str, ...], list[te.OutputGraph]] = defaultdict(list)
            for g in graphs.values():
                if g.ops:
                    groups[g.ops].append(g)
            for ops, members in groups.items():
                if len(members) < 2:
                    continue
                members.sort(key=lambda g: compile_id_key(g.compile_id.key if g.compile_id else ""))
                differ = []
                names = self._sources.get((rank, frame_id), {})
                for name in members[0].inputs:
                    raw = [dict(g.sizes).get(name.lower(), ("?",)) for g in members]
                    if len(set(raw)) > 1:
                        differ.append((names.get(name) or te.source_of_input(name),
                                       tuple("[" + ", ".join(r) + "]" for r in raw)))
                if differ:
                    frame = frames.get((rank, frame_id))
                    out.append(SimilarGraphs(
                        rank=rank, frame_id=frame_id, function=frame.function if frame else "",
                        compile_ids=tuple(g.compile_id.key for g in members if g.compile_id),
                        ops=len(ops), inputs=tuple(differ)))
        return tuple(sorted(out, key=lambda s: (rank_key(s.rank), compile_id_key(s.frame_id))))

    @staticmethod
    def _rank_views(diag: Diagnosis, times: tuple[CompileTime, ...]) -> tuple[RankView, ...]:
        out = []
        for rank, process in _participants(diag):
            frames = [f for f in diag.frames if f.rank == rank and _process(f.frame_id) == process]
            mine = [c for c in times if c.rank == rank and _process(c.compile_id) == process]
            dims = {f"{src}:{d}" for f in frames for src, ds in f.dynamic_dims for d in ds}
            bases = {d.split(":")[0] for d in dims}
            dynamic = sorted(dims | {d.source for f in frames for d in f.dynamic_inputs
                                     if d.source not in bases})
            out.append(RankView(
                rank=rank, process=process, frames=len(frames),
                compiles=sum(f.compiles for f in frames),
                recompiles=sum(1 for r in diag.recompiles
                               if r.rank == rank and _process(r.compile_id) == process),
                failed=sum(1 for c in mine if c.fail_type),
                compile_time_s=sum(c.seconds for c in mine if c.seconds is not None),
                dynamic=tuple(dynamic), unknown_time=sum(1 for c in mine if c.seconds is None)))
        return tuple(out)

    @staticmethod
    def _divergences(diag: Diagnosis) -> tuple[Divergence, ...]:
        # one participant per process: a rank that two files claim takes part twice
        who = [p for p in _participants(diag) if p[0] is not None]
        if len(who) < 2:
            return ()
        out = []
        # a function compiled again after torch._dynamo.reset() is a frame per generation
        every: dict[str, dict[tuple[int | None, str], list[FrameReport]]] = defaultdict(dict)
        for f in diag.frames:
            subject = (f"{f.function} ({f.file.rsplit('/', 1)[-1]}:{f.first_line})"
                       if f.function else f"frame {split_id(f.frame_id)[0]}")
            every[subject].setdefault((f.rank, _process(f.frame_id)), []).append(f)
        for subject, lists in sorted(every.items()):
            per = {k: v[-1] for k, v in lists.items()}
            counts = tuple((r, str(sum(f.compiles for f in lists.get(r, ())))) for r in who)
            if len({v for _, v in counts}) > 1:
                out.append(Divergence("compiles", subject, _ranked(counts)))
            sources = sorted({src for f in per.values() for src, _ in f.dynamic_dims}
                             | {_SIZE_KEY.match(d.source)["base"]  # type: ignore[index]
                                for f in per.values() for d in f.dynamic_inputs})
            for src in sources:
                values = []
                for r in who:
                    rf = per.get(r)
                    dims = dict(rf.dynamic_dims).get(src, ()) if rf else ()
                    marked = rf is not None and any(d.source.split(":")[0] == src
                                                    for d in rf.dynamic_inputs)
                    values.append((r, "dims " + ",".join(map(str, dims)) if dims
                                   else ("dynamic" if marked else "static")))
                if len({v for _, v in values}) > 1:
                    out.append(Divergence("dynamic", f"{subject} {src}", _ranked(values)))
        return tuple(out)

    def _pgo(self, diag: Diagnosis) -> tuple[PgoFinding, ...]:
        out = []
        by_frame: dict[tuple[int | None, str], list[str]] = defaultdict(list)
        for r in diag.recompiles:  # indexed once: frames x recompiles grows with generations
            if r.cause in ("size", "stride"):  # what PGO's state records
                by_frame[(r.rank, r.compile_id.split("_")[0].rsplit("/", 1)[0])].append(r.compile_id)
        explain = _Explainer(diag)
        for f in diag.frames:
            if f.rank not in self._loaded_any:
                continue
            loaded = self._loaded.get((f.rank, f"{f.file}:{f.first_line}:{f.function}"))
            size = tuple(by_frame.get((f.rank, f.frame_id), ()))
            if loaded is None or not size:
                continue
            bases = {d.source.split(":")[0] for d in f.dynamic_inputs} - loaded
            allow = tuple(s for s in diag.dynamic_sources if s.split(":")[0] in bases) or tuple(
                sorted(b for b in bases if is_input(b)))
            out.append(PgoFinding(rank=f.rank, function=f.function, file=f.file, line=f.first_line,
                                  loaded_dynamic=tuple(sorted(loaded)), recompiles=size,
                                  allow_list=allow, explained=explain(f.rank, size)))
        return tuple(out)


def _process(cid: str) -> str:
    return split_id(cid)[2]


def _participants(diag: Diagnosis) -> list[tuple[int | None, str]]:
    """(rank, process label) of every process seen, by rank then label."""
    seen = {(f.rank, _process(f.frame_id)) for f in diag.frames}
    seen |= {(r, "") for r in diag.ranks if not any(p[0] == r for p in seen)}
    return sorted(seen, key=lambda p: (rank_key(p[0]), p[1]))


def _ranked(values: Sequence[tuple[tuple[int | None, str], str]]) -> tuple[tuple[int | None, str], ...]:
    """Divergence values per participant: the rank, with the process label when it has one."""
    return tuple((rank, f"{value} [{process}]" if process else value)
                 for (rank, process), value in values)


def _seconds(runs: list[_Run]) -> float | None:
    """A compile's seconds over its restart attempts; None when no attempt has a time."""
    known = [r.compile_time_s for r in runs if r.compile_time_s is not None]
    return sum(known) if known else None


class _Explainer:
    """What caused each recompile that an allow-list cannot remove: a size branch, or a
    specialization by user code. Recompiles and specializations are indexed once: frames with
    PGO state x recompiles x specializations all grow with reset generations."""

    def __init__(self, diag: Diagnosis) -> None:
        self.diag = diag
        self.recompiles: dict[tuple[int | None, str], RecompileReport] = {}
        for r in diag.recompiles:
            self.recompiles.setdefault((r.rank, r.compile_id), r)
        # rank -> (its specializations by user code, in order; source base -> first of them)
        self.specs: dict[int | None, tuple[list[SpecializationReport], dict[str, int]]] = {}

    def _specs(self, rank: int | None) -> tuple[list[SpecializationReport], dict[str, int]]:
        if rank not in self.specs:
            specs = [s for s in self.diag.specializations if s.rank == rank and s.user is not None]
            first: dict[str, int] = {}
            for i, s in enumerate(specs):
                for src in s.sources:
                    first.setdefault(src.split(".")[0], i)
            self.specs[rank] = (specs, first)
        return self.specs[rank]

    def __call__(self, rank: int | None, ids: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
        """For the recompiles ``ids`` (in the diagnosis' order): (id, what, user file:line)."""
        out = []
        for cid in ids:
            r = self.recompiles.get((rank, cid))
            if r is None:
                continue
            c = crossing(r)
            if c is not None:
                where = f"{c.user.file}:{c.user.line}" if c.user else ""
                out.append((r.compile_id, f"the size branch `{c.guard}`", where))
                continue
            # the first specialization (in order) whose source is named in a guard failure
            specs, first = self._specs(rank)
            hits = [i for base, i in first.items() if any(base in x for x in r.reasons)]
            spec = specs[min(hits)] if hits else None
            if spec is not None and spec.user is not None:
                out.append((r.compile_id, f"the specialization of {', '.join(spec.sources)} to "
                            f"{spec.value}", f"{spec.user.file}:{spec.user.line}"))
        return tuple(out)

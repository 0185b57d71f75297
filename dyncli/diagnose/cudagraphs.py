"""CUDA-graph events → ``CudagraphReport``: recordings per frame and size, their seconds, skips.

``CudagraphAccumulator`` watches the Analyzer's event stream (text logs and traces alike) and
keeps the CUDA-graph events of ``dyncli.logparse.cudagraphs`` (bounded: ``MAX_RECORDINGS``).
``finish(frames)`` joins what a text log says (which graph, which size: the symint key, the
input shapes) with what a trace says (how long each ``CUDAGraphNode.record`` took): torch
records the graphs of one compile in one order in both, so the k-th recording of a compile in
the log is its k-th span in the trace (logs before torch 2.11 name no compile: then the
recordings of the whole run are joined in order when both count the same).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from dyncli.diagnose.cudagraph_report import (
    UNKNOWN,
    CudagraphReport,
    FrameRecordings,
    GraphError,
    LimitHit,
    Recording,
    Skip,
)
from dyncli.diagnose.model import FrameReport, compile_id_key, rank_key
from dyncli.logparse import cudagraph_events as cg
from dyncli.logparse import events as ev

MAX_RECORDINGS = 10_000
_DISABLED = "cudagraphs is disabled"  # torch's partition reason when the mode has none


def key_text(ints: tuple[int, ...]) -> str:
    """torch's symint key as it logs it: ``4``, or ``(4, 16)`` for several ints."""
    return str(ints[0]) if len(ints) == 1 else str(ints)


class CudagraphAccumulator:
    """Collects CUDA-graph events; ``finish`` builds the report (None when there were none)."""

    def __init__(self) -> None:
        self._recordings: list[tuple[cg.CudagraphRecording, str | None]] = []
        self._spans: list[cg.CudagraphRecordTime] = []
        self._dropped = 0
        self._pending: dict[tuple[Any, ...], str] = {}  # (rank, pid) -> key of the last tree line
        self._fn_key: dict[tuple[Any, ...], str] = {}  # (rank, pid, compile, function) -> key
        self._skips: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._limits: list[LimitHit] = []
        self._errors: dict[tuple[Any, ...], GraphError] = {}
        self._captured: dict[str, None] = {}
        self._reasons: dict[str, None] = {}
        self._parts: dict[str, tuple[int, int]] = {}  # compile -> (partitions, outside)
        self._kept: Counter[tuple[str, str]] = Counter()  # (reason, IR) of the ops kept out
        self._warned = 0
        self._trees: dict[str, None] = {}  # the keys of the tree lines (sizes met), in order
        self._tree_lines = 0  # each a graph at a key new to it (two graphs: two lines, one key)
        # (rank, resume function, file, log line) of the skips' stacks: the breaks they prove
        self._resumed: dict[tuple[int | None, str, str], int] = {}
        self.seen = False

    def feed(self, event: ev.Event) -> None:
        """Take one CUDA-graph event (``dyncli.logparse.cudagraphs.EVENTS``)."""
        self.seen = True
        proc = (event.rank, event.pid)
        cid = event.compile_id.key if event.compile_id else ""
        if isinstance(event, cg.CudagraphTree):
            self._pending[proc] = event.key
            self._tree_lines += 1
            if len(self._trees) < MAX_RECORDINGS:
                self._trees[event.key] = None
        elif isinstance(event, cg.CudagraphWarmup):
            # the tree line's key belongs to the function it warms up next (one per size)
            if proc in self._pending and len(self._fn_key) < MAX_RECORDINGS:
                self._fn_key[(*proc, cid, event.function)] = self._pending.pop(proc)
        elif isinstance(event, cg.CudagraphRecording):
            key = key_text(event.ints) if event.ints else self._fn_key.get(
                (*proc, cid, event.function), self._pending.get(proc))
            self._keep(self._recordings, (event, key))
        elif isinstance(event, cg.CudagraphRecordTime):
            self._keep(self._spans, event)
        elif isinstance(event, cg.CudagraphSkip):
            self._skip(event, cid)
        elif isinstance(event, cg.CudagraphLimit) and len(self._limits) < 1000:
            self._limits.append(LimitHit(event.rank, str(event.compile_id or ""), event.mode,
                                         event.limit, event.line))
        elif isinstance(event, cg.CudagraphError):
            place = (event.user.file, event.user.line) if event.user else None
            err_key = (event.rank, event.kind, place)
            seen = self._errors.get(err_key)
            if seen is not None:  # (raised where any of them was)
                self._errors[err_key] = dataclasses.replace(
                    seen, count=seen.count + 1, raised=seen.raised or event.raised)
            elif len(self._errors) < 1000:
                self._errors[err_key] = GraphError(event.rank, event.kind, event.message,
                                                   event.user, 1, event.line, raised=event.raised)
        elif isinstance(event, cg.CudagraphManySizes):
            self._warned = max(self._warned, event.sizes)
        elif isinstance(event, cg.CudagraphPartitions):
            if event.cudagraphable and len(self._captured) < MAX_RECORDINGS:
                self._captured[str(event.compile_id or "")] = None
            if (event.cudagraphable or event.other) and len(self._parts) < MAX_RECORDINGS:
                self._parts[str(event.compile_id or "")] = (event.cudagraphable + event.other,
                                                            event.other)
            for i, reason in enumerate(event.reasons):
                if _DISABLED in reason:
                    continue
                if len(self._reasons) < 50:
                    self._reasons[reason] = None
                if len(self._kept) < 200:
                    self._kept[(reason, event.ops[i] if i < len(event.ops) else "")] += 1

    def _keep(self, rows: list[Any], row: Any) -> None:
        if len(rows) < MAX_RECORDINGS:
            rows.append(row)
        else:
            self._dropped += 1

    def resumed(self) -> list[tuple[int | None, str, str, None, int]]:
        """The resume functions the skips' stacks name (``resumed.Named``, no first line): each
        proves a graph break where its name says, as a crash's stack does."""
        return [(rank, fn, file, None, line) for (rank, fn, file), line in self._resumed.items()]

    def _skip(self, e: cg.CudagraphSkip, cid: str) -> None:
        for frame in e.resumes:
            if len(self._resumed) < 1000:
                self._resumed.setdefault((e.rank, frame.function, frame.file), e.line)
        key = (e.rank, cid, e.kind, e.reason.split("\n", 1)[0][:200])
        row = self._skips.get(key)
        if row is None:
            if len(self._skips) >= 1000:
                return
            row = self._skips[key] = {"event": e, "counts": Counter()}
        row["counts"][e.source] += 1

    # ------------------------------------------------------------ result

    def finish(self, frames: Iterable[FrameReport] = ()) -> CudagraphReport | None:
        """The report, the recordings joined with the trace's spans (None: nothing seen)."""
        if not self.seen:
            return None
        notes: list[str] = []
        rows = _sized(self._joined(notes))
        if any(not r.compile_id for r in rows):
            notes.append("the log names no compile for its recordings (torch before 2.11): "
                         "they are counted as one group (frame ?); its trace would name them")
        names = {(f.rank, f.frame_id): f.function for f in frames}
        skips = tuple(Skip(e.rank, str(e.compile_id or ""), e.kind, e.reason, e.user,
                           max(c.values()), tuple(sorted(c)), e.line)
                      for e, c in ((r["event"], r["counts"]) for r in self._skips.values()))
        return CudagraphReport(
            recordings=tuple(rows), frames=_per_frame(rows, names), skips=skips,
            limit_hits=tuple(self._limits), errors=tuple(self._errors.values()),
            captured_compiles=tuple(sorted(self._captured, key=compile_id_key)),
            partition_reasons=tuple(self._reasons), distinct_sizes_warned=self._warned,
            partitions=tuple((c, n, other) for c, (n, other) in self._parts.items()),
            kept_out=tuple((r, ir, n) for (r, ir), n in self._kept.items()),
            tree_keys=tuple(self._trees), tree_lines=self._tree_lines,
            timed=any(r.seconds is not None for r in rows), dropped=self._dropped,
            notes=tuple(notes))

    def _joined(self, notes: list[str]) -> list[_Row]:
        """Log recordings with their trace seconds, or trace spans alone (no size known)."""
        out: list[_Row] = []
        ranks = dict.fromkeys([e.rank for e, _ in self._recordings] + [s.rank for s in self._spans])
        for rank in sorted(ranks, key=rank_key):
            logged = [(e, k) for e, k in self._recordings if e.rank == rank]
            spans = [s for s in self._spans if s.rank == rank]
            if not spans:
                out += [_row(e, k) for e, k in logged]
            elif not logged:
                out += [(Recording(s.rank, str(s.compile_id or ""), "", None, "", s.seconds,
                                   "BACKWARD" if s.backward else "", None, False, s.line,
                                   "trace"), ()) for s in spans]
            elif all(e.compile_id is not None for e, _ in logged):
                out += _by_compile(logged, spans, notes)
            elif len(logged) == len(spans):  # before 2.11 the log names no compile: in order
                out += [_row(e, k, s) for (e, k), s in zip(logged, spans, strict=True)]
            else:
                notes.append(f"{len(logged)} recording(s) in the log, {len(spans)} in the "
                             "trace: not joined (the log names no compile before torch 2.11)")
                out += [_row(e, k) for e, k in logged]
        return out


# a recording and the (index, sizes) of its tensor inputs, until its size is known
_Row = tuple[Recording, tuple[tuple[int, tuple[int, ...]], ...]]


def _row(e: cg.CudagraphRecording, key: str | None,
         span: cg.CudagraphRecordTime | None = None) -> _Row:
    cid = e.compile_id or (span.compile_id if span is not None else None)
    return (Recording(e.rank, str(cid or ""), e.function, key, "",
                      span.seconds if span else None, e.mode, e.graph_id, False, e.line,
                      "log+trace" if span else "log"), e.shapes)


def _by_compile(logged: list[tuple[cg.CudagraphRecording, str | None]],
                spans: list[cg.CudagraphRecordTime], notes: list[str]) -> list[_Row]:
    """Each compile's k-th recording in the log with its k-th span in the trace."""
    queue: dict[str, list[cg.CudagraphRecordTime]] = {}
    for s in spans:
        queue.setdefault(s.compile_id.key if s.compile_id else "", []).append(s)
    counts = Counter(e.compile_id.key for e, _ in logged if e.compile_id)
    for cid, n in counts.items():
        if len(queue.get(cid, ())) != n:
            notes.append(f"compile {cid}: {n} recording(s) in the log, "
                         f"{len(queue.get(cid, ()))} in the trace: joined in order")
    out = []
    for e, key in logged:
        waiting = queue.get(e.compile_id.key if e.compile_id else "")
        out.append(_row(e, key, waiting.pop(0) if waiting else None))
    return out


def _sized(rows: list[_Row]) -> list[Recording]:
    """Each recording's ``size`` and ``rerecord``. A size is torch's symint key when there is
    one (a forward and its backward share it), else the input shapes that differ between the
    frame's recordings (2.11+ logs show them), else the compile (a static graph). Its label
    shows the shapes too: ``4x16x64 (symint 4)``."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, (r, _) in enumerate(rows):
        groups.setdefault((r.rank, _frame(r.compile_id), r.mode), []).append(i)
    labels: dict[tuple[Any, ...], str] = {}
    seen: set[tuple[Any, ...]] = set()
    out = [r for r, _ in rows]
    for (rank, frame, _), idx in groups.items():
        shapes = [dict(rows[i][1]) for i in idx]
        varying = sorted({k for s in shapes for k in s if len({t.get(k) for t in shapes}) > 1})
        for i, shape in zip(idx, shapes, strict=True):
            r = out[i]
            dims = ", ".join(f"in{k} {'x'.join(map(str, shape[k]))}" if len(varying) > 1
                             else "x".join(map(str, shape[k])) for k in varying if k in shape)
            if r.key:
                ident: tuple[str, str] = ("key", r.key)
                label = f"{dims} (symint {r.key})" if dims else f"symint {r.key}"
            elif dims:
                ident, label = ("shape", dims), dims
            elif r.key == "":
                ident, label = ("static", r.compile_id), f"static graph ({r.compile_id})"
            else:
                ident = ("unknown", r.compile_id)
                label = f"{UNKNOWN} ({r.compile_id or 'no compile id'})"
            size = labels.setdefault((rank, frame, *ident), label)
            again = ident[0] != "unknown" and (r.rank, r.compile_id, r.graph, r.mode, ident) in seen
            seen.add((r.rank, r.compile_id, r.graph, r.mode, ident))
            out[i] = Recording(r.rank, r.compile_id, r.graph, r.key, size, r.seconds, r.mode,
                               r.graph_id, again, r.line, r.source)
    return out


def _frame(compile_id: str) -> str:
    return compile_id.rsplit("/", 1)[0] if "/" in compile_id else "?"


def _per_frame(rows: list[Recording], names: dict[tuple[int | None, str], str]
               ) -> tuple[FrameRecordings, ...]:
    groups: dict[tuple[Any, ...], list[Recording]] = {}
    for r in rows:
        groups.setdefault((r.rank, _frame(r.compile_id)), []).append(r)
    out = []
    for (rank, frame), rs in groups.items():
        sizes: dict[str, list[float | None]] = {}
        for r in rs:
            sizes.setdefault(r.size, []).append(r.seconds)
        timed = [r.seconds for r in rs if r.seconds is not None]
        out.append(FrameRecordings(
            rank, frame, names.get((rank, frame), ""),
            tuple(sorted({r.compile_id for r in rs}, key=compile_id_key)), len(rs),
            tuple((size, len(secs), sum(s for s in secs if s is not None)
                   if any(s is not None for s in secs) else None)
                  for size, secs in sizes.items()),
            sum(r.rerecord for r in rs), sum(timed) if timed else None))
    return tuple(sorted(out, key=lambda f: (rank_key(f.rank), compile_id_key(f.frame_id))))

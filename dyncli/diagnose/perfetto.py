"""``dyncli diagnose --perfetto FILE``: the compile timeline as Chrome trace-event JSON.

Perfetto (ui.perfetto.dev) and chrome://tracing open it. One process per rank (a run
without ranks is one process), one track per process; each compile attempt is a complete
event (``ph: "X"``, category ``compile``) whose duration is the seconds diagnose reports for
it, so the compile spans add up to the reported compile time. Inside it, its phases
(``dyncli.diagnose.phases``) nest as torch's counters do: the attempts a restart threw away
first, then Dynamo's tracing, which contains AOTAutograd, which contains Inductor, which
contains code generation; each ends where the compile ends (torch times the backend at the
end of tracing). Times are microseconds from the first compile; attempts whose start the
trace does not record (older torch) follow the previous one.

tlparse writes torch's own chromium events (``chromium_events.json``); this file is built
from the compilation metrics instead, so it needs only what diagnose already reads.
"""

from __future__ import annotations

import json
from typing import Any

from dyncli.diagnose.model import Diagnosis, rank_key
from dyncli.output import write_text

_US = 1e6


def _r(x: float) -> float:
    return round(x, 3) + 0.0  # never "-0.0"


def timeline(diag: Diagnosis) -> dict[str, Any]:
    """The trace-event document (``{"traceEvents": [...], "displayTimeUnit": "ms"}``)."""
    events: list[dict[str, Any]] = []
    t = diag.trace
    if t is None:
        return {"traceEvents": events, "displayTimeUnit": "ms"}
    ranks = sorted({c.rank for c in t.compile_times}, key=rank_key)
    pids = {rank: i + 1 for i, rank in enumerate(ranks)}
    starts = [s for c in t.compile_times for s, _, _ in c.spans if s is not None]
    t0 = min(starts) if starts else 0.0
    for rank, pid in pids.items():
        name = "compiles" if rank is None else f"rank {rank}"
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": name}})
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 0,
                       "args": {"name": "torch.compile"}})
    cursor = dict.fromkeys(pids, 0.0)  # end of the last span per rank, µs
    for c in sorted(t.compile_times, key=lambda c: (rank_key(c.rank), c.spans[0][0] or 0.0
                                                   if c.spans else 0.0)):
        pid = pids[c.rank]
        spans = c.spans or ((None, c.seconds or 0.0, c.phases),)  # None: no time (torch 2.3)
        for i, (start, seconds, phases) in enumerate(spans):
            ts = (start - t0) * _US if start is not None else cursor[c.rank]
            dur = seconds * _US
            cursor[c.rank] = max(cursor[c.rank], ts + dur)
            cid = c.compile_id + (f"_{i}" if i else "")
            events.append({
                "ph": "X", "cat": "compile", "name": f"{cid} {c.function}".strip(),
                "pid": pid, "tid": 0, "ts": _r(ts), "dur": _r(dur),
                "args": {"compile_id": cid, "function": c.function, "file": c.file,
                         "seconds": seconds, "failed": c.fail_type,
                         "guards": c.guard_count, "guard_latency_us": c.guard_latency_us}})
            events += _phase_events(dict(phases), pid, ts, dur, cid)
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def _phase_events(phases: dict[str, float], pid: int, ts: float, dur: float,
                  cid: str) -> list[dict[str, Any]]:
    """The nested phase spans of one attempt (see the module docstring)."""
    end = ts + dur
    out = []
    restart = phases.get("restarts", 0.0) * _US
    if restart:
        out.append((ts, restart, "restarts"))
    nested = 0.0
    inner: list[tuple[str, float]] = []
    for name in ("codegen", "inductor", "aot_autograd", "dynamo"):
        nested += phases.get(name, 0.0) * _US
        if phases.get(name):
            inner.append((name, nested))
    for name, length in reversed(inner):  # outermost first, as Perfetto expects
        out.append((max(ts, end - length), length, name))
    return [{"ph": "X", "cat": "phase", "name": name, "pid": pid, "tid": 0, "ts": _r(start),
             "dur": _r(length), "args": {"compile_id": cid, "seconds": length / _US}}
            for start, length, name in out]


def write_perfetto(path: str, diag: Diagnosis) -> None:
    """Write the timeline atomically (temp file + rename); ``-`` is stdout."""
    write_text(path, json.dumps(timeline(diag), separators=(",", ":")) + "\n")

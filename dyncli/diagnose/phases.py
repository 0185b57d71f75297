"""Compile time by phase: where each compile's seconds went (torch's compilation metrics).

torch times a compile with nested cumulative counters (``dyncli.logparse.trace_phases``):
Dynamo's whole frame ⊇ AOTAutograd ⊇ Inductor ⊇ Inductor's code generation, plus the time
of attempts a restart threw away. They are turned into EXCLUSIVE phases that add up to the
compile's seconds (the total is the one ``TraceAccumulator`` reads, so phases and totals
never disagree):

- ``restarts``: attempts before a restart (a graph break inside an inlined call, …);
- ``dynamo``: tracing Python bytecode, guards and the FX graph (what is left);
- ``aot_autograd``: AOTAutograd outside Inductor (functionalization, joint graph, partition);
- ``inductor``: Inductor outside code generation (lowering, fusion, passes);
- ``codegen``: Inductor's code generation and compilation, including the compile workers
  (``compile_workers`` reports ``triton_compile_time_us`` there, a part of it).

A release that lacks a counter leaves that phase inside its parent (aot_eager: no Inductor),
never an error. Seconds fields are used where the microsecond ones are missing (torch < 2.6).
"""

from __future__ import annotations

from collections.abc import Iterable

PHASES: tuple[str, ...] = ("dynamo", "aot_autograd", "inductor", "codegen", "restarts")

# (cumulative counter in µs, the same in seconds in older releases)
_AOT = ("aot_autograd_cumulative_compile_time_us", "backend_compile_time_s")
_INDUCTOR = ("inductor_cumulative_compile_time_us", "inductor_compile_time_s")
_CODEGEN = ("inductor_code_gen_cumulative_compile_time_us", "code_gen_time_s")
_RESTART = ("dynamo_compile_time_before_restart_us", "dynamo_time_before_restart_s")


def _seconds(numbers: dict[str, float], fields: tuple[str, str]) -> float | None:
    us, s = fields
    if us in numbers:
        return numbers[us] / 1e6
    return numbers.get(s)


def split(numbers: dict[str, float], total: float | None) -> dict[str, float]:
    """Exclusive phase seconds of one compile attempt, adding up to ``total``."""
    if total is None or total <= 0:
        return {}
    restart = min(max(_seconds(numbers, _RESTART) or 0.0, 0.0), total)
    aot = min(max(_seconds(numbers, _AOT) or 0.0, 0.0), total - restart)
    ind = min(max(_seconds(numbers, _INDUCTOR) or 0.0, 0.0), aot)
    gen = min(max(_seconds(numbers, _CODEGEN) or 0.0, 0.0), ind)
    out = {"dynamo": total - restart - aot, "aot_autograd": aot - ind, "inductor": ind - gen,
           "codegen": gen, "restarts": restart}
    return {k: v for k, v in out.items() if v > 0}


def start_of(numbers: dict[str, float]) -> float | None:
    """When the attempt started, in epoch seconds (None when the release does not say)."""
    if "start_time_us" in numbers:
        return numbers["start_time_us"] / 1e6
    return numbers.get("start_time")


def add(into: dict[str, float], more: dict[str, float]) -> None:
    """Sum phase dicts."""
    for k, v in more.items():
        into[k] = into.get(k, 0.0) + v


def ordered(phases: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """Phases in pipeline order, as a hashable tuple."""
    return tuple((k, phases[k]) for k in PHASES if k in phases)


def total_by_phase(rows: Iterable[tuple[tuple[str, float], ...]]) -> tuple[tuple[str, float], ...]:
    """Where the time went overall: the phases of every compile added up."""
    acc: dict[str, float] = {}
    for row in rows:
        add(acc, dict(row))
    return ordered(acc)

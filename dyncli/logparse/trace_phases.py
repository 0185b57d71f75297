"""The numbers of a ``compilation_metrics`` record that time a compile's phases.

Pure field reading (no arithmetic): which fields a torch release writes varies, so every
field is optional and only the numeric ones are kept. ``dyncli.diagnose.phases`` turns them
into exclusive phase times. The fields (torch/_dynamo/utils.py ``CompilationMetrics``):

- cumulative times, each containing the next (torch >= 2.6): ``dynamo_cumulative_compile_time_us``
  ⊇ ``aot_autograd_cumulative_compile_time_us`` ⊇ ``inductor_cumulative_compile_time_us`` ⊇
  ``inductor_code_gen_cumulative_compile_time_us``; ``triton_compile_time_us`` (compile
  workers); ``dynamo_compile_time_before_restart_us`` (attempts thrown away by a restart);
- the same in seconds in older releases: ``entire_frame_compile_time_s``,
  ``backend_compile_time_s``, ``inductor_compile_time_s``, ``code_gen_time_s``,
  ``dynamo_time_before_restart_s``;
- when: ``start_time_us`` / ``start_time`` (epoch), ``duration_us``;
- guards: ``guard_count``, ``shape_env_guard_count``, ``guard_latency_us`` (2.15);
  ``num_graph_breaks`` (2.15), ``gc_time_us``.
"""

from __future__ import annotations

from typing import Any

from dyncli.logparse import safe

FIELDS: tuple[str, ...] = (
    "dynamo_cumulative_compile_time_us", "aot_autograd_cumulative_compile_time_us",
    "inductor_cumulative_compile_time_us", "inductor_code_gen_cumulative_compile_time_us",
    "triton_compile_time_us", "dynamo_compile_time_before_restart_us",
    "entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s",
    "code_gen_time_s", "dynamo_time_before_restart_s",
    "start_time_us", "start_time", "duration_us",
    "guard_count", "shape_env_guard_count", "guard_latency_us", "num_graph_breaks", "gc_time_us",
)


def metric_numbers(meta: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """``(field, value)`` for every timing/guard field of ``meta`` that holds a number."""
    out = []
    for key in FIELDS:
        value = safe.json_num(meta.get(key))
        if value is not None:
            out.append((key, float(value)))
    return tuple(out)

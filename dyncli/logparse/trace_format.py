"""TORCH_TRACE format: the kinds torch emits, the record and stats types, the envelope peek.

One trace line, as torch 2.14 writes it (``TorchLogsFormatter(trace=True)`` in
torch/_logging/_internal.py)::

    V1122 01:19:01.836000 4440 torch/_dynamo/convert_frame.py:304] {"dynamo_start": {...}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    \t<payload line>           one per payload line; md5(payload) is the envelope's has_payload

The envelope's first key is the event kind, its value the metadata; ``frame_id``,
``frame_compile_id``, ``attempt``, ``compiled_autograd_id`` and ``rank`` sit beside it.

This module owns what a trace line and record *are* (``TraceRecord``, ``TraceStats``, the
known/kept/payload kinds, ``peek_kind``, ``is_trace_line``), apart from the reader
(``dyncli.logparse.trace``), so that callers that only sniff a file or count kinds do not
load the parser.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dyncli.logparse.glog import GLOG_RE

# Every kind torch 2.3–2.15 is known to emit. Anything else is counted as unknown, not fatal.
KNOWN_KINDS: frozenset[str] = frozenset({
    "str", "dynamo_start", "compilation_metrics", "compilation_metrics_runtime",
    "bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics",
    "symbolic_shape_specialization", "guard_added", "guard_added_fast", "create_symbol",
    "create_unbacked_symbol", "propagate_real_tensors", "expression_created", "missing_fake_kernel",
    "mismatched_fake_kernel", "artifact", "dynamo_output_graph", "dynamo_cpp_guards_str",
    "dynamo_guards", "chromium_event", "describe_storage", "describe_tensor", "describe_source",
    "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph",
    "inductor_output_code", "inductor_pre_grad_graph", "inductor_post_grad_graph",
    "optimize_ddp_split_graph", "optimize_ddp_split_child", "compiled_autograd_graph",
    "dump_file", "link", "exported_program", "graph_dump", "stack", "optimus",
    "inductor_provenance_tracking_node_mappings", "guard_on_data_dependent_error",
    "propagate_real_tensors_provenance",
})

# Kinds whose envelope dyncli decodes (the rest are only counted).
DEFAULT_KEEP: frozenset[str] = frozenset({
    "dynamo_start", "compilation_metrics", "symbolic_shape_specialization", "guard_added",
    "guard_added_fast", "create_symbol", "create_unbacked_symbol", "artifact",
    "dynamo_output_graph", "dynamo_cpp_guards_str", "chromium_event", "describe_tensor",
    "describe_source", "dynamo_guards",
})

# Kinds whose payload is joined and kept. Artifacts are filtered again by name.
DEFAULT_PAYLOADS: frozenset[str] = frozenset({
    "artifact", "dynamo_output_graph", "dynamo_cpp_guards_str", "chromium_event",
    "dynamo_guards",  # torch 2.3's guards: a JSON list, one guard per line
})
PAYLOAD_ARTIFACTS: frozenset[str] = frozenset({
    "recompile_reasons", "dynamo_graph_break_reason", "get_local_code_state",
    "put_local_code_state", "get_remote_code_state", "put_remote_code_state",
    "get_extra_remote_code_state",
    # compiled autograd's cache misses, "!N: Cache miss due to …" (dyncli.logparse.textautograd)
    "compiled_autograd_compile_reasons",
})

_SEP = b"] {"


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One envelope line of a trace, with its joined payload when it was kept."""

    line: int
    kind: str
    meta: dict[str, Any]
    timestamp: str
    pid: int
    emitter: str
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0
    compiled_autograd_id: int | None = None
    rank: int | None = None
    payload: str | None = None
    envelope: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # a dynamo_output_graph's (inputs, ops), when the parsing child made it from the payload
    # (``dyncli.diagnose.trace_pipe``; the payload is then not sent)
    signature: tuple[tuple[str, ...], tuple[str, ...]] | None = field(
        default=None, repr=False, compare=False)

    @property
    def compile_id(self) -> str | None:
        """``0/1``, ``0/1_2`` for restart attempts, ``!3/0/1`` under compiled autograd."""
        return format_compile_id(self.frame_id, self.frame_compile_id, self.attempt,
                                 self.compiled_autograd_id)


def format_compile_id(frame_id: int | None, frame_compile_id: int | None, attempt: int = 0,
                      compiled_autograd_id: int | None = None) -> str | None:
    """Format a compile id the way torch's ``CompileId``/``TraceId`` ``__str__`` does."""
    if frame_id is None or frame_compile_id is None:
        if compiled_autograd_id is None:
            return None
        return f"!{compiled_autograd_id}"
    base = f"{frame_id}/{frame_compile_id}"
    if compiled_autograd_id is not None:
        base = f"!{compiled_autograd_id}/{base}"
    return f"{base}_{attempt}" if attempt else base


# (line number, envelope line, kind, joined payload or None): a record ``cook`` finishes
RawRecord = tuple[int, bytes, str, "str | None"]


@dataclass
class TraceStats:
    """What the parser saw. ``unknown`` and ``malformed`` are counts, never errors (unless strict)."""

    lines: int = 0
    records: int = 0
    payload_lines: int = 0
    malformed: int = 0
    payload_mismatch: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    ranks: set[int] = field(default_factory=set)
    samples: list[tuple[int, str]] = field(default_factory=list)  # first bad lines, for --verbose
    reasons: Counter[str] = field(default_factory=Counter)  # malformed lines and records, by why

    @property
    def recognized(self) -> int:
        """Lines belonging to a record of a known kind (payload lines included)."""
        return self.lines - self.unrecognized

    @property
    def unrecognized(self) -> int:
        """Malformed lines plus envelopes of kinds dyncli does not know."""
        return self.malformed + sum(self.unknown.values())


def peek_kind(line: bytes) -> str | None:
    """The event kind of an envelope line without decoding its JSON, or None if not one."""
    cut = line.find(_SEP)
    if cut < 0 or line[cut + 3:cut + 4] != b'"':
        return None
    end = line.find(b'"', cut + 4)
    if end < 0:
        return None
    return line[cut + 4:end].decode("utf-8", "replace")


def is_trace_line(line: bytes | str) -> bool:
    """True when ``line`` looks like a trace envelope (glog prefix followed by a JSON object)."""
    raw = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return (GLOG_RE.match(raw) is not None and peek_kind(raw) is not None
            and raw.rstrip(b"\r\n").endswith(b"}"))

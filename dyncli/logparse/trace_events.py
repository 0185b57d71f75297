"""Events that only TORCH_TRACE traces carry (text logs have no equivalent).

The events both formats share (compiles, symbols, guards, specializations, recompile reasons,
graph breaks) are the classes of ``dyncli.logparse.events``; these add what a trace knows
beyond them: compile metrics with times and failures, output-graph shapes, PGO state and
PGO's dynamic allow-list. Every field but the line number is optional, as in tlparse, so a
new torch that drops a field does not break the parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dyncli.logparse import safe
from dyncli.logparse.events import Event


@dataclass(frozen=True, kw_only=True)
class CompileMetrics(Event):
    """A ``compilation_metrics`` record: the end of one compile attempt of one frame."""

    function: str | None = None
    file: str | None = None
    first_line: int | None = None
    cache_size: int | None = None
    accumulated_cache_size: int | None = None
    fail_type: str | None = None
    fail_reason: str | None = None
    fail_user_file: str | None = None
    fail_user_line: int | None = None
    restart_reasons: tuple[str, ...] = ()
    compile_time_s: float | None = None  # None: this release wrote no compile time for it
    compile_time_field: str | None = None  # the field it came from (``compile_seconds``)
    backend_time_s: float | None = None
    inductor_time_s: float | None = None
    graph_op_count: int | None = None
    start_time: float | None = None
    has_guarded_code: bool | None = None
    # timing and guard fields by name (``trace_phases.metric_numbers``; issue 21)
    numbers: tuple[tuple[str, float], ...] = ()
    # the torch that wrote it (``pytorch_version``, torch 2.10 on: utils.py CompilationMetrics)
    torch_version: str | None = None

    @property
    def failed(self) -> bool:
        """A compile that raised (fail_type set), as tlparse's failures page counts it."""
        return self.fail_type is not None


# Where a compile's seconds are, newest torch's preferred field first. torch 2.3-2.5 write
# ``entire_frame_compile_time_s``; 2.6 and later derive it from
# ``dynamo_cumulative_compile_time_us`` (torch/_dynamo/utils.py, CompilationMetrics.create),
# and traces from builds that keep only the microsecond fields carry that alone. Seconds are
# (field, divisor); the first field present with a number wins.
COMPILE_TIME_FIELDS: tuple[tuple[str, float], ...] = (
    ("entire_frame_compile_time_s", 1.0),
    ("dynamo_cumulative_compile_time_us", 1e6),
)


def compile_seconds(metrics: dict[str, Any]) -> tuple[float | None, str | None]:
    """(seconds, field) of one ``compilation_metrics`` record, from whichever field its
    release wrote (``COMPILE_TIME_FIELDS``, in that order); ``(None, None)`` when it has none:
    unknown, never 0."""
    for name, divisor in COMPILE_TIME_FIELDS:
        value = safe.json_num(metrics.get(name))
        if value is not None and value >= 0:
            return value / divisor, name
    return None, None


@dataclass(frozen=True, kw_only=True)
class OutputGraph(Event):
    """A ``dynamo_output_graph`` record: node shapes, and the ops of the graph when kept.

    ``ops`` is the graph's sequence of operations with sizes, symbols and numbers blanked, so
    two compiles with equal ``ops`` differ only in sizes (the "similar graphs" check).
    """

    sizes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    inputs: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CodeStateEntry:
    """One source of one frame in rendered PGO state: ``L['x']: tensor size=[?, 8] …``."""

    frame: str
    source: str
    state: str

    @property
    def dynamic(self) -> bool:
        """True when PGO marks this source dynamic (a ``?`` dim, or a dynamic scalar)."""
        return "?" in self.state.split(" stride=")[0] or self.state.startswith("fully dynamic")


@dataclass(frozen=True, kw_only=True)
class CodeState(Event):
    """A ``get_*_code_state`` (loaded) or ``put_*_code_state`` (written) PGO artifact."""

    action: str  # "get" or "put"
    where: str = "local"  # local, remote, extra_remote
    entries: tuple[CodeStateEntry, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DynamicAllowList(Event):
    """PGO's ``pgo.dynamic_whitelist`` chromium event: sources it found dynamic."""

    sources: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


# ------------------------------------------------------------------ payload decoding

_FRAME_LINE = re.compile(r"^(?:hash\([0-9a-f]+\))?(?P<frame>\S.*:\d+:[^:\s]+):$")
_ENTRY_LINE = re.compile(r"^  (?P<source>.+?): (?P<state>.+)$")


def parse_code_state(text: str) -> tuple[CodeStateEntry, ...]:
    """Entries of PGO state as ``torch._dynamo.pgo.render_code_state`` writes it."""
    entries: list[CodeStateEntry] = []
    frame = ""
    for line in text.splitlines():
        if m := _FRAME_LINE.match(line):
            frame = m["frame"]
        elif (m := _ENTRY_LINE.match(line)) and frame:
            entries.append(CodeStateEntry(frame, m["source"], m["state"]))
    return tuple(entries)


# `name: "f32[s77, 4][4, 1]cpu" = l_x_ * 2;  l_x_ = None`   (GraphModule.print_readable)
# The right-hand side runs to the end of the line; its "; x = None" tail and blanks are cut in
# code (a lazy group followed by "\s*$" re-scanned every run of blanks: quadratic).
_NODE = re.compile(r'^\s+(?P<name>\w+)(?::\s*"[^"]*")?\s*=\s*(?P<rhs>.+)$')
_NONE_TAIL = re.compile(r";\s+[\w\s,=]*= None$")
_FORWARD = re.compile(r"^\s+def forward\(self(?P<args>.*)\):[ \t]*$")
_ARG = re.compile(r'(?<!\w)(\w+)\s*:\s*"([^"]*)"')
_BLANK = re.compile(r"(?<![\w.])(?:-?\d+(?:\.\d+)?(?:e-?\d+)?|[suq]\d+)(?![\w.])")
# Dynamo numbers repeated node names (getitem_5, add_4); a dynamic graph adds sym_size nodes
# before them, so the numbers shift between otherwise identical graphs.
_NODE_NO = re.compile(r"\b([A-Za-z]\w*?)_\d+\b")


def _norm(text: str) -> str:
    return _NODE_NO.sub(r"\1_#", _BLANK.sub("#", text))


def _rhs(text: str) -> str:
    """A node's right-hand side without torch's ``;  x = None`` tail and trailing blanks."""
    text = text.rstrip()
    cut = text.rfind(";")
    if cut >= 0 and text.endswith("= None") and _NONE_TAIL.match(text, cut):
        text = text[:cut].rstrip()
    return text


def graph_signature(payload: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input names, op sequence) of a ``dynamo_output_graph`` payload.

    Ops keep the node names and the calls and blank sizes, symbols and numbers, so two graphs
    that differ only in sizes (or in a scalar baked in as a constant) get the same sequence.
    """
    inputs: list[str] = []
    ops: list[str] = []
    for line in payload.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "class ")):
            continue
        if stripped.startswith("def forward(") and (m := _FORWARD.match(line)):
            inputs = [name for name, ann in _ARG.findall(m["args"]) if not ann.startswith("Sym(")]
            continue
        if stripped.startswith("return "):
            ops.append(stripped)
            continue
        if (m := _NODE.match(line)) and not m["rhs"].startswith("L_"):
            ops.append(f"{m['name']} = {_rhs(m['rhs'])}")
    # normalized in one pass over all ops (no op holds a newline; neither pattern matches one
    # or looks past one), not one regex call per op
    return tuple(inputs), tuple(_norm("\n".join(ops)).split("\n")) if ops else ()


def source_of_input(name: str) -> str:
    """Best-effort Dynamo source for a graph placeholder: ``L_x_`` → ``L['x']``."""
    for prefix, scope in (("L_", "L"), ("G_", "G")):
        if name.startswith(prefix) and name.endswith("_"):
            return f"{scope}['{name[len(prefix):-1]}']"
    return name

"""torch's own messages that are notes on what it did, with nothing to fix.

Python prints a warning as ``FILE:LINE: UserWarning: MESSAGE`` and then the line of code that
raised it, indented; torch's inductor writes some messages that start on the line after
(``textwrap.dedent`` of a text that begins with a line end), so a paste has the head alone,
then the message's lines at the margin. Such a paste is torch's output (never "not a torch
log"): each note of ``NOTES`` is read as an understood torch record, and each message of
``PHRASES`` (a warning, or a glog record) as a ``TorchNote`` that diagnose explains
(``dyncli.diagnose.notes``). Linear in the line: bounded quantifiers.
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.glog import level_of

# each note's text as torch writes it, one line a line
NOTES = (
    # inductor's softmax lowering when it splits the reduction: a performance note (2.7
    # _inductor/lowering.py:7010 to 2.11 :7839; gone in 2.15), pytorch#153241
    "Online softmax is disabled on the fly since Inductor decides to\n"
    "split the reduction. Cut an issue to PyTorch if this is an\n"
    "important use case and you want to speed it up with online\n"
    "softmax.",
)
FIRST_LINES = frozenset(note.splitlines()[0].encode() for note in NOTES)
_LINES = frozenset(line.encode() for note in NOTES for line in note.splitlines())
# the head of a Python warning raised in inductor's code: "…/torch/_inductor/lowering.py:7007:
# UserWarning: " (its message on the line, or on the lines after)
_HEAD_RE = re.compile(rb"^\S{0,1024}torch[/\\]_inductor[/\\][\w/\\]{1,200}\.py:\d{1,9}: "
                      rb"UserWarning:(?: (?P<msg>.{0,4000}))?$")
# the same of a warning raised in inductor's, torch.cuda's or flex_attention's code, its
# message on the line ("…/torch/cuda/graphs.py:84: UserWarning: The CUDA Graph is empty. …")
_WARNING_RE = re.compile(rb"^\S{0,1024}torch[/\\](?:_inductor|cuda|nn[/\\]attention)[/\\]"
                         rb"[\w/\\]{1,200}\.py:\d{1,9}: UserWarning: (?P<msg>.{1,4000})$")
# the message alone, or behind Python's category only (a paste that dropped the path)
_BARE_RE = re.compile(rb"^(?:UserWarning: )?(?P<msg>.{1,4000})$")

# torch's messages diagnose explains as notes, by how they start: (start, the note's kind)
PHRASES = (
    # inductor's utils.is_big_gpu, the GPU below its SM threshold: max-autotune tunes no GEMM
    # template there (2.6-2.15 :1134/:2144, 68 SMs; 2.3 :945's lower case, 80; ROCm's by arch)
    (b"Not enough SMs to use max_autotune_gemm", "gemm-templates-off"),
    (b"not enough SMs to use max_autotune_gemm", "gemm-templates-off"),
    (b"GPU arch does not support max_autotune_gemm", "gemm-templates-off"),
    # CUDAGraph.cpp's TORCH_WARN at the end of a capture that recorded no kernel, raised from
    # torch/cuda/graphs.py's capture_end ("ususally" in releases of 2023: kernl#331)
    (b"The CUDA Graph is empty.", "empty-cudagraph"),
    # symbolic_shapes' log.warning where sympy hit Python's recursion limit simplifying an
    # expression of sizes, caught: the simplification is skipped and the compile goes on
    # (2.0's sympy.solve, 2.2-2.4's sympy.expand, sympy.xreplace from 2.4 to 2.15, 2.15's
    # _fast_expand; pytorch#128134, #127817)
    (b"RecursionError in sympy.", "sympy-recursion"),
    (b"RecursionError in _fast_expand(", "sympy-recursion"),
    # the cudagraphs backend dropping the mode=/options= torch.compile handed it (2.14.1 and
    # 2.15 _dynamo/backends/cudagraphs.py:262, log.warning, pytorch#182989; before it the backend
    # raised TypeError, read as a crash: WanVideoWrapper#1041)
    (b"cudagraphs backend ignoring extra kwargs", "backend-kwargs-ignored"),
    # flex_attention run outside a compiled region: its unfused implementation, which
    # materializes the whole scores matrix (2.15 nn/attention/flex_attention.py:2624, the
    # warning naming its _warn_once call at :2621; once a process; vllm#27178: after the
    # caller's frame hit the recompile limit, its calls ran eagerly)
    (b"flex_attention called without torch.compile()", "flex-attention-eager"),
)
# export's warning that a size given as Dim.AUTO had an example of 0 or 1, so export kept it
# static (2.8 _export/non_strict_utils.py:499, 2.15 :839; pytorch#151827, #151582)
_AUTO_MARK = b"0/1 specialized; Dim.AUTO was specified"
_AUTO_RE = re.compile(rb"^dimension \S{1,400} 0/1 specialized; Dim\.AUTO was specified along "
                      rb"with a sample input with hint = \d{1,9}\.?$")
STARTS = tuple(start for start, _ in PHRASES)
MARKS = (*STARTS, _AUTO_MARK)  # what a line holding a note holds
TEXT_CHARS = 300  # of a message kept as a note's evidence

# AOTAutograd's log.warning(…, exc_info=True) where compiling the backward graph ahead of time
# (dynamic shapes: sizes saved for backward) raised, suppressed: the forward runs compiled, and
# backward() compiles it again (2.1 aot_autograd.py, 2.4 jit_compile_runtime_wrappers.py, 2.9
# graph_compile.py:1793, 2.15 :2484; pytorch#163874, #133965)
DEFERRED_BACKWARD = b"failed to eagerly compile backwards"
# its logger: graph_compile.py's module logger (2.9-2.15), jit_compile_runtime_wrappers.py's
# before it (2.3-2.8), which write no other WARNING-or-above record (their only
# log.warning/error/exception call in the 2.4-era and 2.7-era sources of the one, the 2.9-era,
# 2.10-era and 2.11-era sources and 2.13.0, 2.14.1 and 2.15.0 of the other; their artifact
# loggers aot_graphs and aot_joint_graph write at INFO and DEBUG), so any W line of them is a
# line of this warning's record (pyg-team/pytorch_geometric#9603: 2.4's, its head cut)
_DEFERRED_LOGGERS = tuple(f"_aot_autograd{sep}{name}.py:".encode()
                          for name in ("graph_compile", "jit_compile_runtime_wrappers")
                          for sep in ("/", "\\"))
_EXCEPTION_RE = re.compile(r"^(?:[A-Za-z_]\w{0,100}\.){0,8}[A-Za-z_]\w{0,100}"
                           r"(?:Error|Exception|Failed|Exceeded)(?::(?: .{0,4000})?)?$")


def in_deferred_backward(prefix: bytes, message: bytes) -> bool:
    """Whether a glog line is one of the suppressed-backward warning's record though its
    message is not the warning's head: a W line of graph_compile.py (2.9 on) the paste began
    inside (pytorch#163874's second excerpt, #193693: its traceback's lines)."""
    return (level_of(prefix) == b"W" and any(x in prefix for x in _DEFERRED_LOGGERS)
            and not message.startswith(DEFERRED_BACKWARD))


def deferred_backward(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The note of AOTAutograd's suppressed backward compile: its text the exception the
    record's traceback ends in (``what`` "raised"), or its first line where the paste cut the
    exception (``what`` "cut"); the record's head, or a line of it where the paste began inside
    it (``in_deferred_backward``)."""
    body = lines[1:] if lines and lines[0].startswith(DEFERRED_BACKWARD.decode()) else lines
    error = _raised(body)
    text = error or (lines[0].strip() if lines else "")
    # 2.3-2.6's defer_runtime_assert: "assert not self.runtime_asserts_frozen, expr", a runtime
    # assert the backward graph added after the forward's guards froze them (pytorch#130432;
    # 2.7 on it logs "runtime_asserts_frozen but then got" instead and goes on)
    frozen = error.startswith("AssertionError") and any(_FROZEN in line for line in body)
    what = "frozen" if frozen else "raised" if error else "cut"
    return [ev.TorchNote(kind="backward-deferred", what=what, text=text[:TEXT_CHARS], **common)]


_FROZEN = "assert not self.runtime_asserts_frozen"


def _raised(body: list[str]) -> str:
    """The exception a record's traceback ends in (its last line at the margin that names
    one), or ""."""
    return next((line.strip() for line in reversed(body)
                 if line[:1] not in (" ", "\t") and _EXCEPTION_RE.match(line.strip())), "")


# recording.py's log.error where a ShapeEnv method that records its calls raised
# (record_shapeenv_event's wrapper, 2.1-2.15): "failed while running OP(*ARGS, **KWARGS)", the
# traceback under it where the logger is at INFO (TORCH_LOGS="dynamic"), and the error
# re-raised to the caller. Up to 2.7 or so it logs every such failure, those torch catches and
# goes on from too (pytorch#134421: export trying an operator's overloads; #151023); 2.11.0,
# 2.14.1 and 2.15.0 only while ShapeEnv records its events (translation validation).
# evaluate_expr's is a line of a data-dependent error (textdde); any other is this note, its
# ``what`` the method (defer_runtime_assert, 2.8 on guard_or_defer_runtime_assert: #133965)
SHAPE_ENV_FAILED = b"failed while running "
# recording.py's logger writes nothing else at ERROR but, replaying events under translation
# validation, "failed when running event: …" (2.1-2.15; its DEBUG trace_shape_events lines are
# V): an E line of it that is neither is a line of that record's traceback, the record's head
# before the paste (pytorch#134421's paste begins at "For C++ stack trace, run with
# TORCHDYNAMO_EXTENDED_DEBUG_CPP=1", the end of the record before's error message)
_RECORDING_LOGGERS = (b"experimental/recording.py:", b"experimental\\recording.py:")
_REPLAY_FAILED = b"failed when running event"


def in_recording(prefix: bytes) -> bool:
    """Whether a glog prefix is recording.py's (a line of its records)."""
    return any(x in prefix for x in _RECORDING_LOGGERS)


def recorded_error(prefix: bytes, message: bytes, common: dict[str, Any],
                   lineno: int) -> ev.DataDependentError | None:
    """The exception a line of recording.py's record states, where the line is the record's
    traceback's last (an exception at the margin: ``AssertionError: 3 != 4``), as the fact
    ``raised`` of the failed call (``dyncli.diagnose.dde_facts``: what its error was, where no
    words of a data-dependent one are in it); None for any other line."""
    if not in_recording(prefix) or message[:1] in (b" ", b"\t"):
        return None
    text = message.decode("utf-8", "replace").strip()[:_ARG_CHARS]
    if not _EXCEPTION_RE.match(text):
        return None
    return ev.DataDependentError(what="raised", value=text, logged=True,
                                 **{**common, "line": lineno})


def in_shape_env_failed(prefix: bytes, message: bytes) -> bool:
    """Whether a glog line is of recording.py's record of a failed ShapeEnv call though it is
    not the record's head: a line of its traceback, the head before the paste."""
    return level_of(prefix) == b"E" and in_recording(prefix) and not message.startswith(
        (SHAPE_ENV_FAILED, _REPLAY_FAILED))
_FAILED_RE = re.compile(r"^failed while running (?P<op>[A-Za-z_]\w{0,80})\(\*\((?P<args>.*)$")
_ARG_CHARS = 2000  # of a call's arguments scanned for its first


def shape_env_failed(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The note of recording.py's record of a ShapeEnv call that raised: ``what`` the method,
    ``text`` the call with its first argument (the expression, where it has one) and the
    exception the record's traceback ends in, where the paste has it."""
    m = _FAILED_RE.match(lines[0].strip()[:_ARG_CHARS]) if lines else None
    if m is None:
        return []
    first = _first_arg(m["args"])
    call = f"{m['op']}({first})" if first else m["op"]
    error = _raised(lines[1:])
    text = f"{call}, raising {error}" if error else call
    return [ev.TorchNote(kind="shape-env-failed", what=m["op"], text=text[:TEXT_CHARS],
                         **common)]


def _first_arg(args: str) -> str:
    """The first element of a call's printed argument tuple (what follows ``*(``): up to its
    comma or the tuple's end at depth 0; "" where the line ends first (a cut paste)."""
    depth, quote = 0, ""
    for i, c in enumerate(args):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif c in ",)]}" and not depth:
            return args[:i].strip()
    return ""


def kind_of(message: bytes) -> str | None:
    """The note kind of a message that starts as one of ``PHRASES`` (None: of none)."""
    kind = next((kind for start, kind in PHRASES if message.startswith(start)), None)
    if kind is None and _AUTO_MARK in message[:600] and _AUTO_RE.match(message.strip()):
        return "auto-dim-specialized"
    return kind


def is_note(message: bytes) -> bool:
    """Whether a glog record's message is one of the notes ``kind_of`` knows."""
    return message.startswith(STARTS) or (_AUTO_MARK in message[:600]
                                           and kind_of(message) is not None)


def noted(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The note of a record (a glog record, or a warning and its code line) whose first line
    is one of ``PHRASES``."""
    text = lines[0].strip() if lines else ""
    kind = kind_of(text.encode())
    # (export's Dim.AUTO warning names one size a record: each size its own part)
    what = text[:TEXT_CHARS] if kind == "auto-dim-specialized" else ""
    return [ev.TorchNote(kind=kind, what=what, text=text[:TEXT_CHARS], **common)] if kind else []


def warned(raw: bytes) -> str | None:
    """The message of ``PHRASES`` that a line without a prefix holds: a Python warning's head
    with it (``…/torch/cuda/graphs.py:84: UserWarning: The CUDA Graph is empty. …``), or the
    message pasted alone; None for any other line."""
    head = raw[:1400]  # (one slice and a loop: asked of every line of a program's output)
    for start in MARKS:
        if start in head:
            break
    else:
        return None
    line = raw.strip()
    m = _WARNING_RE.match(line) if b"UserWarning: " in line[:1300] else None
    m = m or _BARE_RE.match(line)
    msg = (m["msg"] or b"").strip() if m is not None else b""
    return msg.decode("utf-8", "replace") if kind_of(msg) else None


def note_line(raw: bytes) -> bytes | None:
    """The line of a note that ``raw`` is (a warning's head with the note on it, or empty,
    gives its message: b"" where the note follows); None for any other line."""
    line = raw.strip()
    if line in _LINES:
        return line
    if b"UserWarning:" in line[:1300] and (m := _HEAD_RE.match(line)) is not None:
        msg = (m["msg"] or b"").strip()
        return msg if not msg or msg in FIRST_LINES else None
    return None


# torch's own text that diagnose has no reading for, pasted without a prefix: known by its
# form, so that a paste of nothing else is refused for what it is (``ParseStats.seen``), and
# a paste with more counts it as torch's, not as unrecognized
# inductor's perf hint that it did not tile a reduction (TORCH_LOGS=perf_hints): one line
# before 2.15 (pytorch#103715, #138813), 2.15's codegen/simd.py a dedented two (the second
# names config.triton.tile_reductions)
_PERF_HINT_LINES = frozenset({b"reduction over non-contiguous dims",
                              b"Reduction over non-contiguous dims.",
                              b"Consider setting config.triton.tile_reductions to True."})
# a Python warning raised in torch's code, as warnings.showwarning prints it ("…/torch/
# _inductor/cudagraph_trees.py:85: UserWarning: 'has_cuda' is deprecated, …": torch 2.1's own
# "if torch.has_cuda:", which torch/__init__.py's __getattr__ warns of, _deprecated_attrs)
_TORCH_WARNING_RE = re.compile(rb"^\S{0,1024}torch[/\\][\w/\\.-]{1,300}\.py:\d{1,9}: "
                               rb"[A-Z]\w{0,60}Warning: \S")


# c10's errors where code that takes sizes as plain integers met a symbolic one:
# TensorImpl::throw_cannot_call_with_symbolic ("Cannot call sizes() on tensor with symbolic
# sizes/strides", 2.1-2.15) and asIntArrayRefSlow's check on a SymIntArrayRef ("…/RegisterCUDA
# .cpp:7280: SymIntArrayRef expected to contain only concrete integers": pastes from 2.2 on,
# pytorch#121897; 2.14.1's c10/core/SymIntArrayRef.h; 2.15's libc10 goes on "… that are stored
# inline and can be viewed as an IntArrayRef. Found symbolic SymInt …", or "Found heap-allocated
# concrete SymInt …" for an integer too large to store inline, no symbol)
SYMBOLIC_SIZES_RE = re.compile(r"Cannot call \w{1,40}\(\) on tensor with symbolic sizes/strides"
                               r"|SymIntArrayRef expected to contain only concrete integers")
HEAP_CONCRETE = "Found heap-allocated concrete SymInt"
_SYMBOLIC_MARKS = (b"symbolic sizes/strides", b"SymIntArrayRef expected")
# the same words as a program prints the error: starting the line, or after a colon and a space
# (c10's "…/RegisterCUDA.cpp:7280: SymIntArrayRef …", "RuntimeError: Cannot call sizes() …",
# DeepCompile's "MemoryProfiling error …/RegisterCUDA.cpp:18503: …"); not prose that quotes
# them (a changelog's "c10's `SymIntArrayRef expected …`"), which is no paste of the error
_SYMBOLIC_PRINTED_RE = re.compile(r"(?:^|: )(?:" + SYMBOLIC_SIZES_RE.pattern + ")")
# torch.fx's Interpreter.run where a node raised: the exception's message goes on "While
# executing %view : [num_users=2] = call_function[target=…](args = …)", then "Original
# traceback:" and the stack the node was traced from (fx/interpreter.py, 2.0-2.15; after 2.6,
# absent from deepspeed#7229's 2.6 paste, a last line "Use tlparse to see full graph. (…)")
_FX_NOTE_RE = re.compile(rb"^While executing %\w{1,200} : ")
_FX_NOTE_LINES = (b"Original traceback:", b"Use tlparse to see full graph.")


def unread_kind(raw: bytes) -> str | None:
    """The kind of torch's own text without a reading that a line without a prefix is
    ("perf-hint", "torch-warning", "symbolic-sizes", "fx-note"), or None. (Readers of
    torch's warnings go first.)"""
    line = raw.strip().lstrip(b"> ")
    if line in _PERF_HINT_LINES:
        return "perf-hint"
    if _FX_NOTE_RE.match(line) is not None or line.startswith(_FX_NOTE_LINES):
        return "fx-note"
    if any(m in line[:2000] for m in _SYMBOLIC_MARKS) \
            and _SYMBOLIC_PRINTED_RE.search(line[:2000].decode("utf-8", "replace")) is not None:
        return "symbolic-sizes"
    if b"Warning: " in line[:1400] and _TORCH_WARNING_RE.match(line) is not None:
        return "torch-warning"
    return None

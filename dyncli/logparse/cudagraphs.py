"""CUDA-graph records → events: what torch says about recording, replaying and skipping graphs.

Pure: messages in, frozen events out, nothing raised on a line it does not know (an unknown
``[__cudagraphs]`` line is recognized torch chatter and yields nothing). The text reader
(``textlog``) hands over every record of the ``cudagraphs`` artifact, and ``perf_hints``
records that speak of cudagraphs; the trace mapper (``trace_map``) hands over the
``CUDAGraphNode.record`` chromium spans and ``compilation_metrics.cudagraph_skip_reason``.

What each release writes (read from torch's source: _inductor/cudagraph_trees.py,
cudagraph_utils.py, compile_fx.py, output_code.py, scheduler.py, _dynamo/utils.py):

=========  ====================================================================================
2.1-2.2    ``recording cudagraph tree for 4`` (the int key; ``None`` for a static graph);
           ``Recording function 0 of graph recording id 0``; ``Running warmup of function 0``;
           skips on ``perf_hints``: ``skipping cudagraphs due to multiple devices`` /
           ``input mutation`` / ``complex input striding`` (perf_hints is off by default)
2.3-2.10   ``recording cudagraph tree for symint key 4`` / ``for graph without symints``;
           the same Recording/warmup lines; skips on ``perf_hints`` (``skipping cudagraphs due to
           …``, ``Found from :`` and the user stack); 2.5+: ``skipping cudagraph due to function
           N exceeding max re-recording limit (=128) on cudagraph node M due to …`` and the
           warning ``… We have observed N distinct sizes …`` (perf_hints)
nightly    (Dec 2025, pytorch#170218, before 2.11's form) ``Recording function 1 (f) of graph
           recording id 1, inputs: [0]: int(3), [1]: Tensor(size=[3], …)``; ``Running warmup of
           function 1 (f)``
2.7-2.15   trace: ``CUDAGraphNode.record`` spans (chromium B/E events, ``args.compile_id``),
           ``compilation_metrics.cudagraph_skip_reason``; runtime records
           (``compilation_metrics_runtime``) carry ``runtime_cudagraphify_time_us``, the
           record span plus ``cudagraphify.get_container`` (2.7 also spans add_function,
           record_function, replay, run_eager)
2.9-2.15   ``Created 1 graph partitions: 1 cudagraphable, 0 non-cudagraphable`` (2.9+ where
           graph partitioning logs; 2.11+ in the shared recording), ``Partition 0: …`` and
           ``op3: reason=…, ir=…`` per op kept out of a graph
2.11-2.12  ``Recording cudagraph tree for symint key 4`` (capital R); ``[4/1] Recording
           function=partition_0, [mode=FORWARD, (2.12)] cuda_graph_id=1, inputs: [0]:
           Tensor(size=[4, 16, 64], …), [5]: int(4)`` (the first 10 inputs);
           ``[4/1] Running warmup function=…``; ``[4/1] Re-recording function=…, reason=…``;
           skips and the distinct-sizes warning move to ``cudagraphs`` (a WARNING: printed
           without TORCH_LOGS too)
2.13-2.15  the tree line gains the compile id: ``[4/1] Recording cudagraph tree for symint key 4``
2.15       ``[4/1] forward graph hit cudagraph_dynamic_shape_rerecord_limit=8; already-recorded
           shapes still replay, new shapes run eager.``; ``skipping cudagraph due to function N
           reaching the cudagraph-managed input re-recording threshold (=5) …``
=========  ====================================================================================
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from dyncli.logparse import events as ev
from dyncli.logparse import safe
from dyncli.logparse.cudagraph_events import (
    ERROR_KINDS,
    CudagraphError,
    CudagraphLimit,
    CudagraphManySizes,
    CudagraphPartitions,
    CudagraphRecording,
    CudagraphRecordTime,
    CudagraphRerecord,
    CudagraphSkip,
    CudagraphTree,
    CudagraphWarmup,
    skip_kind,
)
from dyncli.logparse.textpaste import COMFYUI_HEADS
from dyncli.logparse.textstack import user_stack

_CID = re.compile(r"^\[(?P<cid>[!\d/_]{1,60})\] ")  # CompileId.parse says whether it is one
_TREE = re.compile(r"^[Rr]ecording cudagraph tree for (?:symint key (?P<key>.{1,200})"
                   r"|(?P<static>graph without symints)|(?P<old>.{1,200}))$")
# (nightlies after pytorch#170218, Dec 2025, before the "function=" form: the graph's name after
# the id and the inputs, "Recording function 1 (f) of graph recording id 1, inputs: [0]: int(3)")
_OLD_RECORD = re.compile(r"^Recording function (?P<fn>\d{1,9})(?: \([^()]{0,200}\))? of graph recording "
                         r"id (?P<gid>\d{1,9})(?:, inputs: (?P<inputs>.*))?$")
_RECORD = re.compile(r"^Recording function=(?P<fn>[^,]{0,200}), (?:mode=(?P<mode>\w{1,20}), )?"
                     r"cuda_graph_id=(?P<gid>\d{1,9})(?:, inputs: (?P<inputs>.*))?$")
_WARMUP = re.compile(r"^Running warmup (?:of function (?P<id>\d{1,9})(?: \([^()]{0,200}\))?"
                     r"|function=(?P<fn>[^,]{0,200})"
                     r"(?:, mode=(?P<mode>\w{1,20}))?)$")
_RERECORD = re.compile(r"^Re-recording function=(?P<fn>[^,]{0,200}), (?:mode=(?P<mode>\w{1,20}), )?"
                       r"reason=(?P<reason>.*)$")
_LIMIT = re.compile(r"^(?P<mode>forward|backward|inference) graph hit "
                    r"cudagraph_dynamic_shape_rerecord_limit=(?P<n>\d{1,9})")
_SIZES = re.compile(r"We have observed (?P<n>\d{1,9}) distinct sizes")
# torch's warning of many sizes (_inductor/cudagraph_utils.py, 2.5-2.15), one line as torch
# logs it; a paste re-wrapped over several lines (pytorch#188150) is read by joining the lines
# that are pieces of it
MANY_SIZES_HEAD = b"CUDAGraph supports dynamic shapes"
_MANY_SIZES_TEXT = (
    "CUDAGraph supports dynamic shapes by recording a new graph for each distinct input size. "
    "Recording too many CUDAGraphs may lead to extra overhead. We have observed N distinct "
    "sizes. Please consider the following options for better performance: a) padding inputs "
    "to a few fixed number of shapes; or b) set "
    "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True. Set "
    "torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit=None to silence this "
    "warning.")


def continues_many_sizes(raw: bytes) -> bool:
    """Whether a line is a piece of torch's many-sizes warning (re-wrapped by a paste)."""
    text = " ".join(raw.decode("utf-8", "replace").split())
    return bool(text) and re.sub(r"\d{1,9}", "N", text) in _MANY_SIZES_TEXT


def many_sizes(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The many-sizes warning from the lines a paste wrapped it into."""
    return text_record([" ".join(" ".join(lines).split())], common)
_PARTS = re.compile(r"^Created (?P<n>\d{1,9}) graph partitions: (?P<yes>\d{1,9}) cudagraphable, "
                    r"(?P<no>\d{1,9}) non-cudagraphable")
_OP = re.compile(r"^\s{1,8}(?P<op>[\w.]{1,200}): reason=")
_INPUT = re.compile(r"\[(?P<i>\d{1,4})\]: (?:Tensor\(size=\[(?P<size>[\d, ]{0,200})\]"
                    r"|(?P<type>int|SymInt)\((?P<int>-?\d{1,18})\))")
_MAX_INPUTS = 16
SPAN = "CUDAGraphNode.record"


SKIP_HEADS = ("skipping cudagraph", "disabling cudagraph")  # how torch's skip messages begin
SKIP_HEADS_B = tuple(h.encode() for h in SKIP_HEADS)


def is_skip(message: str) -> bool:
    """Whether a message is one of torch's cudagraph skip messages."""
    return message.startswith(SKIP_HEADS)


_INLINE_RE = re.compile(r' Found from (?P<frame>\s{0,8}File ".{1,4096})$')


def _inline_stack(text: str) -> tuple[str, str]:
    """A skip whose stack begins on its own line (compile_fx's incompatible-op and
    skip-dynamic-graphs skips: ``f"{disable} Found from {stack_trace}"``, the trace's first
    frame right after it): the message up to "Found from", and that frame ("" if none)."""
    m = _INLINE_RE.search(text)
    if m is None:
        return text, ""
    return text[:m.start()], m["frame"]


def skip_with_stack(text: str) -> bool:
    """Whether a skip message's stack follows on the next lines: ``Found from :`` at its end
    (cudagraph_utils), or a frame after ``Found from`` (compile_fx)."""
    return is_skip(text) and (text.replace(" ", "").endswith("Foundfrom:")
                              or bool(_inline_stack(text)[1]))


def text_record(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The events of one ``[__cudagraphs]`` (or cudagraph ``perf_hints``) record: its first line
    and the lines that repeat its prefix (several one-line records of one call site, or one
    multi-line skip message with its user stack)."""
    out: list[ev.Event] = []
    i = 0
    while i < len(lines):
        text, fields = _message(lines[i], common)
        i += 1
        if is_skip(text):
            stack = []
            head, inline = _inline_stack(text)
            if inline:  # compile_fx's "… Found from   File "x.py", line 6, in fn" (2.3-2.15)
                text, stack = head, [inline]
            while i < len(lines) and not _starts(lines[i]):
                stack.append(lines[i])
                i += 1
            users = user_stack(stack) or _unnumbered(stack)
            reason = "\n".join([text, *stack]).strip()
            resumes = tuple(dict.fromkeys(u for u in users if "resume_in" in u.function))[:16]
            out.append(CudagraphSkip(reason=reason[:4000], kind=skip_kind(text),
                                     user=users[-1] if users else None, resumes=resumes,
                                     **fields))
        elif (event := _one_line(text, fields)) is not None:
            out.append(event)
    return out


# a stack frame pasted without its line number: ``File "comfy\ops.py", in cast_bias_weight``
_UNNUMBERED_RE = re.compile(r'^\s{0,40}File "(?P<file>[^"]{1,1024})", in (?P<fn>[^\s]{1,200})\s*$')


def _unnumbered(stack: list[str]) -> tuple[ev.UserLoc, ...]:
    """The frames of a stack whose line numbers a paste dropped (comfyui#6866), line 0, each
    with the code line under it: the innermost is the place the skip came from."""
    out = []
    for i, text in enumerate(stack):
        m = _UNNUMBERED_RE.match(text)
        if m is not None:
            code = stack[i + 1].strip() if i + 1 < len(stack) and not \
                _UNNUMBERED_RE.match(stack[i + 1]) else ""
            out.append(ev.UserLoc(m["file"], 0, m["fn"], code))
    return tuple(out)


def _starts(text: str) -> bool:
    """Whether a line of a record is a message of its own (it ends a skip message's stack)."""
    body = _CID.sub("", text, count=1)
    return is_skip(body) or _one_line(body, {}) is not None


def _message(text: str, common: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A message without torch's ``[4/1] `` (runtime records name their compile in the text,
    the prefix has none) and the event fields, the compile id taken from it when it has one."""
    m = _CID.match(text)
    if m is None:
        return text, common
    cid = ev.CompileId.parse(m["cid"])
    return text[m.end():], {**common, "compile_id": cid or common.get("compile_id")}


def _one_line(text: str, fields: dict[str, Any]) -> ev.Event | None:
    if (m := _TREE.match(text)) is not None:
        key = m["key"] or ("" if m["static"] or m["old"] == "None" else m["old"] or "")
        return CudagraphTree(key=key.strip(), **fields)
    if (m := _RECORD.match(text)) is not None:
        ints, shapes = _inputs(m["inputs"] or "")
        return CudagraphRecording(function=m["fn"], graph_id=safe.small_int(m["gid"]),
                                  mode=m["mode"] or "", ints=ints, shapes=shapes, **fields)
    if (m := _OLD_RECORD.match(text)) is not None:
        ints, shapes = _inputs(m["inputs"] or "")
        return CudagraphRecording(function=m["fn"], graph_id=safe.small_int(m["gid"]), ints=ints,
                                  shapes=shapes, **fields)
    if (m := _WARMUP.match(text)) is not None:
        return CudagraphWarmup(function=m["id"] or m["fn"] or "", mode=m["mode"] or "", **fields)
    if (m := _RERECORD.match(text)) is not None:
        return CudagraphRerecord(function=m["fn"], mode=m["mode"] or "",
                                 reason=m["reason"][:1000], **fields)
    if (m := _LIMIT.match(text)) is not None:
        return CudagraphLimit(limit=safe.small_int(m["n"]), mode=m["mode"], **fields)
    if text.startswith("CUDAGraph supports dynamic shapes") and (m := _SIZES.search(text)):
        return CudagraphManySizes(sizes=safe.small_int(m["n"]) or 0, **fields)
    if (m := _PARTS.match(text)) is not None:
        return CudagraphPartitions(cudagraphable=int(m["yes"]), other=int(m["no"]), **fields)
    if (m := _OP.match(text)) is not None:  # an op kept out of the graphs, and why
        reason, _, ir = text[m.end():].partition(", ir=")
        return CudagraphPartitions(reasons=(reason[:300],), ops=(ir.strip()[:100],), **fields)
    return None


def _inputs(text: str) -> tuple[tuple[int, ...], tuple[tuple[int, tuple[int, ...]], ...]]:
    """The int inputs and the tensor inputs' (index, sizes) of 2.11+'s ``inputs: …`` list."""
    ints: list[int] = []
    shapes: list[tuple[int, tuple[int, ...]]] = []
    for m in _INPUT.finditer(text):
        if len(ints) + len(shapes) >= _MAX_INPUTS:
            break
        if m["int"] is not None:
            ints.append(int(m["int"]))
        else:
            dims = tuple(int(d) for d in m["size"].split(",") if d.strip().isdigit() and len(d) < 19)
            shapes.append((int(m["i"]), dims))
    return tuple(ints), tuple(shapes)


def created(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A record whose first word is ``Created``: the graph partitions of the cudagraphs
    artifact (2.9+), or another of torch's ``Created …`` lines (nothing)."""
    return text_record(lines, common) if lines and lines[0].startswith("Created ") else []


# The CUDA-graph trees' errors as a program's traceback ends in them, a warning prints them,
# or a paste quotes them: after an exception's or a warning's head ("RuntimeError: Error: …",
# "…/cudagraph_trees.py:3291: UserWarning: Unable to hit …"), a quote's "> " (ComfyUI-
# WanVideoWrapper#1584), a table cell (minerva-benchmarks#41: "<td>Error: …", its stack on the
# same line with literal "\n"s); not prose that mentions them
ERROR_MARKS_B = tuple(words.encode() for words, _ in ERROR_KINDS)
# (and an application's logging head with its one clause: fish-speech's API server,
# "ERROR:fish_speech_api.routes.speech:Request failed: Error: accessing …", docker-fish-speech-
# server#4: logging.basicConfig's LEVEL:name: and the app's own words before torch's)
# (and ComfyUI's words before the message it prints without the class: its console's and its
# error report's, textpaste.COMFYUI_HEADS: comfyui_yue#11, ComfyUI#6831)
_COMFY_HEADS = "|".join(map(re.escape, COMFYUI_HEADS))
_ERROR_HEAD_RE = re.compile(r"^[\s>*`]{0,12}(?:<td>)?"
                            r"(?P<comfy>" + _COMFY_HEADS + r")?"
                            r"(?:\S{0,1024}\.py:\d{1,9}: )?"
                            r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]{1,200}:"
                            r"(?:[\w ,'-]{1,80}: )?)?"
                            r"(?P<exc>[\w.]{1,120}(?:Error|Warning|Exception): )?(?:Error: |TODO: )?$")
_STACK_FRAME_RE = re.compile(r'File "(?P<file>[^"]{1,4096})", line (?P<line>\d{1,9}), in '
                             r"(?P<fn>[\w<>.]{1,400})")
_MAX_STACK_TEXT = 64_000
# torch's words before a kind's mark, kept with the message: the pool's count ("Detected 6
# tensor(s) in the cudagraph pool …"), the allocator's name (c10's CUDAAllocator::name():
# "cudaMallocAsync does not yet support …", "pluggable …")
_SUBJECT_RE = {"untracked-pool-tensors": re.compile(r"Detected \d{1,9} $"),
               "allocator-no-pool-check": re.compile(r"\b[A-Za-z]\w{0,60} $")}


class ErrorStart(NamedTuple):
    """A line that begins a CUDA-graph trees' error (:func:`error_start`)."""

    text: str  # torch's words, from its first ("Error: accessing …"), the heads before them off
    # The heads show the program raised it: an exception's class ("RuntimeError: ", a
    # traceback's last line or the exception printed) or ComfyUI's heads, which it prints only
    # for an exception that stopped the run (gpt-fast#232, pytorch#163257, ComfyUI_YuE#11,
    # ComfyUI#6831). A warning's class ("UserWarning: ", pytorch#176846) is not a raise; neither
    # is torch's message alone, a quote, a table cell, or an application's log line that
    # reports it and goes on (fish-speech's API server's "Request failed: "): the paste does
    # not show that the program stopped. runtime_error's event carries it.
    raised: bool


def error_start(raw: bytes) -> ErrorStart | None:
    """Where a line begins a CUDA-graph trees' error (from torch's first word of it: "Error:
    accessing …", "TODO: graph recording …", "Unable to hit …", an allocator's name, behind the
    heads that say it was raised or warned: an exception's class, ComfyUI's), or None."""
    head = raw[:2000]
    at, kind = next(((i, kind) for mark, (_, kind) in zip(ERROR_MARKS_B, ERROR_KINDS, strict=True)
                     if (i := head.find(mark)) >= 0), (-1, ""))
    if at < 0:
        return None
    text = raw.decode("utf-8", "replace")
    lead = raw[:at].decode("utf-8", "replace")  # (the mark is ASCII: text begins with this)
    for word in ("Error: ", "TODO: "):  # torch's own first word, kept with the message
        # (a word of its own: "RuntimeError: " before a message without it, 2.3's "static
        # input data pointer changed from …", is the exception's class, not that word)
        if lead.endswith(word) and not lead[:-len(word)][-1:].isalnum():
            lead = lead[:-len(word)]
    if kind in _SUBJECT_RE and (subject := _SUBJECT_RE[kind].search(lead)) is not None:
        lead = lead[:subject.start()]
    m = _ERROR_HEAD_RE.match(lead)
    if m is None:
        return None
    exc = m["exc"] or ""
    return ErrorStart(text[len(lead):].strip(),
                      raised=bool(m["comfy"] or exc) and not exc.endswith("Warning: "))


# kinds whose message holds no stack of torch's: the frames under it are a traceback's (a
# ComfyUI error report puts the exception first: torch's check_memory_pool is not user code)
_NO_STACK = frozenset({"allocator-no-pool-check"})
# torch's words after the stack it puts in the overwritten-output error (cudagraph_trees.py,
# 2.3-2.15: f"… Stack trace: {stack_trace}. To prevent overwriting, clone the tensor outside of
# torch.compile() …"): the frames past them are not torch's stack but a traceback's, as a paste
# that puts the message before its traceback has them (VS Code's exception box: the message,
# the program's frames, then "RuntimeError: …"; diffusers#7420), and the innermost frame of
# torch's stack is the line whose output was overwritten
_STACK_END_RE = re.compile(r"\.?\s{0,8}To prevent overwriting")


def _stack_end(text: str) -> int:
    """Where the stack torch put in a message ends: at its words after it, else the end."""
    m = _STACK_END_RE.search(text, 0, _MAX_STACK_TEXT)
    return m.start() if m is not None else len(text)


def runtime_error(lines: list[str], common: dict[str, Any], raised: bool = False) -> list[ev.Event]:
    """The error of the CUDA-graph trees a message holds (its first line error_start's text,
    ``raised`` its ``raised``), with the innermost frame of the stack torch puts in it ("Stack
    trace: File …", on its line or the next ones)."""
    text = "\n".join(lines)[:_MAX_STACK_TEXT].replace("\\n", "\n")
    kind = next((k for words, k in ERROR_KINDS if words in text[:2000]), None)
    if kind is None:
        return []
    stack = text[:_stack_end(text)]
    frames = [] if kind in _NO_STACK else [ev.UserLoc(m["file"], int(m["line"]), m["fn"])
                                           for m in _STACK_FRAME_RE.finditer(stack)]
    first = text.split("\n", 1)[0]
    message = first.split(" Stack trace:", 1)[0].strip()
    return [CudagraphError(kind=kind, message=message[:600], user=frames[-1] if frames else None,
                           raised=raised, **common)]


# ---------------------------------------------------------------- trace


class SpanTimer:
    """Pairs the begin (``ph: B``) and end (``ph: E``) chromium events of ``CUDAGraphNode.record``
    of one trace file into ``CudagraphRecordTime`` events (bounded: 1,024 open spans)."""

    def __init__(self) -> None:
        self._open: dict[tuple[Any, ...], float] = {}

    def feed(self, event: dict[str, Any], ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """The event a span's end makes (nothing for a begin, or an end without its begin)."""
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        ts = safe.json_num(event.get("ts"))
        backward = args.get("is_backward") is True or args.get("is_forward") is False
        key = (ctx.get("rank"), str(ctx.get("compile_id") or ""), backward, event.get("tid"))
        if ts is None:
            return
        if event.get("ph") == "B":
            if len(self._open) < 1024:
                self._open[key] = float(ts)
        elif event.get("ph") == "E" and (start := self._open.pop(key, None)) is not None:
            yield CudagraphRecordTime(seconds=max(0.0, (float(ts) - start) / 1e6),
                                      backward=backward, **ctx)


def span_compile_id(event: dict[str, Any], generation: int = 0,
                    process: str = "") -> ev.CompileId | None:
    """The compile id a chromium event's ``args`` name (runtime events have none in the envelope)."""
    args = event.get("args")
    text = args.get("compile_id") if isinstance(args, dict) else None
    cid = ev.CompileId.parse(text) if isinstance(text, str) and len(text) < 64 else None
    if cid is None or (not generation and not process):
        return cid
    return ev.CompileId(cid.frame, cid.compile, cid.attempt, cid.autograd, generation, process)


def metrics_skip(meta: dict[str, Any], ctx: dict[str, Any]) -> Iterator[ev.Event]:
    """``compilation_metrics.cudagraph_skip_reason`` (2.7+): the skip of that compile."""
    reason = meta.get("cudagraph_skip_reason")
    if isinstance(reason, str) and reason:
        lines = reason.splitlines()
        users = user_stack(lines[1:])
        yield CudagraphSkip(reason=reason[:4000], kind=skip_kind(reason), source="trace",
                            user=users[-1] if users else None, **ctx)

"""Lines the glog prefix does not start, for ``dyncli.logparse.textlog.TextLogParser``.

In a clean log they are the program's own output and blank lines. In a paste (issue 33) they
may hold torch's records behind leading text or with a prefix cut short (``_pasted``, through
``textpaste.normalize``), or be the rest of a record whose first line alone has the prefix
(torch 2.0 and torchdynamo: ``textorphans.continues``), or torch's own text without a prefix
(a ConstraintViolationError's items). Only such lines come here: a clean log's records never do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import textautotune as autotune
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse import textdde as dde
from dyncli.logparse import textframes as frames
from dyncli.logparse import textnotes as notes
from dyncli.logparse import textold as old
from dyncli.logparse import textorphans as orphans
from dyncli.logparse import textprofiler as profiler
from dyncli.logparse import textrecompiles as recompiles
from dyncli.logparse import textviolations as violations
from dyncli.logparse.safe import RECORD_ERRORS
from dyncli.logparse.textbuiltins import warned_break
from dyncli.logparse.textcrash import CrashReader, quoted_exception
from dyncli.logparse.textdrawn import BOX_STARTS, RichBox, qualified
from dyncli.logparse.textkinds import (
    COLLECT,
    FIRST,
    MAX_RECORD_LINES,
    TORCH_HEADS,
    TORCH_NOISE,
    TRACE_KIND,
)
from dyncli.logparse.textpaste import (
    is_fence,
    is_table_row,
    leaves_span_open,
    normalize,
    prose_code,
    rejoined_location,
    rejoined_message,
    wrapper_of,
)

_NO_EVENTS: tuple[ev.Event, ...] = ()
_TRACEBACK = (b"Traceback (most recent call last):", b"Traceback (most recent call last)")
# a constraint violation's item, pasted without its record (ConstraintViolationError's text,
# export's UserError: tensorrt#2794, pytorch#124507), and export's answer after the items
_VIOLATIONS = (b"as dynamic but your code specialized it", b" was inferred to be a constant (",
               b" satisfy the generated guard ", b" because the guards generated for it are too",
               b"solving the guards generated for ", b"Received user-specified dim hint ")
_SUGGESTED = violations.SUGGESTED_FIXES.encode()
_TRACEBACK_RE = re.compile(rb"^(?:.{0,400}Traceback \(most recent call last\):|"
                           rb"[A-Za-z_][\w.]{0,200}\s{2,}Traceback \(most recent call last\))\s*$")
# The exception torch raises at the recompile limit when it may not fall back to eager
# (FailOnRecompileLimitHit: fullgraph=True; CacheLimitExceeded: torch 2.5's name), on its own
# line or as a traceback's raise statement.
_RAISED_RE = re.compile(rb"^\s{0,40}(?:raise\s+)?(?:torch\._dynamo\.exc\.)?"
                        rb"(?:FailOnRecompileLimitHit|CacheLimitExceeded)\b")


# torchrun's tag on a line of a rank's output: its role and local rank ("[default0]:", the
# default role; "[rank0]:" with --role rank; two where a launcher's own is in front), a
# paste's indent before it (xDiT#705: "  [rank0]: RuntimeError: …")
_RANK_TAG_RE = re.compile(rb"^[ \t]{0,8}(?:\[[A-Za-z_]{1,40}\d{1,6}\]:)?"
                          rb"\[[A-Za-z_]{1,40}(?P<rank>\d{1,6})\]:")


# What a serving stack or a container puts before each line of a program's output: vLLM's
# logger ("%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] ", datefmt "%m-%d %H:%M:%S"; before
# 0.7 without the "[": "ERROR 11-29 18:13:51 multiproc_worker_utils.py:229] ", vllm#8054;
# vllm-ascend's with the year and milliseconds, vllm-ascend#4430), behind its processes' tags: the
# engine's "(EngineCore_DP0 pid=1162690) " (vllm#38884: a traceback logged with logger.exception,
# each line stamped), a worker's "(VllmWorker rank=3 pid=1564) " (vllm-ascend#2235), Ray's
# "(RayWorkerWrapper pid=6592, ip=10.0.0.1) " behind the engine's (vllm-ascend#4948), its bare
# "(pid=560, ip=10.1.18.11) " (vllm#13121); a record line with nothing after the stamp is a
# blank line of the traceback (no space after "]").
# docker compose's "service  | " (sglang#11218); Jenkins' timestamper, "[2025-05-06T16:55:02.641Z] "
# on every line of a job's console (MONAI tutorials#1988: a notebook's IPython traceback)
_PROCESS_TAG = (rb"\((?:[A-Za-z_]\w{0,40}|[a-z_]{1,20}=[\w.:-]{1,64})"
                rb"(?:,? [a-z_]{1,20}=[\w.:-]{1,64}){0,4}\) ")
_WRAPPER_TAG_RE = re.compile(
    rb"^(?:" + _PROCESS_TAG + rb"){0,2}(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    rb"(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? \[?[^\]\s\[]{1,200}:\d{1,9}\](?: |$)"
    rb"|^[A-Za-z0-9][\w.-]{0,63} {1,24}\| "
    rb"|^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\](?: |$)")
# Ray's log deduplication after a line that other workers printed too: " [repeated 23x across
# cluster]" (vllm-ascend#4948)
_RAY_REPEATED_RE = re.compile(rb" \[repeated \d{1,9}x across cluster\]\s{0,4}$")


_CUDAGRAPH = (b"cudagraph", b"cuda_graph_id")


def _said(raw: bytes, marks: tuple[bytes, ...], code_at: int | None) -> bool:
    """Whether one of torch's ``marks`` is in ``raw``, not where prose quotes it: before the
    line's first inline code span (``code_at``: textpaste.prose_code)."""
    if code_at is None:
        return any(m in raw for m in marks)
    return any(0 <= raw.find(m) < code_at for m in marks)


def safe_rank(text: bytes) -> int | None:
    """A rank tag's number (None for a damaged one)."""
    return int(text) if len(text) <= 6 else None


_SKIP_AT = re.compile(b"|".join(re.escape(h) for h in cg.SKIP_HEADS_B))
_BAR_END = re.compile(rb"(?:it/s\]|s/it\]|\||\r)\s{0,8}$")  # a progress bar's last chars


def _after_bar(raw: bytes) -> bytes:
    """A CUDA-graph skip message where a progress bar put it: written after the bar, on its
    line (dInfer#38: ``  0%|…| 0/6 [00:00<?, ?it/s]skipping cudagraphs due to …``); the line
    itself otherwise (prose that mentions a skip is not one)."""
    m = _SKIP_AT.search(raw)
    if m is None or m.start() == 0:
        return raw
    if not raw[:m.start()].strip(b" \t>") or _BAR_END.search(raw, 0, m.start()):
        return raw[m.start():]  # after a bar, or a quote's "> " (pytorch#119241's comment)
    return raw


# torch's own words that a user sees without TORCH_LOGS: a Python warning torch raised
# ("…/torch/_dynamo/variables/functions.py:725: UserWarning: Graph break due to unsupported
# builtin X", sageattention#73; "UserWarning: Dynamo does not know how to trace the builtin `X`",
# sageattention#337), a graph break's message as an exception prints it ("Unsupported: Failed
# to trace builtin operator" with its Explanation and Hints, pytorch#174138;
# "torch._dynamo.exc.Unsupported: call_method …", righttyper#93: fullgraph=True raised it), and
# error_on_recompile's "torch._dynamo.exc.RecompileError: Recompiling function f in …"
_PY_WARNING_RE = re.compile(rb"^(?:\S{0,1024}torch[/\\]_dynamo[/\\][\w/\\]{1,200}\.py:\d{1,9}: )?"
                            rb"UserWarning: (?P<msg>(?:Graph break|Dynamo does not know how to trace)"
                            rb".{0,4000})$")
# (the qualified name behind a paste's own indent too: vllm-ascend#1615's block is one space in)
_UNSUPPORTED_RE = re.compile(rb"^(?P<exc>(?: {1,4})?torch\._dynamo\.exc\.)?Unsupported: "
                             rb"(?P<msg>\S.{0,4000})$")
# torch 2.1-2.6's UserError for a Python branch on a tensor's value where no graph break may
# be (fullgraph=True, export: symbolic_convert.generic_jump), with dynamo's "from user code:"
# stack after it (unsloth#2307, #2204): read as that break, raised where its class is named
_CONTROL_FLOW = b"Dynamic control flow is not supported at the moment."
_CONTROL_FLOW_RE = re.compile(rb"^(?P<exc>(?:torch\._dynamo\.exc\.)?UserError: )?"
                              + re.escape(_CONTROL_FLOW) + rb".{0,4000}$")
_RECOMPILE_ERROR_RE = re.compile(rb"^(?:torch\._dynamo\.exc\.)?RecompileError: "
                                 rb"(?P<msg>Recompiling function .{1,4000})$")


# compile_wrapper's error when a fullgraph call compiled nothing (torch 2.12 on), as the
# program's traceback ends in it or a wrapper quotes it (vLLM's "Worker failed with error
# 'torch.compile with fullgraph=True found no compiled frames. …'", pytorch#181247)
_NO_FRAMES = b"torch.compile with fullgraph=True found no compiled frames."
# at a line's start (a traceback's last line), behind a markdown quote, or in a wrapper's
# "… error '…'" — not prose that mentions it
_NO_FRAMES_RE = re.compile(rb"^(?:> ?)*`?(?:RuntimeError: )?(?:[\w ]{0,80} error ')?"
                           + re.escape(_NO_FRAMES))


# a wrapper's words before torch's gb type: its last ": ", ComfyUI's "!!! " and ":** "
_WRAPPED_GB_RE = re.compile(rb"(?:: |!!! |:\*\* )(?P<gb>[^:!]{1,300})$")
# torch's gb type alone on its line, as ``print(e)`` of the Unsupported shows it (exc.py's
# format_graph_break_message: the type, then "  Explanation: …"), or behind print's blank in
# ``print("Compile error:\n", e)`` (pytorch#167266, #180845): torch's types are at most 88
# characters (2.15's registry), begin with a letter, an underscore or a backtick. Matched
# whole on the line without its trailing blanks: a lazy type before "\s*$" retried the blanks
# at each of its 120 lengths (5 s on a line of 1 MB of blanks between two words)
_BARE_GB_RE = re.compile(rb" ?(?P<gb>[A-Za-z_`][^\t]{0,119})")
# pytest's short test summary: "FAILED tests/x.py::test[id] - torch._dynamo.exc.Unsupported: …"
# (vLLM#6917): the exception's line after the test's id
_PYTEST_SUMMARY_RE = re.compile(rb"^(?:FAILED|ERROR) \S[^\r\n]{0,2000}? - (?=torch\.)")
_SELF_CHECK = frames.SELF_CHECK.encode()
_SELF_CHECK_OLD = frames.SELF_CHECK_OLD.encode()
_EXPLANATION = b"  Explanation: "
_TRIGGERED = b"triggered by the following guard failure"
_STANCE = b"Detected recompile when torch.compile stance is"
_EXPLAIN_HEADS = tuple(h.encode() for h in breaks.EXPLAIN_HEADS)
_GUARD_WORDS = (b"eval", b"runtime_assert")  # guard records whose location a paste may wrap


def bare_gb_type(line: bytes) -> bytes | None:
    """torch's gb type where ``line`` is one alone (``_BARE_GB_RE``; not a head that ends
    with a colon), else None."""
    head = line.rstrip()
    m = _BARE_GB_RE.fullmatch(head) if not head.endswith(b":") else None
    return m["gb"] if m is not None else None


def said_without_prefix(raw: bytes) -> tuple[Any, str] | None:
    """(reader, first line) of torch's message that a line without a prefix begins, or None;
    behind a markdown quote's marks too (a user quoting torch's warning or exception, "> UserWarning:
    Graph break …", as quoted records are read elsewhere)."""
    line = orphans.unquoted(raw.rstrip())
    if _NO_FRAMES in line[:4000] and _NO_FRAMES_RE.match(line) is not None:
        return frames.no_compiled_frames, line[line.find(_NO_FRAMES):].decode("utf-8", "replace")
    if b"UserWarning: " in line[:1300] \
            and (m := _PY_WARNING_RE.match(line.lstrip(b" \t>"))) is not None:
        return warned_break, m["msg"].decode("utf-8", "replace")
    if b"Unsupported: " in line[:44] and (m := _UNSUPPORTED_RE.match(line)) is not None:
        # (qualified, it is a traceback's last line, pytest's or a wrapper's copy of it: raised)
        head = breaks.RAISED_UNSUPPORTED if m["exc"] else "Unsupported: "
        return breaks.unsupported_break, head + m["msg"].decode("utf-8", "replace")
    if _CONTROL_FLOW in line[:120] and (m := _CONTROL_FLOW_RE.match(line)) is not None:
        head = breaks.RAISED_UNSUPPORTED if m["exc"] else "Unsupported: "
        return breaks.unsupported_break, head + line[len(m["exc"] or b""):].decode(
            "utf-8", "replace")
    if b"RecompileError: " in line[:40] and (m := _RECOMPILE_ERROR_RE.match(line)) is not None:
        return recompiles.recompiling, m["msg"].decode("utf-8", "replace")
    if any(mark in line[:2000] for mark in cg.ERROR_MARKS_B) \
            and (start := cg.error_start(line)) is not None:
        return partial(cg.runtime_error, raised=start.raised), start.text
    if line.startswith(b"Graph break ") and (text := line.decode("utf-8", "replace").strip()) \
            and breaks.GRAPH_BREAK_RE.match(text) is not None:
        # torch 2.4-2.6's graph-break record as a plain formatter prints it (bitsandbytes#1578)
        return breaks.graph_break, text
    if line.startswith(b"Graph break: ") and old.old_break_head(text := line.decode("utf-8", "replace")):
        # torch 2.1-2.5's record with the prefix cut from every line (its traceback is its own)
        return old.old_graph_break, text.strip()
    if line.strip() in _EXPLAIN_HEADS:
        return breaks.explained_breaks, line.strip().decode("utf-8", "replace")
    if line.startswith(b"Torchdynamo Profiler Report") and profiler.is_head(line):
        return profiler.report, line.strip().decode("utf-8", "replace")
    if _STANCE in line[:200]:
        text = line.strip().decode("utf-8", "replace")
        if recompiles.STANCE_RE.match(text) is not None:
            return recompiles.stance_recompile, text
    return None


# What else continues a pending message of each reader besides its indented lines: the
# unindented lines it begins with (the builtin warning's own hints; an exception's "from user
# code:" before its stack), and how many blank lines in a row do (between an Unsupported
# block's parts: two where torch has no Hint for the break, 2.8-2.15's empty hints section,
# sageattention#92; a skip's stack has none)
_CONTINUES: dict[Any, tuple[tuple[bytes, ...], int]] = {
    cg.text_record: ((), 0),
    warned_break: ((b"If it is ",), 1),
    # (its parts at the margin too: a paste that lost torch's two-space indent, pytorch#165421)
    # (and its link, where rich or a terminal wrapped " For more details about this graph
    # break, please visit: " before it: 2.8-2.15's exc.py)
    breaks.unsupported_break: ((b"from user code:", b"Explanation: ", b"Hint: ",
                                 b"Developer debug context: ", b"https://"), 2),
    breaks.cut_break: ((b"from user code:", b"Explanation: ", b"Hint: ",
                         b"Developer debug context: ", b"https://"), 2),
    recompiles.recompiling: ((), 1),
    recompiles.stance_recompile: ((), 1),
    # (explain()'s breaks of 2022 are numbered at the left margin, blank lines between them)
    breaks.explained_breaks: (tuple(f"{n}. ".encode() for n in range(1, 100)), 1),
    frames.no_compiled_frames: ((), 0),
    profiler.report: ((), 1),  # (and every line up to the one that ends it: its tables' rows)
    cg.many_sizes: ((), 0),  # (and any line that is a piece of torch's warning)
    breaks.graph_break: ((b"Reason: ", b"User code traceback:", b"Graph Break Reason: "), 0),
    old.old_graph_break: ((), 0),  # (its own rule: textold.old_break_continues)
    # (its stack: " File …" lines, a blank where the code line was empty: transformers#30775)
    cg.runtime_error: ((), 1),
    notes.noted: ((), 0),  # a warning's code line, indented under it
    violations.wrapped_violation: ((), 0),  # a "You marked" item wrapped onto indented lines
}


class ForeignLines:
    """The parser's handling of lines without a torch prefix (a mixin of TextLogParser)."""

    stats: ev.ParseStats
    _open: dict[tuple[Any, ...], Any]
    _stray: bytes | None
    # torch's message that a paste (or torch itself: a warning, an exception) put without a
    # prefix, whose body follows on indented lines: a CUDA-graph skip's "Found from :" stack
    # (comfyui#6866), a graph break's "Unsupported: …" block with its Explanation and Hints
    # (pytorch#174138), a RecompileError's guard failures; collected until a line that is none
    _pending: list[str] | None = None
    _pending_at = 0
    # (lines, common) -> events; a partial of one with what the first line decided (a
    # CUDA-graph error's raised)
    _pending_read: Any = None
    _pending_blank = 0
    _pending_margins = 0  # lines at the margin an old graph-break record took after its head
    _pending_quoted = False  # its first line was behind a markdown quote: so are the rest
    # the last line read as nobody's (and its number): a wrapper's head of torch's message
    # when torch's "  Explanation:" follows it
    _unread: tuple[bytes, int] | None = None
    _crashes: CrashReader
    _box: RichBox
    _line_rank: int | None = None  # the rank torchrun's tag gave the line being read
    _pending_rank: int | None = None
    _tag_blank = True  # the tags seen have a blank after them (not torch's own form)
    _suggesting = False  # inside torch's "Suggested fixes:" block
    _dde_under = ""  # the heading of torch's data-dependent message just read (textdde.HEADS)
    _dde_seen = dde.FAR  # the line of the last data-dependent fact read (a stack may follow)
    # the rank, pid and compile id of the error that fact was of, where its record had a prefix
    # (a bare one's: none); a stack under it is that error's
    _dde_owner: dict[str, Any] | None = None
    _dde_frame: ev.UserLoc | None = None  # the user frame of dynamo's stack just read
    _pytest_indent: int | None = None  # the indent of pytest's "E   …" block being read
    _wrapper: re.Pattern[bytes] | None = None  # a tool's stamp seen before torch's lines
    _tuning = False  # inside a table of max-autotune's tuning output (textautotune)
    _warned = -1  # the line number of the last warning torch raised (textnotes.unread_kind)
    # markdown (textpaste.prose_code): inside a fence; the last line that was a fence's marks
    # (``_fence_marks``); the last line that left prose's inline code span open; where the line
    # being read begins to quote in prose's code
    _fence = False
    _marks_at = -1
    _span_to = -2
    _code_at: int | None = None

    def _dde_owned(self, common: dict[str, Any], lineno: int) -> None:
        """A fact of a data-dependent error whose record has a prefix (``common``: its fields)
        was read at ``lineno``: dynamo's ``from user code:`` stack that follows it without a
        prefix, before anything else that could own one, is that error's (round 23)."""
        self._dde_seen = lineno
        self._dde_owner = {k: common.get(k) for k in ("rank", "pid", "compile_id")}

    def _pending_done(self) -> list[ev.Event]:
        """The events of the pending message with the lines collected under it."""
        lines, self._pending = self._pending, None
        if not lines:
            return []
        try:
            return list(self._pending_read(lines, {"line": self._pending_at,
                                                   "rank": self._pending_rank}))
        except RECORD_ERRORS:
            if self._pending_read is breaks.cut_break:
                # (an Explanation line without torch's other parts: nobody's after all)
                self.stats.recognized -= len(lines)
                self.stats.records -= 1
                self.stats.unrecognized += len(lines)
                self._sample(self._pending_at, lines[0].encode())
            return []

    def _pend(self, read: Any, text: str, lineno: int) -> Iterable[ev.Event]:
        self.stats.recognized += 1
        self.stats.records += 1
        self._pending, self._pending_at, self._pending_read, self._pending_blank = [text], lineno, read, 0
        self._pending_quoted = False
        self._pending_margins = 0
        self._pending_rank = self._line_rank
        return _NO_EVENTS

    def _claim_unread(self, read: Any, text: str, raw: bytes) -> Iterable[ev.Event]:
        """The last line read as nobody's, now known by ``raw`` under it as the first line
        (``text``) of torch's message: its count undone, the message pending with ``raw``."""
        assert self._unread is not None
        at = self._unread[1]
        self._unread = None
        self.stats.unrecognized -= 1
        if self.stats.samples and self.stats.samples[-1][0] == at:
            self.stats.samples.pop()
        self._pend(read, text, at)
        self.stats.recognized += 1
        assert self._pending is not None
        self._pending.append(raw.decode("utf-8", "replace").rstrip())
        return _NO_EVENTS

    def _sample(self, lineno: int, text: bytes) -> None:  # (TextLogParser's)
        raise NotImplementedError

    def _fence_marks(self, raw: bytes, lineno: int) -> bool:
        """Whether ``raw`` is a markdown fence's marks (``textpaste.is_fence``), the fence
        opened or closed by it: decided here once for both readers of the line (``_pasted``,
        then ``_foreign``: ``_marks_at``), on the line as pasted. A user's fence stands at the
        line's start (behind a quote's marks); marks behind a tool's stamp (torchrun's rank
        tag, Ray's process tag) are the program's output, as an LLM server's printed completion
        is, and open nothing."""
        if not is_fence(raw):
            return False
        self._fence, self._marks_at = not self._fence, lineno
        return True

    def _pasted(self, raw: bytes, lineno: int) -> bytes | None:
        """The glog line a pasted line stands for (``textpaste.normalize``), counted by what
        was done to find it; None for a line with no torch record in it, or one that quotes
        it in prose (inside an inline code span opened above, in a table's cell)."""
        if not self._fence_marks(raw, lineno) and not self._fence and (
                (self._span_to == lineno - 1 and prose_code(raw, True) == 0) or is_table_row(raw)):
            return None
        found = normalize(raw)
        if found is None:
            return None
        line, done = found
        if done == "prefixes trimmed" and self._wrapper is None:
            self._wrapper = wrapper_of(raw)
        if done:
            self.stats.pasted[done] = self.stats.pasted.get(done, 0) + 1
        return line

    def _foreign(self, raw: bytes, lineno: int, key: tuple[Any, ...]) -> Iterable[ev.Event]:
        """A line without a torch prefix: stdout noise, a Python traceback, a blank line, or
        (torch 2.0 and torchdynamo) the rest of the record whose first line had the prefix;
        then shown to the tracebacks' reader (``textcrash``), with whether anyone read it."""
        if self._wrapper is not None and (stamp := self._wrapper.match(raw)) is not None:
            # the stamp a tool put on every line, torch's too (GitHub Actions, Ray, srun,
            # journald, a container's log): the program's traceback behind it is read
            raw = raw[stamp.end():]
        for _ in range(3):  # a serving stack's or a container's stamps on the line (nested)
            if (wrapped := _WRAPPER_TAG_RE.match(raw)) is None:
                break
            raw = raw[wrapped.end():]
            if raw.rstrip()[-8:] == b"cluster]" and (ray := _RAY_REPEATED_RE.search(raw)) is not None:
                raw = raw[:ray.start()]
        if raw[:1] in (b"F", b"E") and (summary := _PYTEST_SUMMARY_RE.match(raw)) is not None:
            raw = raw[summary.end():]
        if raw[:1] == b"E" and (raw[1:2] in (b" ", b"") or raw[1:].isspace()):
            raw = self._pytest_line(raw)
        else:
            self._pytest_indent = None
        tag = _RANK_TAG_RE.match(raw)
        self._line_rank = None
        if tag is not None:  # torchrun's tag on a line of the program's output
            raw = self._untagged(raw, tag)
        if raw[:3] in BOX_STARTS:  # rich's traceback box, as Python prints the traceback
            raw = self._box.line(raw)
        else:
            self._box.outside()
            if self._crashes.awaiting and raw[:1] not in (b" ", b"\t", b""):
                raw = qualified(raw)  # its exception's class, named alone (IPython's, rich's)
        if raw[:2] == b"**" and raw.rstrip()[-2:] == b"**" and len(raw.strip()) > 4:
            raw = raw.strip()[2:-2]  # a paste's markdown bold around a line (cuEquivariance#77)
        if b" error '" in raw[:400] and (quoted := quoted_exception(raw)) is not None:
            raw = quoted  # torch's exception as a wrapper quotes it (vLLM's worker error)
        records = self.stats.records
        carried = self._span_to == lineno - 1 and not self._fence
        marks = self._marks_at == lineno
        prose = not self._fence and not marks
        self._code_at = prose_code(raw, carried) if prose else None
        unread = self.stats.unrecognized
        out = self._read_foreign(raw, lineno, key)
        if prose and self.stats.unrecognized > unread and leaves_span_open(raw, carried):
            self._span_to = lineno
        if self.stats.records > records and self._dde_seen != lineno:
            self._dde_seen = dde.FAR  # another record: a stack after it may be its own
        if self._code_at == 0:  # (prose: no line of a traceback)
            return out
        # (a fence's marks end a traceback pasted in it, as its end would: not its exception)
        if raw[:1] == b">":  # a traceback behind a markdown quote (pytorch#90540)
            raw = orphans.unquoted(raw)
        crashed = self._crashes.observe(b"" if marks else raw, lineno,
                                        self.stats.unrecognized > unread, self._line_rank)
        if crashed:  # (a crash of torch's compiler is a torch record: a paste of it alone is read)
            self.stats.records += len(crashed)
            return [*out, *crashed]
        return out

    def _old_break_line(self, raw: bytes, whole: bytes, lineno: int,
                        key: tuple[Any, ...]) -> Iterable[ev.Event]:
        """A line under a 2.1-2.5 graph-break record whose prefix was cut from every line
        (``raw``; ``whole``: with a quote's marks, where the record was quoted): its own (its
        stack, the traceback torch logged with it, that exception's line), or the end of it; a
        traceback head it took whose first frame is not dynamo's is given back, read as the
        program's (ending in a raise, it says the program stopped)."""
        assert self._pending is not None
        text = raw.decode("utf-8", "replace").rstrip()
        taken = old.old_break_continues(self._pending_margins, self._pending[-1], text) \
            if len(self._pending) < MAX_RECORD_LINES else False
        if taken:
            self.stats.recognized += 1
            self._pending_margins += text[:1] not in (" ", "\t")
            self._pending.append(text)
            return _NO_EVENTS
        out: list[ev.Event] = []
        if taken is None:
            head = self._pending.pop()
            self.stats.recognized -= 1
            out += self._pending_done()
            out += self._read_foreign(head.encode(), lineno - 1, key)
        else:
            out += self._pending_done()
        return [*out, *self._read_foreign(whole, lineno, key)]

    def _autotune(self, part: str, raw: bytes, lineno: int) -> Iterable[ev.Event]:
        """A line of max-autotune's tuning output: a note for each table (a row outside one
        is a table the paste began inside), summary and stats head; rows, the lines under a
        table's head and the stats' payload are understood parts of those."""
        self.stats.recognized += 1
        if part in ("row", "head", "payload"):
            if self._tuning or part == "payload":
                return _NO_EVENTS
            part = "table"
        self._tuning = part == "table"
        self.stats.records += 1
        return (autotune.note(part, raw, {"line": lineno, "rank": self._line_rank}),)

    def _pytest_line(self, raw: bytes) -> bytes:
        """A line of pytest's report of an exception (``E       torch._dynamo.exc.Unsupported:
        …``, then ``E         Explanation: …``: pytorch#170433, vLLM's CI) without its ``E``
        and the indent of its block (the least of the block's lines: the exception's own),
        so that the message's own indent stays."""
        body = raw[1:].rstrip()
        if not body:
            return b""
        indent = len(body) - len(body.lstrip(b" "))
        if self._pytest_indent is None or indent < self._pytest_indent:
            self._pytest_indent = indent
        return body[self._pytest_indent:]

    def _untagged(self, raw: bytes, tag: re.Match[bytes]) -> bytes:
        """A line without torchrun's ``[default0]:`` (tail_log.py's header, 2.1-2.15: ``f"[{role}
        {local_rank}]:"`` before every line of a rank's output with ``--tee``; ``[rank0]:``
        with ``--role rank``, ezpz#236 with a blank after it), its rank noted for its events. A
        bare tag is a blank line. torch's header has no blank after it, so a line it put at
        the margin reads ``[rank0]:Traceback``; a paste whose every tag has one (another
        launcher's) loses it too, until a line shows torch's form."""
        rest = raw[tag.end():]
        if rest[:1] not in (b"", b" ", b"\t"):
            self._tag_blank = False
        elif rest[:1] == b" " and self._tag_blank:
            rest = rest[1:]
        self._line_rank = safe_rank(tag["rank"])
        return rest

    def _read_foreign(self, raw: bytes, lineno: int, key: tuple[Any, ...]) -> Iterable[ev.Event]:
        """A line without torch's prefix (``_foreign``'s, its stamps off), given to the first of
        its readers below that takes it, in this order; one none takes is nobody's."""
        if self._pending is not None:
            return self._pending_line(raw, lineno, key)
        if raw[:1] == b"\t" and (rec := self._open.get(key)) is not None and rec.kind == TRACE_KIND:
            self.stats.recognized += 1  # a line of a trace record's payload: the trace's
            self.stats.blank += 1
            return _NO_EVENTS
        if self._code_at == 0:  # inside prose's inline code from its start, or a table's row
            return self._prose_line(raw, lineno)
        if (found := self._explain_line(raw, lineno)) is not None \
                or (found := self._dde_line(raw, lineno)) is not None:
            return found
        rec = self._open.get(key)
        if (found := self._output_line(raw, lineno, rec)) is not None \
                or (found := self._record_rest(raw, rec)) is not None \
                or (found := self._self_check(raw, lineno)) is not None \
                or (found := self._claimed_above(raw, lineno)) is not None \
                or (found := self._cut_break_line(raw, lineno)) is not None \
                or (found := self._message_line(raw, lineno)) is not None:
            return found
        return self._program_line(raw, lineno)

    def _pending_line(self, raw: bytes, lineno: int, key: tuple[Any, ...]) -> Iterable[ev.Event]:
        """A line under a pending message: one of its own (indented, one of the heads or
        blank lines its reader allows, the rest of its one line a paste wrapped) is added to
        it; any other line ends it and is read as itself."""
        assert self._pending is not None
        whole = raw
        if self._pending_quoted and raw[:1] == b">":
            raw = orphans.unquoted(raw)  # (the quote's marks off its body's lines)
        blank = not raw.strip()
        # (blank lines in a row beyond the reader's count end it)
        read = self._pending_read
        if read is old.old_graph_break:
            return self._old_break_line(raw, whole, lineno, key)
        heads, blanks = _CONTINUES[read.func if isinstance(read, partial) else read]
        if len(self._pending) < MAX_RECORD_LINES and (
                (raw[:1] in (b" ", b"\t") and not blank) or (heads and raw.startswith(heads))
                or (blank and self._pending_blank < blanks)
                or (self._pending_read is cg.many_sizes and cg.continues_many_sizes(raw))
                or (read is profiler.report and profiler.continues(self._pending[-1], raw))):
            self.stats.recognized += 1
            self._pending_blank = self._pending_blank + 1 if blank else 0
            self._pending.append(raw.decode("utf-8", "replace").rstrip())
            return _NO_EVENTS
        if read is breaks.unsupported_break and len(self._pending) == 1 and (
                joined := rejoined_message(self._pending[0].encode(), raw)) is not None:
            # its one line wrapped by the paste inside the reprs it names (pytorch#141964)
            self.stats.recognized += 1
            self._pending[0] = joined.decode("utf-8", "replace")
            return _NO_EVENTS
        return [*self._pending_done(), *self._read_foreign(whole, lineno, key)]

    def _prose_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event]:
        """A line that prose quotes from its start (an inline code span carried into it, a
        table's row): words about torch's output, nobody's; what was under way ends."""
        self._suggesting, self._dde_under, self._unread = False, "", None
        self.stats.unrecognized += 1
        self._sample(lineno, raw)
        return _NO_EVENTS

    def _explain_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """torch's "Suggested fixes:" block (its head, then one fix a line) and explain()'s
        "Graph Break Count: N" head; None for any other line (which ends the block)."""
        suggesting, self._suggesting = self._suggesting, False
        if suggesting and (fix := violations.suggested_fix(raw.decode("utf-8", "replace"))):
            self.stats.recognized += 1
            self._suggesting = True
            return (ev.SuggestedFix(name=fix[0], value=fix[1], line=lineno, rank=self._line_rank),)
        if b"Count: " in raw[:40] and (counted := breaks.explain_count(
                raw.decode("utf-8", "replace"), {"line": lineno, "rank": self._line_rank})) is not None:
            self.stats.recognized += 1  # explain()'s head: "Graph Break Count: 15"
            self.stats.records += len(counted)
            return counted
        if raw.strip() == _SUGGESTED:
            self.stats.recognized += 1
            self._suggesting = True
            return _NO_EVENTS
        return None

    def _dde_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """A line of torch's data-dependent error message (textdde): a heading, a fact under
        one, dynamo's stack under the error and its user frame; None for any other line."""
        under, self._dde_under = self._dde_under, ""
        if under == "stack":  # dynamo's stack under a data-dependent error: its user frame
            inside, stated = dde.in_stack(raw, self._dde_frame, lineno, self._dde_owner)
            if inside:
                self.stats.recognized += 1
                self._dde_under, self._dde_seen = "stack", lineno
                # the frame whose code line may come next: a user frame's File line (a torch
                # frame's code, a code line's carets under it, are nobody's)
                self._dde_frame = stated.user if stated is not None and stated.user is not None \
                    and not stated.user.code else None
                return (stated,) if stated is not None else _NO_EVENTS
            self._dde_frame = None
        elif raw.strip() == dde.STACK_HEAD and 0 <= lineno - self._dde_seen <= dde.STACK_AFTER:
            self.stats.recognized += 1
            self._dde_under = "stack"
            return _NO_EVENTS
        if under and under != "stack" and (fact := dde.under(under, raw, lineno)) is not None:
            self._dde_seen = lineno
            self.stats.recognized += 1
            self._dde_under = under if under == "checks" else ""  # (checks come numbered)
            return (fact,)
        if (head := dde.heading(raw)):
            self.stats.recognized += 1
            self._dde_under = head
            return _NO_EVENTS
        return None

    def _output_line(self, raw: bytes, lineno: int, rec: Any) -> Iterable[ev.Event] | None:
        """torch's own output that has no prefix: a blank line or known noise (which ends the
        open record ``rec``'s unprefixed tail), max-autotune's tables, a note's warning,
        the warning of many sizes, a CUDA-graph message; None for any other line."""
        if not raw.strip() or any(s in raw for s in TORCH_NOISE):
            self.stats.recognized += 1
            self.stats.blank += 1
            if rec is not None:
                rec.tail = False
            return _NO_EVENTS
        part = autotune.line_kind(raw, self._tuning)
        if part is not None:  # max-autotune's tuning output, which inductor writes itself
            return self._autotune(part, raw, lineno)
        self._tuning = False
        if (noted := notes.warned(raw)) is not None:
            # torch's message of a note ("The CUDA Graph is empty. …" as Python warns it, the
            # code line under it; "Not enough SMs …" without its prefix)
            return self._pend(notes.noted, noted, lineno)
        if raw.startswith(cg.MANY_SIZES_HEAD) and b"distinct sizes" not in raw:
            # torch's warning of many sizes, re-wrapped over lines (pytorch#188150)
            return self._pend(cg.many_sizes, raw.decode("utf-8", "replace").strip(), lineno)
        if _said(raw, _CUDAGRAPH, self._code_at):  # pasted without its prefix
            text = _after_bar(raw).decode("utf-8", "replace").strip()
            if cg.skip_with_stack(text):
                return self._pend(cg.text_record, text, lineno)
            found = cg.text_record([text], {"line": lineno, "rank": self._line_rank})
            if found:
                self.stats.recognized += 1
                self.stats.records += 1
                return found
        return None

    def _record_rest(self, raw: bytes, rec: Any) -> Iterable[ev.Event] | None:
        """The rest of the open record ``rec`` on a line without its prefix: a guard's user
        line a paste wrapped, or a line that continues a collected record (torch 2.0 and
        torchdynamo: textorphans.continues); None for any other line."""
        if rec is not None and rec.mode == FIRST and rec.kind in _GUARD_WORDS and rec.tail \
                and (joined := rejoined_location(rec.lines[0], raw)) is not None:
            # a guard's user line that the paste wrapped onto the next line (pytorch#107200:
            # "… at transformers/…/modeling_" then "bert.py:235 in forward (…infer_size)")
            self.stats.recognized += 1
            rec.lines[0], rec.tail = joined, False
            return _NO_EVENTS
        if rec is not None and rec.mode == COLLECT \
                and orphans.continues(rec.kind, rec.lines[0], raw, rec.tail):
            self.stats.recognized += 1
            if len(rec.lines) < MAX_RECORD_LINES:
                rec.lines.append(orphans.unquoted(raw))
            return _NO_EVENTS
        return None

    def _self_check(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """torch's guard self-check AssertionError, as raised or quoted by a wrapper."""
        if _said(raw, (_SELF_CHECK, _SELF_CHECK_OLD), self._code_at):
            found = frames.guard_self_check(raw.decode("utf-8", "replace"),
                                             {"line": lineno, "rank": self._line_rank})
            if found:
                self.stats.recognized += 1
                self.stats.records += 1
                return found
        return None

    def _claimed_above(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """A line of torch's that makes the line above it, read as nobody's, the first line of
        torch's message (``_claim_unread``): an Explanation under a graph break's type, a
        guard failure under a recompile's head; None for any other line."""
        if self._unread is None or self._unread[1] != lineno - 1:
            return None
        above = self._unread[0]
        if raw.startswith(_EXPLANATION) \
                and (gb_b := _WRAPPED_GB_RE.search(above.rstrip())) is not None:
            # torch's graph-break message whose "Unsupported: " a wrapper replaced with its own
            # words, known by torch's Explanation line under it: the text after the wrapper's
            # words is torch's gb type (intel/llm-scaler#333: "❌ [ERROR] Error in Phase 1
            # (Encoding): Data-dependent branching"; ComfyUI's console, KJNodes#533: "!!!
            # Exception during processing !!! Unsupported method call"; its error report,
            # ComfyUI#10114: "- **Exception Message:** torch.* op returned non-Tensor")
            gb = gb_b["gb"].decode("utf-8", "replace").strip()
            return self._claim_unread(breaks.unsupported_break, "Unsupported: " + gb, raw)
        if raw.startswith(_EXPLANATION) and (bare := bare_gb_type(above)) is not None:
            # the message as print(e) shows it: the line above is torch's gb type itself
            gb = bare.decode("utf-8", "replace").strip()
            return self._claim_unread(breaks.unsupported_break, "Unsupported: " + gb, raw)
        if raw.lstrip().startswith(_TRIGGERED) \
                and recompiles.RECOMPILING_RE.match(head := above.decode("utf-8", "replace")
                                                 .strip()[:4000]) is not None:
            # a recompile without a prefix, known by torch's failure line under its first
            # line: torch's docs render it so (programming_model.recompilation), and a notebook
            # whose handler drops the prefix
            return self._claim_unread(recompiles.recompiling, head, raw)
        return None

    def _cut_break_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """torch's graph-break message whose type line the paste cut (no line above is torch's
        type: ``_claimed_above`` took those), begun at its Explanation: read if torch's other
        parts follow (``breaks.cut_break``); None for any other line."""
        if not raw.startswith(_EXPLANATION):
            return None
        self._unread = None
        return self._pend(breaks.cut_break, raw.decode("utf-8", "replace").rstrip(), lineno)

    def _message_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event] | None:
        """torch's message without a prefix, alone on its line: a note on what it did, the
        first line of a message read with the lines under it (``said_without_prefix``), a
        record's head, a limit warning's function line, a data-dependent error, the limit
        raised; None for any other line."""
        if (note := notes.note_line(raw)) is not None:
            # torch's note on what it did (inductor's "Online softmax is disabled …", a
            # UserWarning whose message follows its head): nothing to fix, understood
            self.stats.recognized += 1
            self.stats.records += note in notes.FIRST_LINES
            return _NO_EVENTS
        said = said_without_prefix(raw)
        if said is not None:
            read, text = said
            out = self._pend(read, text, lineno)
            self._pending_quoted = raw[:1] == b">"
            return out
        if _said(raw, TORCH_HEADS, self._code_at):
            self.stats.recognized += 1
            self.stats.records += 1
            return _NO_EVENTS
        if orphans.LIMIT_FN.match(raw):  # a limit warning's function line, its prefix cut off
            self.stats.recognized += 1
            self._stray = raw
            return _NO_EVENTS
        error = dde.events(raw, {}, lineno)
        if error:  # a data-dependent error's line, pasted without its prefix (or as a message)
            self._dde_seen, self._dde_owner = lineno, None
            self.stats.recognized += 1
            self.stats.records += 1
            return error
        raised = _RAISED_RE.match(raw)
        if raised is not None:  # the limit raised (fullgraph=True): the program stopped
            self.stats.recognized += 1
            text = raw.decode("utf-8", "replace").strip()
            return (ev.LimitRaised(message=text[:300], line=lineno),)
        return None

    def _program_line(self, raw: bytes, lineno: int) -> Iterable[ev.Event]:
        """What is left: the program's traceback head, a constraint violation's item, torch's
        text with nothing to read (``notes.unread_kind``), or a line nobody's (counted and
        sampled, kept as ``_unread`` for a line under it that claims it)."""
        if raw.rstrip().endswith(_TRACEBACK) and _TRACEBACK_RE.match(raw) is not None:
            # the program raised (Python's head, or IPython's: "AssertionError    Traceback …")
            self.stats.unrecognized += 1  # (the line is Python's, not torch's: not understood)
            self._sample(lineno, raw)
            self._dde_seen = dde.FAR  # (its exception, and a stack under it, are another's)
            return (ev.Traceback(line=lineno),)
        if _said(raw, _VIOLATIONS, self._code_at):
            found = violations.constraint_violations([raw.decode("utf-8", "replace")], {"line": lineno})
            if found:
                self.stats.recognized += 1
                self.stats.records += 1
                return found
            text = raw.decode("utf-8", "replace").rstrip()
            if violations.wrapped_mark(text):
                return self._pend(violations.wrapped_violation, text, lineno)  # (pytorch#157921)
        kind = notes.unread_kind(raw)
        if kind is None and self._warned == lineno - 1 and raw[:1] in (b" ", b"\t"):
            kind = "torch-warning"  # the warning's code line, indented under it
        if kind is not None:
            # torch's own text with nothing to read: torch's, but no evidence of a log
            self.stats.recognized += 1
            self.stats.blank += 1
            self.stats.seen[kind] = self.stats.seen.get(kind, 0) + 1
            self._warned = lineno if kind == "torch-warning" and raw[:1] not in (b" ", b"\t") else -1
            return _NO_EVENTS
        self.stats.unrecognized += 1
        self._sample(lineno, raw)
        self._unread = (raw, lineno)
        return _NO_EVENTS

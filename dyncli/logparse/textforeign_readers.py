"""The named readers of a line without torch's prefix, for ``textforeign.ForeignLines``
(whose ``_read_foreign`` gives a line to the first of them that takes it): explain()'s and
export's blocks, a data-dependent error's parts, torch's own output (autotuning tables,
notes, CUDA-graph messages), a record's unprefixed rest, a guard self-check, a line that
claims the one above it, a message begun without a prefix, and the program's own lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import textautotune as autotune
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse import textdde as dde
from dyncli.logparse import textframes as frames
from dyncli.logparse import textnotes as notes
from dyncli.logparse import textorphans as orphans
from dyncli.logparse import textrecompiles as recompiles
from dyncli.logparse import textversion
from dyncli.logparse import textviolations as violations
from dyncli.logparse.textforeign_messages import after_bar, bare_gb_type, said_without_prefix
from dyncli.logparse.textkinds import (
    COLLECT,
    FIRST,
    MAX_RECORD_LINES,
    TORCH_HEADS,
    TORCH_NOISE,
)
from dyncli.logparse.textpaste import COMFYUI_HEADS, rejoined_location

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


_CUDAGRAPH = (b"cudagraph", b"cuda_graph_id")


def _said(raw: bytes, marks: tuple[bytes, ...], code_at: int | None) -> bool:
    """Whether one of torch's ``marks`` is in ``raw``, not where prose quotes it: before the
    line's first inline code span (``code_at``: textpaste.prose_code)."""
    # (loops, not any() over a generator: asked of every line of a program's output)
    if code_at is None:
        for m in marks:  # noqa: SIM110 (faster than any() over a generator)
            if m in raw:
                return True
        return False
    for m in marks:  # noqa: SIM110
        if 0 <= raw.find(m) < code_at:
            return True
    return False


# a wrapper's words before torch's gb type: its last ": ", ComfyUI's "!!! " and ":** "
_WRAPPED_GB_RE = re.compile(rb"(?:: |!!! |:\*\* )(?P<gb>[^:!]{1,300})$")
# ComfyUI's heads (textpaste.COMFYUI_HEADS) and its report's line naming the exception's class
_COMFY_CONSOLE, _COMFY_MESSAGE = (h.encode() for h in COMFYUI_HEADS)
_REPORT_TYPE = b"- **Exception Type:** "
_UNSUPPORTED_TYPES = (b"torch._dynamo.exc.Unsupported", b"Unsupported")
_SELF_CHECK = frames.SELF_CHECK.encode()
_SELF_CHECK_OLD = frames.SELF_CHECK_OLD.encode()
_SELF_CHECK_REASON = b"Guard fail reason: "
_EXPLANATION = b"  Explanation: "
_TRIGGERED = b"triggered by the following guard failure"
_GUARD_WORDS = (b"eval", b"runtime_assert")  # guard records whose location a paste may wrap


class ForeignReaders:
    """The readers of a line without a prefix and the state they keep between lines (a base
    of ForeignLines: each reader returns its events, or None for a line it does not take)."""

    stats: ev.ParseStats
    _stray: bytes | None
    _versions: textversion.VersionLines
    # torch's message that a paste (or torch itself: a warning, an exception) put without a
    # prefix, whose body follows on indented lines: a CUDA-graph skip's "Found from :" stack
    # (comfyui#6866), a graph break's "Unsupported: …" block with its Explanation and Hints
    # (pytorch#174138), a RecompileError's guard failures; collected until a line that is none
    _pending: list[str] | None = None
    _pending_at = 0
    _summary_at = -1  # the last line that was pytest's short test summary of an exception
    _pending_summary = False  # the pending message began at such a line
    # (lines, common) -> events; a partial of one with what the first line decided (a
    # CUDA-graph error's raised)
    _pending_read: Any = None
    _pending_blank = 0
    _pending_margins = 0  # lines at the margin an old graph-break record took after its head
    _pending_quoted = False  # its first line was behind a markdown quote: so are the rest
    _pending_rank: int | None = None
    # the last line read as nobody's (and its number): a wrapper's head of torch's message
    # when torch's "  Explanation:" follows it
    _unread: tuple[bytes, int] | None = None
    _report_type: tuple[bytes, int] | None = None  # ComfyUI's report's "Exception Type" line read
    _line_rank: int | None = None  # the rank torchrun's tag gave the line being read
    _suggesting = False  # inside torch's "Suggested fixes:" block
    _dde_under = ""  # the heading of torch's data-dependent message just read (textdde.HEADS)
    _dde_seen = dde.FAR  # the line of the last data-dependent fact read (a stack may follow)
    # the rank, pid and compile id of the error that fact was of, where its record had a prefix
    # (a bare one's: none); a stack under it is that error's
    _dde_owner: dict[str, Any] | None = None
    _dde_frame: ev.UserLoc | None = None  # the user frame of dynamo's stack just read
    _tuning = False  # inside a table of max-autotune's tuning output (textautotune)
    _warned = -1  # the line number of the last warning torch raised (textnotes.unread_kind)
    _code_at: int | None = None  # where the line being read begins to quote in prose's code

    def _dde_owned(self, common: dict[str, Any], lineno: int) -> None:
        """A fact of a data-dependent error whose record has a prefix (``common``: its fields)
        was read at ``lineno``: dynamo's ``from user code:`` stack that follows it without a
        prefix, before anything else that could own one, is that error's (round 23)."""
        self._dde_seen = lineno
        self._dde_owner = {k: common.get(k) for k in ("rank", "pid", "compile_id")}

    def _pend(self, read: Any, text: str, lineno: int) -> Iterable[ev.Event]:
        self.stats.recognized += 1
        self.stats.records += 1
        self._pending, self._pending_at, self._pending_read, self._pending_blank = [text], lineno, read, 0
        self._pending_summary = lineno == self._summary_at
        self._pending_quoted = False
        self._pending_margins = 0
        self._pending_rank = self._line_rank
        return _NO_EVENTS

    def _take_unread(self) -> int:
        """The last line read as nobody's is torch's after all: its count undone; its number."""
        assert self._unread is not None
        at = self._unread[1]
        self._unread = None
        self.stats.unrecognized -= 1
        if self.stats.samples and self.stats.samples[-1][0] == at:
            self.stats.samples.pop()
        return at

    def _claim_unread(self, read: Any, text: str, raw: bytes) -> Iterable[ev.Event]:
        """The last line read as nobody's, now known by ``raw`` under it as the first line
        (``text``) of torch's message: its count undone, the message pending with ``raw``."""
        at = self._take_unread()
        self._pend(read, text, at)
        self.stats.recognized += 1
        assert self._pending is not None
        self._pending.append(raw.decode("utf-8", "replace").rstrip())
        return _NO_EVENTS

    def _sample(self, lineno: int, text: bytes) -> None:  # (TextLogParser's)
        raise NotImplementedError

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
        if not raw.strip() or _said(raw, TORCH_NOISE, None):
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
            text = after_bar(raw).decode("utf-8", "replace").strip()
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
        if rec is not None and rec.mode == COLLECT and rec.lines and b"You marked" in rec.lines[-1] \
                and (mark := violations.rejoined_mark(rec.lines[-1].decode("utf-8", "replace"),
                                                      raw.decode("utf-8", "replace"))) is not None:
            # a guard error's "You marked" item that the paste wrapped (torch-spyre#3005)
            self.stats.recognized += 1
            rec.lines[-1] = mark.encode()
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
            head = breaks.RAISED_UNSUPPORTED if self._comfy_raised(above, lineno - 1) \
                else "Unsupported: "
            return self._claim_unread(breaks.unsupported_break, head + gb, raw)
        if raw.startswith(_EXPLANATION) and (bare := bare_gb_type(above)) is not None:
            # the message as print(e) shows it: the line above is torch's gb type itself
            gb = bare.decode("utf-8", "replace").strip()
            return self._claim_unread(breaks.unsupported_break, "Unsupported: " + gb, raw)
        if raw.lstrip().startswith(_SELF_CHECK_REASON) and _SELF_CHECK in above:
            # torch's guard self-check with its reason on a line of its own under the sentence
            # (pytorch#172088, a Jan 2026 nightly's, both lines indented): one message
            joined = " ".join(x.decode("utf-8", "replace").strip() for x in (above, raw))
            if found := frames.guard_self_check(joined, {"line": lineno - 1,
                                                         "rank": self._line_rank}):
                self._take_unread()
                self.stats.recognized += 2
                self.stats.records += 1
                return found
        if raw.lstrip().startswith(_TRIGGERED) \
                and recompiles.RECOMPILING_RE.match(head := above.decode("utf-8", "replace")
                                                 .strip()[:4000]) is not None:
            # a recompile without a prefix, known by torch's failure line under its first
            # line: torch's docs render it so (programming_model.recompilation), and a notebook
            # whose handler drops the prefix
            return self._claim_unread(recompiles.recompiling, head, raw)
        return None

    def _comfy_raised(self, head: bytes, at: int) -> bool:
        """Whether ComfyUI's words ``head`` (line ``at``) say the exception of torch's message
        ended the node: its console's "!!! Exception during processing !!!" (execution.py
        logs an exception the node raised, KJNodes#533), or its report's "Exception Message"
        under an "Exception Type" of torch's Unsupported (ComfyUI#10114); another class
        quoting torch's words proves no raised break."""
        if head.startswith(_COMFY_CONSOLE):
            return True
        if not head.startswith(_COMFY_MESSAGE) or self._report_type is None \
                or self._report_type[1] != at - 1:
            return False
        return self._report_type[0][len(_REPORT_TYPE):].strip() in _UNSUPPORTED_TYPES

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
        if (version := self._versions.read(raw, lineno)) is not None:
            # the torch version the paste states (collect_env, a package list, the Python
            # prompt's answer, pip show), or the line that asks it: the paste's text, no
            # evidence of a torch log
            self.stats.recognized += 1
            self.stats.blank += 1
            return version
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
        if raw.startswith(_REPORT_TYPE):
            self._report_type = (raw, lineno)
        return _NO_EVENTS

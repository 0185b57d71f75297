"""Lines the glog prefix does not start, for ``dyncli.logparse.textlog.TextLogParser``.

In a clean log they are the program's own output and blank lines. In a paste (issue 33) they
may hold torch's records behind leading text or with a prefix cut short (``_pasted``, through
``textpaste.normalize``), or be the rest of a record whose first line alone has the prefix
(torch 2.0 and torchdynamo: ``textorphans.continues``), or torch's own text without a prefix
(a ConstraintViolationError's items). Only such lines come here: a clean log's records never do.

``ForeignLines`` takes the stamps a tool put on a line off it (a container's, a serving
stack's, torchrun's rank tag, pytest's), gives it to the first of its readers that takes it
(``textforeign_readers``), and collects the lines under a message begun without a prefix
(``textforeign_messages``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse import textdde as dde
from dyncli.logparse import textold as old
from dyncli.logparse import textorphans as orphans
from dyncli.logparse import textprofiler as profiler
from dyncli.logparse.safe import RECORD_ERRORS
from dyncli.logparse.textcrash import CrashReader, quoted_exception
from dyncli.logparse.textdrawn import BOX_STARTS, RichBox, qualified
from dyncli.logparse.textforeign_messages import CONTINUES
from dyncli.logparse.textforeign_readers import _NO_EVENTS, ForeignReaders
from dyncli.logparse.textkinds import MAX_RECORD_LINES, TRACE_KIND
from dyncli.logparse.textpaste import (
    is_fence,
    is_table_delimiter,
    is_table_row,
    leaves_span_open,
    normalize,
    prose_code,
    rejoined_message,
    wrapper_of,
)

# torchrun's tag on a line of a rank's output: its role and local rank ("[default0]:", the
# default role; "[rank0]:" with --role rank; two where a launcher's own is in front), a
# paste's indent before it (xDiT#705: "  [rank0]: RuntimeError: …"); "[rank3]" without its
# colon before a blank, as a paste that lost the colon on torch's glog lines ("[rank3]V0304 …",
# glog.GLOG_RE) has its traceback ("[rank3] Traceback …", "[rank3]   File …": pytorch#148439);
# only torch's own "rank" tag so: a program's "[step3] loss …" keeps its text
_RANK_TAG_RE = re.compile(rb"^[ \t]{0,8}(?:\[[A-Za-z_]{1,40}\d{1,6}\]:)?"
                          rb"(?:\[[A-Za-z_]{1,40}(?P<rank>\d{1,6})\]:"
                          rb"|\[rank(?P<bare>\d{1,6})\](?=[ \t]|$))")


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
# on every line of a job's console (MONAI tutorials#1988: a notebook's IPython traceback);
# docker's own, `docker logs --timestamps` (RFC 3339 with nanoseconds, no brackets:
# "2024-05-29T11:23:16.027957173Z ", sonar#472: a serving engine's ranks' traceback); each behind
# a paste's own indent (vllm#25060: a block pasted one space in, " (EngineCore_DP0 pid=32) ERROR
# 09-17 01:05:51 [core.py:720] …" on every line, "not a torch log" before round 29)
# (vLLM 0.10's worker names its parallel rank after its name: "(VllmWorker TP0 pid=1518511) ",
# vllm#23714)
# vLLM's process tag alone, one that names a pid, before what the process wrote outside vLLM's
# logger (vllm#23970: the engine's traceback as Python printed it, "(EngineCore_0 pid=34269)
# File …", "not a torch log" before round 34)
_PROCESS_TAG = (rb"\((?:[A-Za-z_]\w{0,40}(?: [A-Z]{1,4}\d{1,6}){0,3}|[a-z_]{1,20}=[\w.:-]{1,64})"
                rb"(?:,? [a-z_]{1,20}=[\w.:-]{1,64}){0,4}\) ")
_WRAPPER_TAG_RE = re.compile(
    rb"^[ \t]{0,8}(?:(?:" + _PROCESS_TAG + rb"){0,2}(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    rb"(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? \[?[^\]\s\[]{1,200}:\d{1,9}\](?: |$)"
    rb"|(?=\([^)\n]{0,160}\bpid=\d)" + _PROCESS_TAG +
    rb"|\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\](?: |$)"
    rb"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z(?: |$))")
# docker compose's "service  | " (its name padded to the longest service's): the same form as a
# markdown table's row without its outer pipes ("setting   | result |"), taken off only outside
# a table (ForeignLines._in_table)
_COMPOSE_TAG_RE = re.compile(rb"^[A-Za-z0-9][\w.-]{0,63} {1,24}\| ")
# nix's build log (nix-build, nix build -L, nix log): the derivation's name and "> " before each
# line of the builder's output ("diffusers> E   RuntimeError: …", diffusers#7441: a package's
# tests run by nixpkgs' builder), and "diffusers> " alone for a blank line. A shell's or a
# tool's prompt has the same form ("mysql> "), so the tag is taken off a line only where the
# line before it had the same one: a build log has it on every line
_NIX_TAG_RE = re.compile(rb"^(?P<name>[A-Za-z0-9][\w.+-]{0,63})>(?: |$)")
# Ray's log deduplication after a line that other workers printed too: " [repeated 23x across
# cluster]" (vllm-ascend#4948)
_RAY_REPEATED_RE = re.compile(rb" \[repeated \d{1,9}x across cluster\]\s{0,4}$")


def safe_rank(text: bytes) -> int | None:
    """A rank tag's number (None for a damaged one)."""
    return int(text) if len(text) <= 6 else None


# pytest's short test summary: "FAILED tests/x.py::test[id] - torch._dynamo.exc.Unsupported: …"
# (vLLM#6917): the exception's line after the test's id
_PYTEST_SUMMARY_RE = re.compile(rb"^(?:FAILED|ERROR) \S[^\r\n]{0,2000}? - (?=torch\.)")


class ForeignLines(ForeignReaders):
    """The parser's handling of lines without a torch prefix (a mixin of TextLogParser)."""

    _open: dict[tuple[Any, ...], Any]
    _crashes: CrashReader
    _box: RichBox
    _tag_blank = True  # the tags seen have a blank after them (not torch's own form)
    _pytest_indent: int | None = None  # the indent of pytest's "E   …" block being read
    # the reasons of the raised breaks read outside pytest's summary, not yet matched by one of
    # its lines (the last 64)
    _raised_reasons: tuple[str, ...] = ()
    _wrapper: re.Pattern[bytes] | None = None  # a tool's stamp seen before torch's lines
    _nix_tag = b""  # the name of nix's build-log tag on the line before (``_NIX_TAG_RE``)
    # markdown (textpaste.prose_code): inside a fence; the last line that was a fence's marks
    # (``_fence_marks``); the last line that left prose's inline code span open
    _fence = False
    _marks_at = -1
    _span_to = -2
    # inside a markdown table (a delimiter row seen, outside a fence): its rows are prose, and
    # what docker compose's stamp would match in them is a cell
    _table = False

    def _pending_done(self) -> list[ev.Event]:
        """The events of the pending message with the lines collected under it."""
        lines, self._pending = self._pending, None
        if not lines:
            return []
        try:
            out = list(self._pending_read(lines, {"line": self._pending_at,
                                                  "rank": self._pending_rank}))
        except RECORD_ERRORS:
            if self._pending_read is breaks.cut_break:
                # (an Explanation line without torch's other parts: nobody's after all)
                self.stats.recognized -= len(lines)
                self.stats.records -= 1
                self.stats.unrecognized += len(lines)
                self._sample(self._pending_at, lines[0].encode())
            return []
        if self._pending_summary:
            # pytest's summary repeats the exception its report above showed whole ("FAILED
            # t.py::test - torch._dynamo.exc.Unsupported: Data-depend...", its message cut at
            # the terminal's width): the same break, not another; each report's break is
            # repeated once, and a summary line with no report above it is a break of its own
            # (six tests failing on one reason, pytorch#93449's summary alone, are six)
            return [e for e in out if not (isinstance(e, ev.GraphBreak) and e.raised
                                           and self._repeated(e.reason))]
        raised = tuple(e.reason for e in out if isinstance(e, ev.GraphBreak) and e.raised)
        if raised:
            self._raised_reasons = (self._raised_reasons + raised)[-64:]
        return out

    def _repeated(self, reason: str) -> bool:
        """Whether a summary's (cut) reason repeats a raised break read above it, which it then
        takes (it is repeated once)."""
        cut = reason.removesuffix("...")
        for i, r in enumerate(self._raised_reasons):
            if r.startswith(cut):
                self._raised_reasons = self._raised_reasons[:i] + self._raised_reasons[i + 1:]
                return True
        return False

    def _fence_marks(self, raw: bytes, lineno: int) -> bool:
        """Whether ``raw`` is a markdown fence's marks (``textpaste.is_fence``), the fence
        opened or closed by it: decided here once for both readers of the line (``_pasted``,
        then ``_foreign``: ``_marks_at``), on the line as pasted. A user's fence stands at the
        line's start (behind a quote's marks); marks behind a tool's stamp (torchrun's rank
        tag, Ray's process tag) are the program's output, as an LLM server's printed completion
        is, and open nothing."""
        if not is_fence(raw):
            return False
        self._fence, self._marks_at, self._table = not self._fence, lineno, False
        return True

    def _in_table(self, raw: bytes) -> bool:
        """Whether ``raw``, outside a fence, is a markdown table's row or its delimiter row
        (``is_table_delimiter``); a blank line or one without a pipe ends the table (GFM's
        ends at a blank line only, but a pasted table's rows have their pipes, and a
        traceback after a program's printed table must stay the traceback)."""
        if is_table_delimiter(raw):
            self._table = True
        elif self._table and b"|" not in raw:
            self._table = False
        return self._table

    def _pasted(self, raw: bytes, lineno: int) -> bytes | None:
        """The glog line a pasted line stands for (``textpaste.normalize``), counted by what
        was done to find it; None for a line with no torch record in it, or one that quotes
        it in prose (inside an inline code span opened above, in a table's cell)."""
        if not self._fence_marks(raw, lineno) and not self._fence and (
                self._in_table(raw) or is_table_row(raw)
                or (self._span_to == lineno - 1 and prose_code(raw, True) == 0)):
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
        raw = self._nix_untagged(raw)
        for _ in range(3):  # a serving stack's or a container's stamps on the line (nested)
            if (wrapped := _WRAPPER_TAG_RE.match(raw)) is None and (
                    self._table or (wrapped := _COMPOSE_TAG_RE.match(raw)) is None):
                break
            raw = raw[wrapped.end():]
            if raw.rstrip()[-8:] == b"cluster]" and (ray := _RAY_REPEATED_RE.search(raw)) is not None:
                raw = raw[:ray.start()]
        if raw[:1] in (b"F", b"E") and (summary := _PYTEST_SUMMARY_RE.match(raw)) is not None:
            raw = raw[summary.end():]
            self._summary_at = lineno
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
        self._code_at = (0 if self._table else prose_code(raw, carried)) if prose else None
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
        taken = old.old_break_continues(self._pending_margins, self._pending[-1], text,
                                        self._pending[0]) \
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

    def _nix_untagged(self, raw: bytes) -> bytes:
        """``raw`` without nix's build-log tag (``_NIX_TAG_RE``), where the line before had the
        same one; the tag is noted for the next line."""
        tag = _NIX_TAG_RE.match(raw) if b">" in raw[:65] else None
        name = tag["name"] if tag is not None else b""
        same, self._nix_tag = name and name == self._nix_tag, name
        return raw[tag.end():] if same and tag is not None else raw

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
        self._line_rank = safe_rank(tag["rank"] or tag["bare"])
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
        heads, blanks = CONTINUES[read.func if isinstance(read, partial) else read]
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

"""torch's CompileProfiler report: ``torch._dynamo.utils.CompileProfiler().report()``.

The backend that counts what dynamo compiles (torch 2.0 until pytorch#135133 retired it in
September 2024) prints, when asked, a "Torchdynamo Profiler Report" (_dynamo/utils.py, read in
2.1.0: 1206-1270): a table of graph-break reasons with their counts (``counters["graph_break"]``,
each break's Unsupported message) and a table of the
functions recompiled because their guards failed, with the failure of each recompile
(``guard_failures[code]``: the first failed guard of each cache miss; format_func_info names a
function ``'forward' (model.py:11)``, its file without a directory), both in tabulate's
``simple`` format (or, where the tabulate package is not installed, torch's own fallback:
each row's cells joined by ", ", a multi-line cell's lines as they are), then torch's "Set
torch._dynamo.config.cache_size_limit to N" where there were recompiles. torchdynamo's 2022
report has the same tables under other prose.

Users paste it whole (pytorch#110803, #113443, pytorch-geometric#8418). Read: one graph break
per counted break (its reason, no place: the report has none), one recompile per counted
recompile of a function (its reason where the paste has it; a cell cut short keeps its count).
The rest is torch's prose. Pure: lines in, events out.
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.safe import small_int

HEADS = ("Torchdynamo Profiler Report", "Torchdynamo Profiler Report:")
# the lines that end the report: no recompiles, or torch's limit line after the table
# ("No recompilation detected.", 2.1; torchdynamo's "No cache-limited recompilations detected.")
_ENDS_RE = re.compile(r"^(?:No recompilation detected|No cache-limited recompilations detected)\.?$"
                      r"|^Set [\w.]{1,80}\.cache_size_limit to \d{1,9} to avoid being cache limited\.?$")
_BREAKS_HEADER_RE = re.compile(r"^Graph Break Reason +Count$")
_RECOMPILES_HEADER_RE = re.compile(r"^Function +Recompiles +Recompile Reasons$")
# torch's fallback without tabulate (utils.tabulate, 2.1-2.4): the headers, then each row, joined
_BREAKS_JOINED = "Graph Break Reason, Count"
_RECOMPILES_JOINED = "Function, Recompiles, Recompile Reasons"
_COUNTED_RE = re.compile(r"^(?P<reason>.{0,4000}), (?P<n>\d{1,9})$")  # a reason's last line
_FN_ROW_RE = re.compile(r"^(?P<fn>'[^']{1,400}' \([^()]{1,1024}:\d{1,9}\)), (?P<n>\d{1,9}), "
                        r"(?P<reason>.{0,4000})$")
_RULE_RE = re.compile(r"-+(?: +-+){1,2}")  # tabulate's rule under a header: a run per column
_FUNC_RE = re.compile(r"'(?P<fn>[^']{1,400})' \((?P<file>[^()]{1,1024}):(?P<line>\d{1,9})\)")
# counts are a report's numbers: a hostile count is capped (the counts stay lower bounds)
_MAX_EACH = 1024
_MAX_EVENTS = 8192


def is_head(line: bytes) -> bool:
    """Whether ``line`` is the report's first line."""
    return line.strip().decode("utf-8", "replace") in HEADS


# what a blank line in the report comes before (2.1-2.4's layout, utils.py 2.1.0 1243-1270:
# each of the two parts' title after the blank under the one before, each part's table or its
# "No …" line after the blank under its prose, the cache_size_limit line after the blank under
# the recompile table; torchdynamo's 2022 report has no blank line but the one under its head)
_AFTER_BLANK_RE = re.compile(r"^(?:Graph Breaks|Recompilation|No graph breaks detected\.?"
                             r"|Graph Break Reason(?: +|, )Count|Function(?: +|, )Recompiles.{0,80}"
                             r"|The following conditions caused torchdynamo .{0,200}"
                             r"|These subgraphs were recompiled .{0,400})$")


def continues(last: str, raw: bytes) -> bool:
    """Whether ``raw``, a non-blank line after the report's line ``last``, is still the report's:
    every line is, up to the line that ends it (no recompiles; torch's cache_size_limit line),
    except that after a blank line only what torch writes after one continues it (a report
    the paste cut before its end ends there, not at the next two blank lines)."""
    if not raw.strip() or _ENDS_RE.match(last.strip()) is not None:
        return False
    if last.strip():
        return True
    text = raw.decode("utf-8", "replace").strip()
    return _AFTER_BLANK_RE.match(text) is not None or _ENDS_RE.match(text) is not None


def _columns(rule: str) -> list[tuple[int, int]]:
    """The spans of the columns tabulate's rule line marks."""
    return [m.span() for m in re.finditer(r"-+", rule)]


def _cells(row: str, spans: list[tuple[int, int]]) -> list[str]:
    """A row's cells by the rule's columns, the last to the row's end (a cut cell kept)."""
    starts = [a for a, _ in spans]
    ends = [*starts[1:], len(row)]
    return [row[a:max(a, b)].strip() for a, b in zip(starts, ends, strict=True)]


def _table(lines: list[str], at: int) -> tuple[list[tuple[int, list[str]]], int]:
    """The rows (line index, cells) of the table whose header is at ``at``, and the index after
    it; none where the rule line under the header is not there."""
    if at + 1 >= len(lines) or _RULE_RE.fullmatch(lines[at + 1].rstrip()) is None:
        return [], at + 1
    spans = _columns(lines[at + 1].rstrip())
    rows, i = [], at + 2
    while i < len(lines) and lines[i].strip():
        rows.append((i, _cells(lines[i].rstrip(), spans)))
        i += 1
    return rows, i


def _joined(lines: list[str], at: int, breaks: bool) -> tuple[list[tuple[int, list[str]]], int]:
    """The rows of a table in torch's fallback form whose header is at ``at``, as ``_table``
    gives them, and the index after it. A break's reason ends at the line with its count (a
    reason of several lines has it on its last); a function's row names it, its count and its
    first reason, each line under it one more reason."""
    rows: list[tuple[int, list[str]]] = []
    i, begun = at + 1, None  # (the first line of a break's reason not yet counted)
    while i < len(lines) and lines[i].strip():
        text = lines[i].rstrip()
        if breaks:
            begun = i if begun is None else begun
            if (m := _COUNTED_RE.match(text)) is not None:
                reason = " ".join(t.strip() for t in (*lines[begun:i], m["reason"]))
                rows.append((begun, [reason, m["n"]]))
                begun = None
        elif (m := _FN_ROW_RE.match(text)) is not None:
            rows.append((i, [m["fn"], m["n"], m["reason"].strip()]))
        else:
            rows.append((i, ["", "", text.strip()]))
        i += 1
    return rows, i


def report(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The graph breaks and recompiles of a CompileProfiler report (``lines``: from its head)."""
    out: list[ev.Event] = []
    i = 1
    while i < len(lines):
        head = lines[i].strip()
        if _BREAKS_HEADER_RE.match(head):
            rows, i = _table(lines, i)
            out += _breaks(rows, common)
        elif _RECOMPILES_HEADER_RE.match(head):
            rows, i = _table(lines, i)
            out += _recompiles(rows, common)
        elif head in (_BREAKS_JOINED, _RECOMPILES_JOINED):
            rows, i = _joined(lines, i, head == _BREAKS_JOINED)
            out += _breaks(rows, common) if head == _BREAKS_JOINED else _recompiles(rows, common)
        else:
            i += 1
    return out[:_MAX_EVENTS]


def _breaks(rows: list[tuple[int, list[str]]], common: dict[str, Any]) -> list[ev.Event]:
    """One graph break per count of each reason (a reason tabulate wrapped onto rows whose count
    cell is empty is one reason)."""
    found: list[tuple[str, int, int]] = []  # (reason, count, its row)
    for at, cells in rows:
        reason, count = cells[0], small_int(cells[-1])
        if count is None and found and not cells[-1]:
            found[-1] = (f"{found[-1][0]} {reason}".strip(), *found[-1][1:])
        elif count is not None and reason:
            found.append((reason, count, at))
    return [ev.GraphBreak(file="", user_line=0, reason=reason[:2000], **_at(common, at))
            for reason, count, at in found for _ in range(min(count, _MAX_EACH))]


def _at(common: dict[str, Any], at: int) -> dict[str, Any]:
    """``common`` with the line of the report's line ``at`` (the report's head is at 0)."""
    return common | {"line": common["line"] + at}


def _recompiles(rows: list[tuple[int, list[str]]], common: dict[str, Any]) -> list[ev.Event]:
    """One recompile per count of each function, the k-th with the k-th reason under it (the
    first failed guard of that cache miss), where the paste has it."""
    out: list[ev.Event] = []
    fn: re.Match[str] | None = None
    count, row = 0, 0
    reasons: list[tuple[str, int]] = []  # (reason, its row)

    def done() -> None:
        # (each recompile at its reason's row; those whose reasons the paste cut at the
        # function's row, so that they count as compiles but add no reason)
        if fn is None:
            return
        for k in range(min(max(count, len(reasons)), _MAX_EACH)):
            reason, at = reasons[k] if k < len(reasons) else ("", row)
            failures = (ev.GuardFailure(failed="", reason=reason[:4000]),) if reason else ()
            out.append(ev.Recompile(function=fn["fn"], file=fn["file"],
                                    first_line=int(fn["line"]), failures=failures,
                                    **_at(common, at)))

    for at, cells in rows:
        if len(cells) != 3:
            continue
        if cells[0]:  # a function's row: its name, its count, its first reason
            done()
            fn = _FUNC_RE.fullmatch(cells[0])
            count, row, reasons = small_int(cells[1]) or 0, at, []
        if cells[2] and fn is not None:
            reasons.append((cells[2], at))
    done()
    return out

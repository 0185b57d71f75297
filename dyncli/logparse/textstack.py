"""Python's stack frames in torch's text messages: ``File "f", line n, in fn`` and the code
line under it, as recompiles, graph breaks, constraint violations, data-dependent errors and
tracebacks print them. Shared by the text log's readers and the trace's mapper
(``dyncli.logparse.trace_map``), so both give one answer.
"""

from __future__ import annotations

import re

from dyncli.logparse import events as ev

FILE_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d{1,9}), in (?P<fn>.+)$')


def user_stack(lines: list[str]) -> tuple[ev.UserLoc, ...]:
    """``File "f", line n, in fn`` + code lines → UserLocs (code = the line after)."""
    out: list[ev.UserLoc] = []
    pending: re.Match[str] | None = None
    for text in lines:
        fm = FILE_RE.match(text)
        if fm is not None:
            if pending is not None:
                out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip()))
            pending = fm
        elif pending is not None and text.strip() and not set(text.strip()) <= {"^", "~"}:
            out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip(),
                                  text.strip()))
            pending = None
    if pending is not None:
        out.append(ev.UserLoc(pending["file"], int(pending["line"]), pending["fn"].strip()))
    return tuple(out)

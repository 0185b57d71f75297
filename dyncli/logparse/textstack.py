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


# nn.Module's call machinery (torch/nn/modules/module.py: _wrapped_call_impl, _call_impl,
# 2.0-2.15), which dynamo's "from user code:" stack shows between a call of a module and its
# forward
_MODULE_CALLS = frozenset({"_call_impl", "_wrapped_call_impl"})
_MODULE_FILE_RE = re.compile(r"(?:^|/)nn/modules/module\.py$")


def break_site(stack: tuple[ev.UserLoc, ...]) -> ev.UserLoc:
    """Where a graph break is, from dynamo's user stack (the innermost frame last): its
    innermost frame, or, where the stack ends in nn.Module's call machinery, the call of the
    module above it (sam2#603: ``self.position_encoding(x_out)`` at image_encoder.py:132,
    whose forward dynamo would not inline; the break is not in torch's module.py)."""
    i = len(stack)
    while i > 1 and stack[i - 1].function in _MODULE_CALLS \
            and _MODULE_FILE_RE.search(stack[i - 1].file.replace("\\", "/")) is not None:
        i -= 1
    return stack[i - 1] if stack else ev.UserLoc("", 0, "", "")

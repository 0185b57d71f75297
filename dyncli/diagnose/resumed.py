"""Graph breaks a log proves by the name torch gives the code after them.

At a graph break dynamo compiles the graph traced so far and makes a new function of the rest
of the frame, which Python then calls and dynamo compiles as a frame of its own
(``resume_execution.ContinueExecutionCache.generate``, read in the wheels of 2.1, 2.2, 2.3,
2.11 and 2.15). Its name carries the function that broke:

- torch 2.3 and later: ``torch_dynamo_resume_in_{function}_at_{line}``, ``line`` the line
  dynamo was tracing when it broke (``InstructionTranslator.create_call_resume_at`` passes
  ``self.lineno``); a break in a resume function nests the name
  (``torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_5_at_7``: breaks at lines 5 and 7);
- torch 2.2: ``resume_in_{function}``, 2.0 and 2.1: ``<resume in {function}>``; the line only
  as the function's first line (``co_firstlineno = lineno``), which a limit warning or a
  ``start tracing`` line prints beside the name.

So a frame, a recompile, a recompile-limit warning or a frame torch would not convert, named
after a resume function, proves a graph break where the name says, whether or not the log
holds that break's own record (``graph_breaks`` is off by default: comfy-aimdo#13,
pytorch#164924, ComfyUI-NAG#33). Such a break is reported with its place and without a reason
(the log does not give one), once per place, unless a graph-break record already places one
there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from dyncli.diagnose.model import GraphBreakReport, call_site
from dyncli.diagnose.reasons import broke_at

# (rank, code name, file, first line, line of the evidence)
Named = tuple[int | None, str, str, int | None, int]


def proven_breaks(named: Iterable[Named],
                  breaks: Collection[GraphBreakReport]) -> list[GraphBreakReport]:
    """The graph breaks the resume functions in ``named`` prove that ``breaks`` (the log's own
    graph-break records) do not already place: one report per (rank, function, line), with
    the file where any evidence names it and the earliest line of the log that proves it."""
    # where the log's records place breaks: the break's own line, and the lines of the
    # frames that called it (a break inside an inlined helper resumes its caller at the call;
    # inside an inlined autograd.Function, the user's frame under torch's autograd_function.py)
    placed = {(b.rank, b.user_line, b.file) for b in breaks if b.file}
    placed |= {(b.rank, where[1], where[0]) for b in breaks
               for site in (*b.call_sites, *b.user_callers)
               if (where := call_site(site)) is not None}
    out: dict[tuple[int | None, str, int], GraphBreakReport] = {}
    # evidence with a file first, then the earliest
    for rank, name, file, first, line in sorted(named, key=lambda n: (not n[2], n[4] <= 0, n[4])):
        for function, at in broke_at(name, first):
            if any(r == rank and u == at and same_file(f, file) for r, u, f in placed):
                continue
            key = (rank, function, at)
            if key not in out:
                out[key] = GraphBreakReport(
                    rank=rank, file=file, user_line=at, reason="", count=1,
                    line=max(line, 0), function=function, resumed_in=name)
    return list(out.values())


def same_file(a: str, b: str) -> bool:
    """Whether two of torch's spellings of a file may be one file: the same path, or one a
    shortened tail of the other (guard comments cut the directories), or one not known."""
    if not a or not b or a == b:
        return True
    a, b = a.replace("\\", "/"), b.replace("\\", "/")
    return a.endswith("/" + b) or b.endswith("/" + a)

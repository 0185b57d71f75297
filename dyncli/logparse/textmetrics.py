"""torch's ``TorchDynamo compilation metrics:`` table: the run's compile seconds, by phase.

torch logs it at exit under ``TORCH_LOGS=dynamo`` (``dump_compile_times``, an ``atexit`` hook in
``torch/_dynamo/utils.py``, 2.1 to 2.15; 2.0.1 has no hook): one row per function torch times
(``dynamo_timed``), its seconds summed over the run's compiles. Rows nest: ``compile_inner``
(the whole frame compile) holds ``OutputGraph.call_user_compiler`` (the backend), which holds
AOTAutograd's and inductor's rows. The layout is not the release's but the machine's: torch's
own ``tabulate`` helper uses the ``tabulate`` package where it is installed::

    Function                                  Runtimes (s)
    --------------------------------------  --------------
    _compile.<locals>.compile_inner               401.729

and joins the cells with ``", "`` where it is not (``_compile.compile_inner, 2.9121``). Both are
read; a row without its number (a paste cut inside the table) marks the table ``cut``.
Linear in the line: bounded quantifiers, bounded rows.
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev

HEAD = "TorchDynamo compilation metrics:"
MAX_ROWS = 400  # torch 2.15 times ~80 functions
# a row: the function's name (no blank, no comma), then ", " or a run of blanks, then its
# seconds (non-aggregated tables, torch 2.0's explain: several, joined by ", ")
_ROW_RE = re.compile(r"(?P<name>[^\s,]{1,300})(?:,[ \t]{0,8}|[ \t]{1,300})(?P<vals>[^\t]{1,2000})?")
_NUM_RE = re.compile(r"\d{1,12}(?:\.\d{0,12})?(?:[eE][-+]?\d{1,3})?")
_SPLIT_RE = re.compile(r"[,\s]{1,50}")


def _seconds(vals: str) -> float | None:
    """The seconds of a row's cells (their sum), or None where a cell is not a number."""
    total = 0.0
    for cell in _SPLIT_RE.split(vals.strip()):
        if not _NUM_RE.fullmatch(cell):
            return None
        total += float(cell)
    return total


def compile_metrics(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The ``ev.CompileMetrics`` of a ``TorchDynamo compilation metrics:`` record (other
    records whose first word is ``TorchDynamo``: none)."""
    if not lines or not lines[0].strip().startswith(HEAD):
        return []
    rows: list[tuple[str, float]] = []
    cut = False
    for text in lines[1:MAX_ROWS + 1]:
        line = text.strip()
        if not line or line.startswith("Function") or set(line) <= {"-", " "}:
            continue  # the header, tabulate's rule
        m = _ROW_RE.fullmatch(line)
        seconds = _seconds(m["vals"]) if m is not None and m["vals"] else None
        if m is None or seconds is None:
            cut = True  # (a row the paste cut before its number)
            continue
        rows.append((m["name"], seconds))
    return [ev.CompileMetrics(rows=tuple(rows), cut=cut or len(lines) > MAX_ROWS + 1, **common)]

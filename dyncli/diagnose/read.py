"""``dyncli diagnose`` inputs → ``Diagnosis``: text logs here, TORCH_TRACE via diagnose_trace.

``diagnose_inputs`` is the one core call of the command. Text logs (files, ``.gz``, ``-``)
are streamed through ``logparse.textlog`` into the shared ``Analyzer``; several files are
read as parts of one log (e.g. one file per rank whose lines carry ``[rankN]:``, or a log
split in pieces). TORCH_TRACE directories and trace files go to
``dyncli.diagnose.read_trace.diagnose_traces``; mixing the two kinds in one call is refused
because compile ids of different runs cannot be joined.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from dyncli.diagnose.analyzer import Analyzer
from dyncli.diagnose.model import Diagnosis
from dyncli.errors import InputError, UsageError
from dyncli.inputs import open_log
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import TextLogParser


def diagnose_logs(paths: Sequence[str | Path], *, strict: bool = False) -> Diagnosis:
    """Stream every text log of ``paths`` through one Analyzer.

    ``strict``: any unrecognized or malformed line is an ``InputError`` naming the file,
    the line number and the text (used by tests to keep the parser complete).
    """
    analyzer = Analyzer()
    total = ParseStats()
    warnings: list[str] = []
    names: list[str] = []
    for path in paths:
        stats = ParseStats()
        with open_log(path) as source:
            names.append(source.name)
            parser = TextLogParser(stats)
            for event in parser.parse(source.lines()):
                analyzer.feed(event)
            warnings += source.warnings
            stats.bytes = source.bytes_read()
        _check(source.name, stats, strict)
        for f in ("lines", "recognized", "unrecognized", "malformed", "bytes"):
            setattr(total, f, getattr(total, f) + getattr(stats, f))
        for sample in stats.samples or []:
            total.sample(*sample)
    diag = analyzer.result(stats=total, inputs=names)
    return dataclasses.replace(diag, warnings=tuple(warnings)) if warnings else diag


def _check(name: str, stats: ParseStats, strict: bool) -> None:
    glog_lines = stats.recognized + stats.malformed
    if stats.lines and not glog_lines and stats.unrecognized == stats.lines:
        raise InputError(f"{name}: not a torch log: none of its {stats.lines} lines is a "
                         "torch log line",
                         hint='Capture one with: TORCH_LOGS="+dynamic,recompiles,guards,'
                              'graph_breaks" python train.py 2> run.log')
    if strict and (stats.unrecognized or stats.malformed):
        line, text = (stats.samples or [(0, "")])[0]
        what = "malformed" if stats.malformed and not stats.unrecognized else "unrecognized"
        raise InputError(f"{name}:{line}: {what} log line (--strict): {text[:120]}",
                         hint=f"{stats.unrecognized} unrecognized and {stats.malformed} "
                              "malformed lines in all; run without --strict to skip them.")


def diagnose_inputs(paths: Sequence[str | Path], *, strict: bool = False) -> Diagnosis:
    """The command's one core call: text logs or TORCH_TRACE inputs (not both at once)."""
    if not paths:
        raise UsageError("no input given", hint="dyncli diagnose run.log  (or - for stdin)")
    from dyncli.diagnose import read_trace as diagnose_trace  # the trace side (issue 5) lives there

    kinds = ["trace" if str(p) != "-" and diagnose_trace.is_trace_input(Path(p)) else "text"
             for p in paths]
    if "trace" in kinds and "text" in kinds:
        raise UsageError("cannot mix TORCH_LOGS text logs and TORCH_TRACE traces in one call",
                         hint="Run dyncli diagnose once per kind of input.")
    if kinds[0] == "trace":
        return diagnose_trace.diagnose_traces([Path(p) for p in paths], strict=strict)
    for p in paths:
        if str(p) != "-" and not Path(p).exists():
            raise InputError(f"{p}: no such file or directory")
    return diagnose_logs(paths, strict=strict)

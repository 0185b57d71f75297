"""``dyncli diagnose`` inputs → ``Diagnosis``: text logs here, TORCH_TRACE via ``read_trace``.

``diagnose_inputs`` reads what the command and ``dyncli.diagnose.run`` are given. Text logs
(files, ``.gz``, ``-``) are streamed through ``logparse.textlog`` into the shared
``Analyzer``; several files are read as parts of one log (e.g. one file per rank whose lines
carry ``[rankN]:``, or a log split in pieces). TORCH_TRACE directories and trace files, and a
trace on stdin (sniffed like a file), go to ``read_trace``. A text log given beside a trace is
read for its CUDA-graph records only (``TORCH_LOGS=cudagraphs`` of the same run: the log names
each recording's graph and size, the trace times it); one without any is refused, because
the rest of a log and a trace cannot be joined. Both end in ``dyncli.diagnose.conclude`` with
the graph-break registry the caller passes (``api.run``: the installed torch's; by default
none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from dyncli.diagnose.analyzer import Analyzer
from dyncli.diagnose.conclude import RegistryLoader, conclude, no_registry
from dyncli.diagnose.model import Diagnosis
from dyncli.errors import InputError, StrictError, UsageError
from dyncli.inputs import STDIN, SeenFiles, Source, is_stream, open_input
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import TextLogParser
from dyncli.logparse.trace_format import is_trace_line
from dyncli.words import counted


def _read_log(source: Source, analyzer: Analyzer, strict: bool) -> ParseStats:
    stats = ParseStats()
    for event in TextLogParser(stats).parse_parts(source.parts()):
        analyzer.feed(event)
    stats.bytes = source.bytes_read()
    _check(source.name, stats, strict)
    return stats


_CAPTURE = 'TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" python train.py 2> run.log'
# what a paste with nothing to read held (ParseStats.seen), the first found in this order:
# (what it is, the hint)
_SEEN = {
    "traceback-export-violation": (
        "a Python traceback of torch.export cut before its exception: torch._dynamo.export "
        "re-raises there (`raise constraint_violation_error`, eval_frame.py) the "
        "ConstraintViolationError its tracing raised, so export stopped on a dim given as "
        "dynamic (a Dim in dynamic_shapes) whose values the traced code does not all allow "
        "(it specialized or narrowed it); the paste cut which dim and which guard",
        "Paste the traceback to its end: the exception's 'Constraints violated (…)' items "
        "('Not all values of … satisfy the generated guard …', 'You marked … as dynamic but "
        "your code specialized it …') name the dim, the guard and the fix; or rerun the export "
        'with TORCH_LOGS="+dynamic", which logs the guard and the line that made it.'),
    # (deepspeed#7229, #7311: DeepCompile's "MemoryProfiling error {e}" of c10's error, with
    # torch.fx's note on the node that raised; the threads' cause: variable-length inputs)
    "symbolic-sizes": (
        "c10's error that a kernel was given a symbolic size where it takes only plain integers "
        "('SymIntArrayRef expected to contain only concrete integers', or 'Cannot call sizes() "
        "on tensor with symbolic sizes/strides'), as the program printed it, without a "
        "traceback or any record of torch's log; where torch.fx's note follows it ('While "
        "executing %node …', then 'Original traceback:'), it names the graph's node that was "
        "running and the code that node was traced from",
        "The graph was traced with dynamic shapes (sizes as symbols), and what ran it handed a "
        "symbol to a kernel that needs a number: a backend's or pass's own run of the graph on "
        "real tensors (DeepSpeed DeepCompile's profiler: deepspeed#7229, #7311), or an op "
        "without symbolic-size support (pytorch#140960 lists the causes). Keep that graph "
        "static: torch.compile(..., dynamic=False), or torch._dynamo.mark_static(x) on the "
        "input whose size varies, or give it one size (pad); and report it to the backend's "
        "owner. (Where torch 2.15's message says 'Found heap-allocated concrete SymInt', the "
        "value is a large integer, not a symbol: the op's bug.) For what torch.compile did: "
        + _CAPTURE),
    "fx-note": (
        "torch.fx's note on an error raised while a graph ran node by node ('While executing "
        "%node …', then 'Original traceback:' and the code the node was traced from), as the "
        "program printed the error, and no record of torch's log: no compile, recompile or "
        "graph break to read",
        "The error is the text above the note: whatever ran the graph node by node "
        "(torch.fx.Interpreter: a backend's or pass's own run of the graph) raised it. Paste "
        "the whole traceback to see whose error it is, or capture what torch.compile did "
        f"with: {_CAPTURE}"),
    "traceback-wrapper": (
        "a Python traceback whose only frame of torch's compiler is torch.compile's wrapper "
        "(torch/_dynamo/eval_frame.py): it does not show the compile raising",
        "Paste the traceback to its end (its deepest frames and the exception's line): the "
        "frames under the wrapper say whether torch's compiler raised or the program's code."),
    "traceback-func": (
        "a Python traceback of torch.func's transforms (vmap, grad, jacrev: torch/_functorch/"
        "vmap.py, apis.py, eager_transforms.py) with nothing of torch's compiler in it: an "
        "error of torch.func, which runs eagerly, not of torch.compile",
        "torch.func's own rules apply (vmap: no data-dependent Python control flow, no .item(); "
        "torch.where or torch.cond instead). If the program failed under torch.compile, paste "
        f"the traceback whole, or capture what torch.compile did with: {_CAPTURE}"),
    "traceback": (
        "a Python traceback with nothing of torch's compiler in it (no frame or exception of "
        "dynamo, AOTAutograd or inductor, its CUDA-graph trees and generated code included): "
        "no compile error to read",
        "If the program failed under torch.compile, paste the traceback whole, or capture "
        f"what torch.compile did with: {_CAPTURE}"),
    "torch-warning": (
        "a warning torch raised (not an error) and nothing diagnose reads",
        "A Python warning from torch's code: the program went on (a deprecation warning of "
        "torch's own code, such as torch 2.1's 'has_cuda', is harmless and gone in newer "
        f"torch). For what torch.compile did: {_CAPTURE}"),
    "trace-record": (
        "not a torch log: its torch lines are records of a TORCH_TRACE trace (torch's prefix, "
        "then a JSON object) among other text, and a trace is read from its own file, whose "
        "first line is one",
        "Pass the trace file itself, or the directory given to TORCH_TRACE "
        f"(dyncli diagnose /tmp/trace). A text log is captured with: {_CAPTURE}"),
    "perf-hint": (
        "inductor's performance hint that it did not tile a reduction over non-contiguous "
        "dims, and nothing diagnose reads",
        "A note on a kernel's speed, not on shapes or recompiles (torch 2.15 names "
        "config.triton.tile_reductions for it). For what torch.compile did: " + _CAPTURE),
}


def _check(name: str, stats: ParseStats, strict: bool) -> None:
    # blank lines are recognized but say nothing: a markdown or Python file is not a log
    if stats.lines and not stats.records and stats.torch_lines <= 0:
        seen = next((kind for kind in _SEEN if stats.seen.get(kind)), None)
        if seen is not None:  # torch's own text, or a traceback: said as what it is
            what, hint = _SEEN[seen]
            raise InputError(f"{name}: {what}", hint=hint)
        raise InputError(f"{name}: not a torch log: none of its {counted(stats.lines, 'line')} is a "
                         "torch log line", hint=f"Capture one with: {_CAPTURE}")
    if strict and (stats.unrecognized or stats.malformed):
        line, text = (stats.samples or [(0, "")])[0]
        what = "malformed" if stats.malformed and not stats.unrecognized else "unrecognized"
        raise StrictError(f"{name}:{line}: {what} log line (--strict): {text[:120]}",
                          hint=f"{stats.unrecognized} unrecognized and {stats.malformed} "
                               "malformed lines in all; run without --strict to skip them.")


def diagnose_logs(paths: Sequence[str | Path], *, strict: bool = False,
                  streams: Mapping[str, Source] | None = None,
                  registry: RegistryLoader = no_registry) -> Diagnosis:
    """Stream every text log of ``paths`` through one Analyzer.

    ``streams``: inputs already opened (stdin, pipes), by path as given; the rest are opened here.
    ``registry``: how to get torch's graph-break registry (``dyncli.diagnose.conclude``).

    ``strict``: any unrecognized or malformed line is a ``StrictError`` naming the file, the
    line number and the text (used by tests to keep the parser complete).
    """
    analyzer = Analyzer()
    total = ParseStats()
    warnings: list[str] = []
    names: list[str] = []
    seen = SeenFiles()
    for path in paths:
        opened = (streams or {}).get(str(path))
        if opened is None and (twice := seen.again(path)) is not None:
            warnings.append(twice)  # its lines again would count each record twice
            continue
        with ExitStack() as stack:
            source = opened if opened is not None else stack.enter_context(open_input(path))
            names.append(source.name)
            total.add(_read_log(source, analyzer, strict))
            warnings += source.warnings
    diag = analyzer.result(stats=total, inputs=names)
    if warnings:
        diag = dataclasses.replace(diag, warnings=tuple(warnings))
    return conclude(diag, registry)


def diagnose_inputs(paths: Sequence[str | Path], *, strict: bool = False,
                    jobs: int | None = None, registry: RegistryLoader = no_registry) -> Diagnosis:
    """Text logs or TORCH_TRACE inputs (a text log beside a trace: for its CUDA-graph records);
    ``-`` is stdin, sniffed for a trace.

    ``jobs``: processes that parse trace files (one per rank) in parallel; None = the cores.
    ``registry``: how to get torch's graph-break registry (``dyncli.diagnose.conclude``).
    """
    if not paths:
        raise UsageError("no input given", hint="dyncli diagnose run.log  (or - for stdin)")
    from dyncli.diagnose import read_trace  # the trace side, only when needed

    if sum(str(p) == STDIN for p in paths) > 1:
        raise UsageError("stdin (-) given more than once")
    with ExitStack() as stack:
        # stdin and pipes are opened once, sniffed from what was read, and parsed from there
        streams = {str(p): stack.enter_context(open_input(p)) for p in paths if is_stream(p)}
        kinds = []
        for p in paths:
            if str(p) in streams:
                kinds.append("trace" if is_trace_line(streams[str(p)].first) else "text")
            elif not Path(p).exists():
                raise InputError(f"{p}: no such file or directory")
            else:
                kinds.append("trace" if read_trace.is_trace_input(Path(p)) else "text")
        if "trace" in kinds:
            files = [Path(p) for p, k in zip(paths, kinds, strict=True)
                     if k == "trace" and str(p) not in streams]
            # a text log beside a trace of the same run: read for its CUDA-graph records
            # (which graph and size each recording was; the trace has their seconds)
            logs = [streams.get(str(p)) or Path(p) for p, k in zip(paths, kinds, strict=True)
                    if k == "text"]
            return read_trace.diagnose_traces(
                files, strict=strict, jobs=jobs, logs=logs, registry=registry,
                streams=[streams[str(p)] for p, k in zip(paths, kinds, strict=True)
                         if k == "trace" and str(p) in streams])
        return diagnose_logs(paths, strict=strict, streams=streams, registry=registry)

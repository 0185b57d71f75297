"""The result of dyncli diagnose: ``Diagnosis`` and its rows (frozen dataclasses).

The rows are made by ``dyncli.diagnose.analyzer.Analyzer`` from events of any parser; the
conclusions (findings, root causes, distinct graph breaks: ``dyncli.diagnose.findings``) are
computed once by the pipeline (``dyncli.diagnose.conclude``) and stored here, so a Diagnosis
neither computes its own analysis nor reads the environment. Rendered by
``dyncli.diagnose.render``. ``Diagnosis.to_json()`` is the ``--json`` contract
(schema_version 1, documented in docs/diagnose.md): add keys, never rename them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from dyncli.diagnose.cudagraph_report import CudagraphReport
from dyncli.diagnose.findings import Advice, Cause, DistinctBreak
from dyncli.diagnose.releases import Releases, named
from dyncli.diagnose.trace_report import TraceReport
from dyncli.logparse.events import ParseStats, UserLoc, split_id
from dyncli.logparse.guardtext import GuardKind
from dyncli.logparse.textrecompiles import FAIL_ON_RECOMPILE
from dyncli.words import counted

CAUSES = tuple(str(k) for k in GuardKind)


def shown_causes(by: dict[str, int]) -> list[str]:
    """The causes a summary names: ``size``, ``scalar``, ``other`` always; ``stride`` (rare in
    torch's logs) and ``unknown`` (a record without its reason) only where it has recompiles,
    so the usual ``size, scalar, other`` stays as it was."""
    return [c for c in by if c not in (GuardKind.STRIDE, GuardKind.UNKNOWN) or by[c]]

_DIGITS = re.compile(r"\d{1,18}")


def rank_key(rank: int | None) -> int:
    """Sort key for ranks: the rankless view (``None``) first, then by number."""
    return -1 if rank is None else rank


def compile_id_key(cid: str) -> tuple[str, int, tuple[int, ...]]:
    """Sort key for compile ids such as ``0/1`` or ``!0/2/1``: by process and reset generation
    (``r1:0/1``, see ``CompileId``), then by their numbers, in order."""
    bare, generation, process = split_id(cid)
    return process, generation, tuple(int(p) for p in _DIGITS.findall(bare))


@dataclass(frozen=True)
class DynamicInput:
    """An input that became dynamic, how (``automatic dynamic/PGO``, ``mark_dynamic``…), when."""

    source: str
    origin: str
    compile_id: str
    line: int = 0


@dataclass(frozen=True)
class FrameReport:
    """One compiled frame (a Python function Dynamo compiled; a graph break makes two)."""

    rank: int | None
    frame_id: str
    function: str
    file: str
    first_line: int | None
    compiles: int
    compile_ids: tuple[str, ...] = ()
    dynamic_inputs: tuple[DynamicInput, ...] = ()
    dynamic_dims: tuple[tuple[str, tuple[int, ...]], ...] = ()  # from the guards' TENSOR_MATCH
    marking_compiles: tuple[str, ...] = ()  # compiles in which automatic dynamic marked inputs
    at_least: bool = False  # compiles is a lower bound: the log does not number this frame's
    # of ``compiles``, those only the backend's records prove (compile ids on inductor's
    # records that no dynamo record shows: its autotuning at [15/4], pytorch#150980)
    backend_proven: int = 0


@dataclass(frozen=True)
class RecompileReport:
    """One recompile: the guard failures that triggered it and what kind of change it was."""

    rank: int | None
    compile_id: str
    function: str
    file: str
    first_line: int | None
    cause: str  # size | scalar | other (of the newest cache entry's failure)
    reasons: tuple[str, ...]
    causes: tuple[str, ...] = ()
    user: UserLoc | None = None
    line: int = 0
    compiled: bool = True  # False when the recompile limit refused it (the frame runs eagerly)
    # the setting that made torch raise instead of recompiling (also not compiled):
    # "fail_on_recompile" (set_stance's) or "error_on_recompile" (dynamo's config); "" for none
    refused_by: str = ""
    sizes: tuple[tuple[str, str], ...] = ()  # (source, value) of the symbols it created
    # what each failed guard checks, finer than ``causes`` (guardtext.Checked: size, stride,
    # scalar, value, identity, type, global_state, backend, …; "no_guard": torch's reason names
    # no guard; "unknown": no reason in the log)
    kinds: tuple[str, ...] = ()
    # torch's note that it cannot say which code made a failed guard ("(unknown var s1, please
    # file a bug)"), where it wrote one
    unknown_origin: str = ""

    @property
    def kind(self) -> str:
        """What its newest cache entry's failed guard checks (``unknown`` without a reason)."""
        return self.kinds[0] if self.kinds else "unknown"

    @property
    def stance(self) -> bool:
        """Whether set_stance("fail_on_recompile") refused it."""
        return self.refused_by == FAIL_ON_RECOMPILE


@dataclass(frozen=True)
class SpecializationReport:
    """A symbol refined to one value, or a dim marked dynamic that the code specialized."""

    rank: int | None
    compile_id: str
    symbol: str
    sources: tuple[str, ...]
    value: str
    reason: str  # range_refined_to_singleton | constraint_violation | forcing_spec | ...
    guard: str = ""
    user: UserLoc | None = None
    framework: str = ""
    line: int = 0
    message: str = ""


# a graph break read without its reason (GraphBreakReport.reason_cut)
REASON_CUT = "(its reason is not in the log: torch's record of the break is cut)"
def raised_break(known: Releases | None) -> str:
    """What a break torch raised as an exception says (torch._dynamo.exc.Unsupported ending a
    traceback: GraphBreakReport.raised), in its cause's title and its finding's message, with
    what raises every break in the releases ``known``: fullgraph=True and an export in every
    release (torch.export from 2.1, torch._dynamo.export in 2.0), error_on_graph_break from 2.9
    (a decorator and context manager: torch's config module has no such setting, 2.12 to 2.15;
    releases.FIRST)."""
    eogb = named("torch._dynamo.error_on_graph_break", known)
    ways = ["fullgraph=True", str(named("torch.export", known))] + ([f"{eogb}(True)"] if eogb else [])
    return (f", raised as an error that stopped the program ({', '.join(ways[:-1])} or {ways[-1]} "
            "make every graph break one)")


@dataclass(frozen=True)
class GraphBreakReport:
    """A graph-break site (deduplicated by file, line and reason) and how often it broke."""

    rank: int | None
    file: str
    user_line: int
    reason: str
    explanation: str = ""
    hints: tuple[str, ...] = ()
    code: str = ""
    count: int = 1
    compile_ids: tuple[str, ...] = ()
    line: int = 0
    gb_type: str = ""  # torch's graph-break type (its registry's Gb_type)
    gb_code: str = ""  # torch's graph-break code (GB0025), when the log carries it
    call_sites: tuple[str, ...] = ()  # "file:line in fn" of the callers that reached it
    # "file:line in fn" of the user's frames that reached it through torch's own code (a
    # Function's forward dynamo inlined is reached from torch's autograd_function.py, called
    # at the user's ``.apply``): where its frame resumes, so not a break of its own
    user_callers: tuple[str, ...] = ()
    # a break the log proves only by the name of the code torch resumed after it
    # (dyncli.diagnose.resumed): that name, and the function that broke
    resumed_in: str = ""
    function: str = ""
    debug: str = ""  # torch's "Developer debug context" (2.7 on), text from the log
    # raised as an exception (fullgraph=True, error_on_graph_break): the program stopped there
    raised: bool = False
    # the releases whose record form this is (logparse.events.FORM_INLINE …), "" where unknown
    releases: str = ""
    # torch gave up on the whole frame at this break and ran it eagerly (2.4-2.7's "Graph
    # break: skip:" record)
    skipped_frame: bool = False

    @property
    def place(self) -> str:
        """``file:line``, or what the log lacks (a paste cut before the break's place)."""
        if self.file:
            return f"{self.file}:{self.user_line}"
        if self.function:
            return f"line {self.user_line} of {self.function}"
        return "a place the log does not show"

    @property
    def reason_cut(self) -> bool:
        """torch writes a reason in every graph-break record of every release (the type, the
        message, or 2.3-2.5's exception line after the record's traceback): a record read
        with none is one the input cut (pytorch#126722's paste ends at ``Traceback (most recent
        call last):``; pytorch#119292's begins inside it). A resumed break is not a record."""
        return not (self.reason or self.explanation or self.gb_type or self.resumed_in)

    @property
    def said_reason(self) -> str:
        """Its reason as diagnose says it: torch's explanation or reason, or that it was cut."""
        return self.explanation or self.reason or REASON_CUT


_CALL_SITE = re.compile(r"^(?P<file>.+):(?P<line>\d{1,9}) in ")


def call_site(site: str) -> tuple[str, int] | None:
    """(file, line) of a graph break's call site (``file:12 in fn``)."""
    m = _CALL_SITE.match(site)
    return (m["file"], int(m["line"])) if m else None


@dataclass(frozen=True)
class NotConvertedReport:
    """A frame dynamo gave up on (``WON'T CONVERT``): its compile raised, torch suppressed the
    error, and the frame runs eagerly."""

    rank: int | None
    function: str
    file: str
    first_line: int | None
    error: str  # the exception's text ("" where the paste ends before it)
    count: int = 1
    line: int = 0
    compile_id: str = ""
    raised_in: str = ""  # where the error was cut: the compiler part that raised ("" unknown)


@dataclass(frozen=True)
class LoopSkipReport:
    """A frame dynamo skipped because a graph break happened inside one of its for/while
    loops (torch 2.0-2.10's ``Skipping frame because there is a graph break in a for/while
    loop``): the whole frame runs eagerly."""

    rank: int | None
    function: str  # "" where the record names none (2.0's line alone)
    file: str
    user_line: int | None  # the break's line inside the loop (torch's frame summary)
    first_line: int | None  # the frame's first line (convert_frame's DEBUG echo only)
    count: int = 1  # times the log records it (its compiles: one skip each)
    line: int = 0
    compile_id: str = ""
    chained: bool = False  # 2.11-2.15's "graph break in loop", chained to the break's record


@dataclass(frozen=True)
class CompileMetricsReport:
    """torch's ``TorchDynamo compilation metrics:`` table of one process (logged at exit under
    ``TORCH_LOGS=dynamo``): the run's compile seconds by the function torch timed."""

    rank: int | None
    rows: tuple[tuple[str, float], ...]  # (function, seconds) as logged; rows nest
    total_row: str  # the row of the whole frame compiles (``_compile.compile_inner``), or ""
    total_s: float | None  # its seconds (None: the table has no such row)
    backend_s: float | None  # ``OutputGraph.call_user_compiler``: the backend's share
    cut: bool = False  # a row without its number: the paste ends inside the table
    line: int = 0


@dataclass(frozen=True)
class ExplainCountsReport:
    """The head of a torch._dynamo.explain() report: its own counts (None: not in the paste),
    which a paste cut after some of its ``Break Reason N:`` blocks still has."""

    rank: int | None
    graph_count: int | None = None
    graph_break_count: int | None = None
    line: int = 0


@dataclass(frozen=True)
class GuardSelfCheckReport:
    """A compile whose guards failed on the frame they were made from (torch's AssertionError
    "Guard failed on the same frame it was created"): the compile raised."""

    rank: int | None
    entry: str  # the compile id torch names ("51/0"), "" where the paste cut it
    reason: str
    line: int = 0


@dataclass(frozen=True)
class CompileCrashReport:
    """The program stopped on an exception raised inside torch's compiler (a traceback through
    dynamo, AOTAutograd or inductor, or one of their exceptions: ``ev.CompileCrash``)."""

    rank: int | None
    error: str  # the exception's text; IPython's head gives its type alone; "" if cut
    cause: str = ""  # the exception it was raised from, where error does not say it
    cut: bool = False  # the paste ends inside the traceback
    at: UserLoc | None = None  # the deepest frame of torch's compiler
    deepest: UserLoc | None = None  # the deepest frame (a package's, where not torch's)
    user: UserLoc | None = None  # the program's own deepest frame
    resumes: tuple[UserLoc, ...] = ()  # resume functions' frames in it: breaks they prove
    kernel: str = ""  # the Triton kernel inductor wrote that Triton could not compile
    compile_id: str = ""  # the last compile the log shows before the traceback
    line: int = 0
    # a frame is the CUDA-graph trees': it raised as the compiled graph ran, not in a compile
    cudagraph_run: bool = False
    # through AOTAutograd's run-time wrapper, nothing below it compiling: the compiled graph
    # was running (not under CUDA graphs the traceback shows), not a compile
    graph_run: bool = False
    # a program's warning quoting torch.compile's refusal: it caught it and ran uncompiled
    went_on: bool = False
    # where the paste begins after the exception ("from user code:", dynamo's user stack)
    begun: str = ""
    # the paste begins and ends inside the traceback (no head, no exception): whether the
    # program stopped on it is not in the paste (torch logs a caught break's traceback too)
    headless: bool = False


@dataclass(frozen=True)
class NoCompiledFramesReport:
    """A fullgraph call that compiled no frame (torch raised ``found no compiled frames``),
    with the frames torch skipped: (function, file, first line, torch's reason) each."""

    rank: int | None
    skipped: tuple[tuple[str, str, int, str], ...]
    line: int = 0


@dataclass(frozen=True)
class RecompileLimitReport:
    """``torch._dynamo hit config.recompile_limit``: the function stopped being compiled."""

    rank: int | None
    compile_id: str
    limit_name: str
    limit: str
    function: str
    file: str
    first_line: int | None
    last_reason: str
    line: int = 0
    before_2_2: bool = False  # torchdynamo's, 2.0's or 2.1's form: torch's default was 64
    reasons_off: bool = False  # torch 2.1 printed no reason (TORCHDYNAMO_REPORT_GUARD_FAILURES)


@dataclass(frozen=True)
class UnbackedReport:
    """A data-dependent symbol (``.item()``, ``.nonzero()``…)."""

    rank: int | None
    compile_id: str
    symbol: str
    kind: str
    lower: str
    upper: str
    user: UserLoc | None = None
    framework: str = ""


@dataclass(frozen=True)
class DataDependentReport:
    """A data-dependent error: torch could not decide ``expr``, an expression of symbols read
    from a tensor's data (``u0``: ``.item()``, ``nonzero()``…), in one compile
    (``dyncli.logparse.textdde``). ``what``: ``guard`` (a branch or guard needed its truth),
    ``int`` (a concrete integer was needed), ``evaluate`` (only torch's evaluate_expr failure
    is in the log), ``symbol`` (only the symbol is: ``expr`` is it), ``unnamed`` (only dynamo's
    exportdb link for one is: ``expr`` is ""); ``op``: the operator
    whose meta asked; ``culprit``: torch's ``Caused by`` frame
    (``_meta_registrations.py:4832 in meta_select``); ``hint``: torch's own answer in its
    message, for the code that asked (``guard_size_oblivious``, ``guard_or_false``…);
    ``checks``: the torch._check lines non-strict export suggests, one of which holds;
    ``raised``: the log shows the error leave torch (its own message or traceback, or a
    Python traceback after torch's log of it); false where the log holds only torch's record
    of the failed call, which torch logs and re-raises to code that may catch it
    (pytorch#134421)."""

    rank: int | None
    compile_id: str
    expr: str
    what: str
    op: str = ""
    culprit: str = ""
    user: UserLoc | None = None  # the user's line torch's message names, where it does
    line: int = 0
    made: UserLoc | None = None  # where its symbol was made (torch's allocation stack)
    hint: str = ""  # torch's own answer in its message, for the code that asked
    checks: tuple[str, ...] = ()  # torch.export's own suggested torch._check lines
    raised: bool = True  # the log shows it leave torch (not only torch's logged record)


@dataclass(frozen=True)
class RangeViolationReport:
    """A range the program gave a size, ``mark_dynamic(x, 0, min=, max=)`` or an export Dim,
    that the code narrows: torch raised (``Constraints violated``) and names the guards the
    code needs over it (``4 <= L['x'].size()[0]``). ``dim``: export's Dim name ("" for
    mark_dynamic); ``range``: torch's rendering (a bound at its default left out)."""

    rank: int | None
    compile_id: str
    source: str
    dim: str
    range: str
    guards: tuple[str, ...]
    user: UserLoc | None = None
    line: int = 0


@dataclass(frozen=True)
class TorchNoteReport:
    """torch's own output of one kind that needs no fix (``TorchNote``: ``autotune``,
    ``empty-cudagraph``, ``gemm-templates-off``, ``sympy-recursion``, ``backward-deferred``,
    ``auto-dim-specialized``, ``shape-env-failed``,
    ``backend-kwargs-ignored``): how many of each of its parts the log
    holds, the first line of each part (line number, text), and the ranks that wrote it.
    ``after``: the ShapeEnv calls whose failure recording.py logged just before a part, in the
    same process and compile (``shape-env-failed``'s texts, joined to the ``backward-deferred``
    part that re-raised them; said there, not as notes of their own)."""

    kind: str
    counts: tuple[tuple[str, int], ...] = ()
    lines: tuple[tuple[int, str], ...] = ()
    ranks: tuple[int | None, ...] = ()
    after: tuple[str, ...] = ()

    def count(self, what: str) -> int:
        """How many parts ``what`` (``table``, ``failed``…; "" for a kind without parts)."""
        return dict(self.counts).get(what, 0)

    @property
    def total(self) -> int:
        """Its parts, all together."""
        return sum(n for _, n in self.counts)


@dataclass(frozen=True)
class AutogradMissReport:
    """One cache miss of compiled autograd: it captured the backward graph again, and dynamo
    compiled that graph under the capture's id (``capture``, ``!N``; "" where the log ends
    first). ``reason``: ``node`` (a new autograd node, ``node`` at NodeCall ``call``; key sizes
    cached for that node's type: ``previous``) or ``shapes`` (``changed`` sizes of ``total``
    changed: indexes ``sizes`` into the graph's sizes; torch then marks them dynamic; an old
    release names each size by its node instead, one line each: ``marked``, "size idx I of NODE
    (NodeCall N)", I an index into that node's sizes). ``first``: the first capture (an empty
    cache at the graph's root), not a recompile. ``after``: the newest dynamo compile the log
    showed before the miss. ``lines``: its log lines."""

    rank: int | None
    line: int
    capture: str
    reason: str
    node: str = ""
    call: int | None = None
    key_size: int | None = None
    previous: tuple[int, ...] = ()
    changed: int = 0
    total: int | None = None
    sizes: tuple[int, ...] = ()
    after: str = ""
    first: bool = False
    lines: int = 1
    marked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """One item of ``compiled_autograd`` in ``--json``."""
        return {"rank": self.rank, "line": self.line, "capture": self.capture,
                "reason": self.reason, "node": self.node, "node_call": self.call,
                "key_size": self.key_size, "previous_key_sizes": list(self.previous),
                "changed": self.changed, "total": self.total, "sizes": list(self.sizes),
                "after": self.after, "first": self.first,
                **({"marked": list(self.marked)} if self.marked else {})}


@dataclass(frozen=True)
class Relation:
    """An equality torch derived between symbols (``s27 = s16 (solve)``)."""

    rank: int | None
    compile_id: str
    symbol: str
    target: str
    reason: str
    lhs: str = ""
    rhs: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """Everything ``dyncli diagnose`` found in one set of inputs."""

    inputs: tuple[str, ...] = ()
    frames: tuple[FrameReport, ...] = ()
    recompiles: tuple[RecompileReport, ...] = ()
    specializations: tuple[SpecializationReport, ...] = ()
    graph_breaks: tuple[GraphBreakReport, ...] = ()
    recompile_limits: tuple[RecompileLimitReport, ...] = ()
    unbacked: tuple[UnbackedReport, ...] = ()
    relations: tuple[Relation, ...] = ()
    dynamic_sources: tuple[str, ...] = ()
    zero_one_guards: tuple[tuple[int | None, str, str], ...] = ()
    data_dependent: int = 0
    data_dependent_errors: tuple[DataDependentReport, ...] = ()
    # compiles that failed making their guards: (rank, compile id, create function, line)
    guard_errors: tuple[tuple[int | None, str, str, int], ...] = ()
    # frames dynamo skipped under a TorchDispatchMode: (rank, function, file, times, first line)
    mode_skips: tuple[tuple[int | None, str, str, int, int], ...] = ()
    # frames dynamo gave up on after an error it suppressed (WON'T CONVERT): they run eagerly
    not_converted: tuple[NotConvertedReport, ...] = ()
    # frames dynamo skipped for a graph break inside a loop: they run eagerly
    loop_skips: tuple[LoopSkipReport, ...] = ()
    # fullgraph calls that compiled no frame (torch 2.12 on raises "found no compiled frames")
    no_compiled_frames: tuple[NoCompiledFramesReport, ...] = ()
    # compiles whose guards failed on their own frame (torch's "Guard failed on the same frame")
    guard_self_checks: tuple[GuardSelfCheckReport, ...] = ()
    # torch's compile-time table at exit, one per process (TORCH_LOGS=dynamo: dump_compile_times)
    compile_metrics: tuple[CompileMetricsReport, ...] = ()
    # the counts at the head of torch._dynamo.explain() reports ("Graph Break Count: 15")
    explain_counts: tuple[ExplainCountsReport, ...] = ()
    # the program's tracebacks that end in torch's compiler: the compile raised, it stopped
    compile_crashes: tuple[CompileCrashReport, ...] = ()
    # torch's own output that needs no fix (max-autotune's tuning report, an empty CUDA graph,
    # too few SMs for GEMM templates), one row per kind: explained by the notes
    torch_notes: tuple[TorchNoteReport, ...] = ()
    # compiled autograd's cache misses, each a capture of the backward graph (log order, at
    # most dyncli.diagnose.autograd.KEPT per input): dyncli.diagnose.autograd
    autograd_misses: tuple[AutogradMissReport, ...] = ()
    # ranges given to a size (mark_dynamic's min/max, export's Dims) that the code narrows
    range_violations: tuple[RangeViolationReport, ...] = ()
    # torch's "Suggested fixes:" lines, (name, value) as the log has them (export's answer)
    suggested_fixes: tuple[tuple[str, str], ...] = ()
    ranks: tuple[int | None, ...] = ()
    suggestions: tuple[Advice, ...] = ()
    # findings that are notes (``Advice.note``): what the log shows, with nothing there to fix;
    # never a cause (``rank_causes`` reads the suggestions only)
    notes: tuple[Advice, ...] = ()
    stats: ParseStats = field(default_factory=ParseStats)
    warnings: tuple[str, ...] = ()  # input problems that did not stop the analysis
    # Set for TORCH_TRACE inputs only (dyncli.diagnose.read_trace): time, failures, similar
    # graphs, ranks, PGO; its to_json() adds keys to the document, never renames any.
    trace: TraceReport | None = None
    # The --fail-on items asked for (not part of the JSON); ``tripped`` says which were found.
    fail_on: tuple[str, ...] = ()
    # What the log shows (``warnings``: torch's default warnings only; ``recompiles``;
    # ``guards``; ``dynamic``: +dynamic symbol records; ``trace``) and what a richer one adds.
    log_level: str = ""
    richer_log: str = ""
    # (rank, source, dims) the code marked static (torch._dynamo.mark_static; +guards logs)
    marked_static: tuple[tuple[int | None, str, tuple[int, ...]], ...] = ()
    # the recompile limit raised an error (FailOnRecompileLimitHit: fullgraph=True) instead of
    # falling back to eager: the lines of the log that say so
    limit_raised: tuple[str, ...] = ()
    # the line of a Python traceback that follows a limit's warning in the input (the program
    # raised after the limit; the exception may be cut from a paste); None: none follows
    stopped_after_limit: int | None = None
    # CUDA-graph recordings, skips and re-record limits (dyncli.diagnose.cudagraphs); None
    # when the input holds no CUDA-graph record. Its to_json() is the ``cudagraphs`` key.
    cudagraphs: CudagraphReport | None = None
    # Set by the pipeline (dyncli.diagnose.conclude), once: the findings grouped by the fix
    # they lead to, ranked by cost; one row per graph break (torch's code at one user line);
    # the torch version whose graph-break registry the pipeline was given (None: none, or no
    # graph break to explain).
    causes: tuple[Cause, ...] = ()
    distinct_graph_breaks: tuple[DistinctBreak, ...] = ()
    graph_break_registry: str | None = None
    # the torch releases the input shows it came from (dyncli.diagnose.releases), None where
    # nothing in it tells
    releases: Releases | None = None

    def with_suggestions(self, suggestions: tuple[Advice, ...]) -> Diagnosis:
        """A copy with ``suggestions`` set: the findings to act on, and ``notes`` (those that
        are notes: ``Advice.note``) apart, each in its order."""
        return dataclasses.replace(self, suggestions=tuple(a for a in suggestions if not a.note),
                                   notes=tuple(a for a in suggestions if a.note))

    @property
    def ranked(self) -> bool:
        """Whether the input names ranks: the terminal's tables then have a rank column."""
        return any(r is not None for r in self.ranks)

    @property
    def partial(self) -> bool:
        """Whether the log is a partial paste (records cut at their start, prefixes rebuilt):
        its counts are what it proves, at least."""
        return bool(self.stats.partial or self.stats.pasted.get("prefixes rebuilt"))

    @property
    def read_as(self) -> str:
        """How the text was read, when it was not a clean log: ``read as pasted text: 41
        records, prefixes trimmed (12), 2 begun before the paste`` ("" for a clean log)."""
        st = self.stats
        if not (st.pasted or st.partial):
            return ""
        done = [f"{what} ({n})" for what, n in sorted(st.pasted.items())]
        if st.partial:
            done.append(f"{st.partial} record(s) begun before the paste")
        records = counted(st.records, "record")
        return f"read as pasted text: {records}, " + ", ".join(done)

    @property
    def explain_breaks(self) -> int | None:
        """The most graph breaks an explain() report's head counts (None: no such head)."""
        return max((x.graph_break_count for x in self.explain_counts
                    if x.graph_break_count is not None), default=None)

    @property
    def compiles(self) -> int:
        """Total compiles over all frames and ranks (restart attempts not counted); never fewer
        than the recompile records prove where the log names no frame (a headless record
        pasted alone, pytorch#133898: one recompile is two compiles, not "at least 0")."""
        if self.frames:
            return sum(f.compiles for f in self.frames)
        compiled = sum(1 for r in self.recompiles if r.compiled)
        return compiled + 1 if self.recompiles else 0

    @property
    def recompiles_proven(self) -> int:
        """Recompiles the compile counts prove (each frame's compiles after its first), which
        a log with torch's warnings only (a limit at ``[1/8]``) shows no record of; never fewer
        than the recompile records it has."""
        compiled = sum(1 for r in self.recompiles if r.compiled)
        return max(compiled, sum(max(f.compiles - 1, 0) for f in self.frames))

    def recompiles_by_cause(self) -> dict[str, int]:
        """``{"size": n, "scalar": n, "other": n}``."""
        counts = dict.fromkeys(CAUSES, 0)
        for r in self.recompiles:
            counts[r.cause] = counts.get(r.cause, 0) + 1
        return counts

    def found(self, what: str) -> bool:
        """Whether ``--fail-on`` item ``what`` (recompiles, specializations, graph-breaks) hit."""
        # (recompiles: those the compile ids prove too, a limit warning's or a +dynamic log's)
        return bool({"recompiles": self.recompiles_proven, "specializations": self.specializations,
                     "graph-breaks": self.graph_breaks}[what])

    @property
    def tripped(self) -> tuple[str, ...]:
        """The ``fail_on`` items that were found: the command exits 1 when there is any."""
        return tuple(what for what in self.fail_on if self.found(what))

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document of ``dyncli diagnose`` (schema_version 1; docs/diagnose.md)."""
        from dyncli.output import envelope

        return envelope("diagnose", self.to_json())

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` payload (without the envelope): see docs/diagnose.md."""
        return {
            "inputs": list(self.inputs),
            "ranks": list(self.ranks),
            "summary": {
                "frames": len(self.frames), "compiles": self.compiles,
                "recompiles": len(self.recompiles), "recompiles_by_cause": self.recompiles_by_cause(),
                "recompiles_proven": self.recompiles_proven,
                "specializations": len(self.specializations),
                "graph_breaks": sum(b.count for b in self.graph_breaks),
                "graph_break_sites": len(self.graph_breaks),
                "recompile_limit_hits": len(self.recompile_limits),
                "unbacked_symbols": len(self.unbacked), "data_dependent": self.data_dependent,
                "data_dependent_errors": len(self.data_dependent_errors),
            },
            "frames": [{
                "rank": f.rank, **id_fields(f.frame_id, "frame_id"), "function": f.function,
                "file": f.file, "line": f.first_line, "compiles": f.compiles,
                "at_least": f.at_least or self.partial,
                "compile_ids": [split_id(c)[0] for c in f.compile_ids],
                "dynamic_inputs": [dataclasses.asdict(d) for d in f.dynamic_inputs],
                "dynamic_dims": {src: list(dims) for src, dims in f.dynamic_dims},
            } for f in self.frames],
            "recompiles": [{
                "rank": r.rank, **id_fields(r.compile_id), "function": r.function,
                "file": r.file, "line": r.first_line, "cause": r.cause,
                "reasons": list(r.reasons), "causes": list(r.causes), "compiled": r.compiled,
                "kind": r.kind, "kinds": list(r.kinds),
                **_user(r.user),
                # (only where torch wrote it: "(unknown var s1, please file a bug)")
                **({"unknown_origin": r.unknown_origin} if r.unknown_origin else {}),
            } for r in self.recompiles],
            "specializations": [{
                "rank": s.rank, **id_fields(s.compile_id), "symbol": s.symbol,
                "sources": list(s.sources), "value": s.value, "reason": s.reason,
                "guard": s.guard, **_user(s.user), "framework": s.framework,
            } for s in self.specializations],
            "graph_breaks": [{
                "rank": b.rank, "file": b.file, "line": b.user_line, "reason": b.reason,
                "count": b.count, "code": b.code, "explanation": b.explanation,
                "hints": list(b.hints), "compile_ids": list(b.compile_ids),
                "gb_type": b.gb_type, "gb_code": b.gb_code, "call_sites": list(b.call_sites),
                "debug": b.debug, **({"raised": True} if b.raised else {}),
                **({"skipped_frame": True} if b.skipped_frame else {}),
                **({"resumed_in": b.resumed_in, "function": b.function} if b.resumed_in else {}),
            } for b in self.graph_breaks],
            # (a torch 2.1 form's two flags only where set, as its readers have none)
            "recompile_limits": [{**{k: v for k, v in dataclasses.asdict(x).items()
                                     if v or k not in ("before_2_2", "reasons_off")},
                                  **id_fields(x.compile_id)} for x in self.recompile_limits],
            "unbacked": [{
                "rank": u.rank, **id_fields(u.compile_id), "symbol": u.symbol, "kind": u.kind,
                "range": [u.lower, u.upper], **_user(u.user), "framework": u.framework,
            } for u in self.unbacked],
            "guard_errors": [{"rank": rank, **id_fields(cid), "create_function": fn, "line": line}
                             for rank, cid, fn, line in self.guard_errors],
            "mode_skips": [{"rank": rank, "function": fn, "file": file, "count": n, "line": line}
                           for rank, fn, file, n, line in self.mode_skips],
            "not_converted": [dataclasses.asdict(x) for x in self.not_converted],
            # (only where the input has any)
            **({"loop_skips": [dataclasses.asdict(x) for x in self.loop_skips]}
               if self.loop_skips else {}),
            "no_compiled_frames": [{"rank": x.rank, "line": x.line, "skipped": [
                {"function": fn, "file": file, "first_line": first, "reason": why}
                for fn, file, first, why in x.skipped]} for x in self.no_compiled_frames],
            "guard_self_checks": [dataclasses.asdict(x) for x in self.guard_self_checks],
            "compile_crashes": [dataclasses.asdict(x) for x in self.compile_crashes],
            "compile_metrics": [{
                "rank": x.rank, "total_s": x.total_s, "total_row": x.total_row,
                "backend_s": x.backend_s, "cut": x.cut, "line": x.line,
                "rows": [{"function": name, "seconds": sec} for name, sec in x.rows],
            } for x in self.compile_metrics],
            "explain_counts": [dataclasses.asdict(x) for x in self.explain_counts],
            "range_violations": [{
                "rank": x.rank, **id_fields(x.compile_id), "source": x.source, "dim": x.dim,
                "range": x.range, "guards": list(x.guards), **_user(x.user), "line": x.line,
            } for x in self.range_violations],
            "suggested_fixes": [f"{name} = {value}" for name, value in self.suggested_fixes],
            "data_dependent_errors": [{
                "rank": x.rank, **id_fields(x.compile_id), "expr": x.expr, "what": x.what,
                "op": x.op, "culprit": x.culprit, **_user(x.user), "line": x.line,
                "torch_hint": x.hint, "torch_checks": list(x.checks), "raised": x.raised,
                "made": None if x.made is None else {
                    "file": x.made.file, "line": x.made.line, "function": x.made.function,
                    "code": x.made.code},
            } for x in self.data_dependent_errors],
            "relations": [{
                "rank": x.rank, **id_fields(x.compile_id), "relation": f"{x.symbol} = {x.target}",
                "reason": x.reason, "sources": [x.lhs, x.rhs],
            } for x in self.relations],
            "dynamic_sources": list(self.dynamic_sources),
            "suggestions": [s.to_json() for s in self.suggestions],
            # notes: findings with nothing there to fix (torch's own output explained; unexplained
            # recompiles that only the backend's compile ids prove), and that output, by kind
            # (only where the input has any, as "cudagraphs")
            **({"notes": [s.to_json() for s in self.notes],
                "torch_notes": [{"kind": x.kind, "counts": dict(x.counts),
                                 "lines": [{"line": n, "text": t} for n, t in x.lines],
                                 "ranks": list(x.ranks),
                                 **({"after": list(x.after)} if x.after else {})}
                               for x in self.torch_notes]}
               if self.notes or self.torch_notes else {}),
            "stats": {
                "lines": self.stats.lines, "recognized": self.stats.recognized,
                "unrecognized": self.stats.unrecognized, "malformed": self.stats.malformed,
                "bytes": self.stats.bytes,
                # pasted text (issue 33): records read, what was done to find them, records
                # the paste began inside, torch records of no known kind
                "records": self.stats.records, "pasted": dict(sorted(self.stats.pasted.items())),
                "partial": self.stats.partial, "unread": self.stats.unread,
                # why records were skipped as malformed ({"bad size": 2, …}; issue 13)
                "malformed_reasons": dict(sorted(self.stats.reasons.items())),
            },
            "warnings": list(self.warnings),
            "partial": self.partial,
            "limit_raised": list(self.limit_raised),
            **({"stopped_after_limit": self.stopped_after_limit}
               if self.stopped_after_limit is not None else {}),
            "read_as": self.read_as,
            "log_level": self.log_level,
            "richer_log": self.richer_log,
            "marked_static": [{"rank": r, "source": src, "dims": list(ds)}
                              for r, src, ds in self.marked_static],
            # ranked root causes (issue 21): each with its fix, its cost and its findings
            "causes": [c.to_json(i) for i, c in enumerate(self.causes, 1)],
            "distinct_graph_breaks": [b.to_json() for b in self.distinct_graph_breaks],
            "graph_break_registry": self.graph_break_registry,
            # the releases diagnose judged the input to come from, and what told it (round 26)
            "releases": self.releases.to_json() if self.releases is not None else None,
            **(self.trace.to_json() if self.trace is not None else {}),
            **({"cudagraphs": self.cudagraphs.to_json()} if self.cudagraphs is not None else {}),
            # (only where the input has any)
            **({"compiled_autograd": [x.to_json() for x in self.autograd_misses]}
               if self.autograd_misses else {}),
        }


def id_fields(text: str, name: str = "compile_id") -> dict[str, Any]:
    """A compile or frame id as JSON: the id torch wrote (``0/1``), and beside it its reset
    ``generation`` and its ``process`` (the file label when files share a rank; "")."""
    bare, generation, process = split_id(text)
    return {name: bare, "generation": generation, "process": process}


def _user(user: UserLoc | None) -> dict[str, Any]:
    if user is None:
        return {"user_file": None, "user_line": None, "user_code": None, "user_function": None}
    return {"user_file": user.file, "user_line": user.line, "user_code": user.code,
            "user_function": user.function}

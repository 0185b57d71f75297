"""Events → ``Diagnosis``: the ONE analysis of dyncli diagnose, shared by every log parser.

How a second parser plugs in
----------------------------
Produce ``dyncli.logparse.events`` objects (``CreateSymbol``, ``GuardAdded``, ``Recompile``,
``GraphBreak``, ``MarkedDynamic``, ``SetReplacement``, ``TensorMatch``…), each with its
``compile_id`` (a ``CompileId``), ``rank`` and ``line``, in log order, and call::

    analyzer = Analyzer()
    for event in my_events:        # any iterable; the analyzer keeps bounded state
        analyzer.feed(event)
    diagnosis = conclude(analyzer.result(stats=my_parse_stats, inputs=["trace dir"]))

(``dyncli.diagnose.conclude``: the root causes and graph breaks, once every finding is known),
or simply ``analyze(events, stats)``. The text parser (``dyncli.logparse.textlog``) and the
TORCH_TRACE parser both go through here, so the two views of one run give one answer.
``CompileStart`` events (trace ``dynamo_start``) name frames that never recompiled; without
them a frame's function is taken from ``Recompile`` or, failing that, from the first user
location seen in that frame.

Memory is bounded by what the log describes (frames, compiles, distinct specializations,
graph-break sites), not by its size: per-compile symbol tables are kept for the last few
compiles of each rank only.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dyncli.diagnose import advice, branches, compile_metrics, proven, resumed
from dyncli.diagnose import releases as torch_releases
from dyncli.diagnose.autograd import MissAccumulator, autograd_findings
from dyncli.diagnose.conclude import RegistryLoader, conclude, no_registry
from dyncli.diagnose.cudagraph_advice import cudagraph_advice
from dyncli.diagnose.cudagraphs import CudagraphAccumulator
from dyncli.diagnose.dde_facts import DdeFacts
from dyncli.diagnose.entries import whole_source
from dyncli.diagnose.model import (
    CompileCrashReport,
    CompileMetricsReport,
    DataDependentReport,
    Diagnosis,
    DynamicInput,
    ExplainCountsReport,
    FrameReport,
    GraphBreakReport,
    GuardSelfCheckReport,
    LoopSkipReport,
    NoCompiledFramesReport,
    NotConvertedReport,
    RangeViolationReport,
    RecompileLimitReport,
    RecompileReport,
    Relation,
    SpecializationReport,
    UnbackedReport,
    compile_id_key,
    rank_key,
)
from dyncli.diagnose.notes import (
    SHAPE_ENV,
    NoteAccumulator,
    torch_note_findings,
)
from dyncli.diagnose.reasons import is_resume
from dyncli.logparse import cudagraph_events as cg
from dyncli.logparse import events as ev
from dyncli.logparse import trace_events as te
from dyncli.logparse.guardtext import Checked, GuardKind, checked, classify
from dyncli.logparse.textbreaks import SPECULATED
from dyncli.logparse.textbuiltins import builtin_name, warned_builtin
from dyncli.logparse.textmsg import symbols_in
from dyncli.logparse.torchtree import is_polyfill_file, is_torch_file
from dyncli.sources import is_input, without_dim

__all__ = ["Analyzer", "Diagnosis", "analyze"]

_INT_RE = re.compile(r"^-?\d+$")
# a symbol as ShapeEnv names a size (s0): print_specializations' 2023 nightly named it, not its
# source
_SYMBOL_NAME_RE = re.compile(r"^s\d{1,9}$")
_PIN_RE = re.compile(r"^Eq\((?:(?P<sym>s\d{1,9}), (?P<val>-?\d{1,18})|(?P<val2>-?\d{1,18}), (?P<sym2>s\d{1,9}))\)$")
_KEEP_COMPILES = 16  # per-compile symbol tables kept per rank (interleaved threads)
_MAX_IDS = 50  # compile ids remembered per graph-break site


def _limits_told_once(limits: Iterable[RecompileLimitReport]) -> tuple[RecompileLimitReport, ...]:
    """The limit hits without the exception's telling of one the warning told: under
    fullgraph=True torch warns (``hit config.recompile_limit (8)``, with the function) and then
    raises an Unsupported that names only the limit; one hit, as the warning has it."""
    limits = tuple(limits)
    told = {(x.rank, x.limit_name) for x in limits if x.function or x.compile_id}
    return tuple(x for x in limits if x.function or x.compile_id or x.last_reason
                 or (x.rank, x.limit_name) not in told)


# the limit FailOnRecompileLimitHit names (2.4-2.8: "recompile_limit reached with fullgraph=True",
# "cache_size_limit reached with one_graph=True"); 2.9 on: "Hard failure due to fullgraph=True",
# chained from the Unsupported that names it (textbreaks._limit_exceeded); matched at the
# exception's line's start (linear: benchmarks/regex_linearity.py)
_RAISED_LIMIT_RE = re.compile(r"[\w.]{0,200}(?:FailOnRecompileLimitHit|CacheLimitExceeded): "
                              r"(?P<name>\w{1,80}_limit) reached\b")


def _limit_of_exception(raised: ev.LimitRaised | None) -> tuple[RecompileLimitReport, ...]:
    """The limit hit that torch's exception proves where the log holds no warning or message
    of the limit itself: the exception's line pasted alone (torchtitan#2958, unsloth#6825,
    tritonbench#192: "Nothing to fix" after it before round 26). The function and its last
    reason are not in the log; the limit's name only where the exception names it."""
    if raised is None:
        return ()
    m = _RAISED_LIMIT_RE.match(raised.message)
    return (RecompileLimitReport(rank=raised.rank, compile_id="",
                                 limit_name=m["name"] if m else "", limit="", function="",
                                 file="", first_line=None, last_reason="", line=raised.line),)


def _one_break_per_builtin(breaks: Iterable[GraphBreakReport]) -> list[GraphBreakReport]:
    """The breaks without torch's warning of a builtin it cannot trace where the same run's
    exception names that builtin: under fullgraph=True torch warns, then raises for the same
    call, and the exception has the place (``from user code:``)."""
    breaks = list(breaks)
    placed = {builtin_name(b.explanation) for b in breaks if b.file} - {None}
    return [b for b in breaks if b.file or warned_builtin(b.reason) not in placed]


def _one_break_per_speculation(breaks: list[GraphBreakReport]) -> list[GraphBreakReport]:
    """The breaks without dynamo's speculate_subgraph record of a compile whose graph-break
    record the log has too (torch 2.15 under TORCH_LOGS="dynamo,graph_breaks" writes both for one
    autograd.Function it could not trace: the record has its place and reason)."""
    placed = {(b.rank, cid) for b in breaks if b.file for cid in b.compile_ids}
    return [b for b in breaks if b.file or not b.reason.startswith(SPECULATED) or not b.compile_ids
            or not all((b.rank, cid) in placed for cid in b.compile_ids)]


@dataclass
class _Frame:
    rank: int | None
    frame_id: str
    function: str = ""
    file: str = ""
    first_line: int | None = None
    from_user_loc: bool = False
    # the (function, file name) of the code lines its records name (create_symbol,
    # TENSOR_MATCH, guard added), at most two: two prove a call inlined there (pytorch#174704)
    user_locs: set[tuple[str, str]] = field(default_factory=set)
    compiles: set[str] = field(default_factory=set)
    dynamic: dict[str, DynamicInput] = field(default_factory=dict)
    dims: dict[str, tuple[int | None, ...]] = field(default_factory=dict)
    marking: dict[str, None] = field(default_factory=dict)  # compile ids, in order
    dynamic_at: dict[str, tuple[str, int]] = field(default_factory=dict)  # first size=None
    named_at: int = 0  # the log line of the record that named it
    # compile ids a record of the backend (inductor) showed, and those a record of dynamo did
    # (the text reader's CreateEnv events)
    backend_ids: set[str] = field(default_factory=set)
    dynamo_ids: set[str] = field(default_factory=set)
    backend_proven: int = 0  # of the compiles proven, those the backend's records alone prove


@dataclass
class _Compile:
    """Symbol facts of one compile (one ShapeEnv)."""

    symbols: dict[str, str] = field(default_factory=dict)  # symbol -> source
    guards: dict[str, ev.GuardAdded] = field(default_factory=dict)  # symbol -> last guard w/ user
    marked: dict[str, str] = field(default_factory=dict)  # source -> origin


_MAX_ERRORS = 200  # compiles whose data-dependent errors, and guard errors, are kept
_MAX_VERSIONS = 8  # distinct torch versions kept (a trace states one)
@functools.lru_cache(maxsize=1024)
def _bare_id(text: str) -> ev.CompileId | None:
    """``CompileId.parse`` of a failed cache entry's id (``0/0``): the same few, again and again."""
    return ev.CompileId.parse(text)


def _joined_symbols(reports: list[DataDependentReport]) -> list[DataDependentReport]:
    """A symbol's fact (its allocation record, with a compile id) gives way to the expression
    over it that the same rank's exception names (printed without one); the expression takes
    where the symbol was made. A link's error without an expression gives way likewise."""
    # an exportdb link alone (its message cut) gives way to any expression the rank's log names
    # (a bare link line has no compile id: another key than the records')
    ranks = {x.rank for x in reports if x.what != "unnamed"}
    reports = [x for x in reports if x.what != "unnamed" or x.rank not in ranks]
    made = {(x.rank, x.expr): x.made for x in reports if x.what == "symbol"}
    named = {(x.rank, sym) for x in reports if x.what != "symbol" for sym in symbols_in(x.expr)}
    return [x if x.what == "symbol" or x.made is not None else dataclasses.replace(
        x, made=next((m for sym in sorted(symbols_in(x.expr))
                      if (m := made.get((x.rank, sym))) is not None), None))
        for x in reports if x.what != "symbol" or (x.rank, x.expr) not in named]


def _merged_limit(old: RecompileLimitReport, new: RecompileLimitReport) -> RecompileLimitReport:
    """One frame's limit warnings as one report: the one with a reason (else the first) with
    what it lacks from the other (a paste that began inside the first record keeps its tail)."""
    base, other = (new, old) if new.last_reason and not old.last_reason else (old, new)
    return dataclasses.replace(
        base, limit_name=base.limit_name or other.limit_name, limit=base.limit or other.limit,
        function=base.function or other.function, file=base.file or other.file,
        first_line=base.first_line if base.first_line is not None else other.first_line,
        last_reason=base.last_reason or other.last_reason,
        before_2_2=base.before_2_2 or other.before_2_2,
        reasons_off=base.reasons_off or other.reasons_off)


class Analyzer:
    """Consumes events one at a time; ``result()`` builds the ``Diagnosis``."""

    def __init__(self, trace: bool = False) -> None:
        self._trace = trace  # fed a TORCH_TRACE trace's events (torch 2.3 on writes one)
        self._frames: dict[tuple[int | None, str], _Frame] = {}
        self._compiles: dict[int | None, OrderedDict[str, _Compile]] = {}
        self._recompiles: dict[tuple[int | None, str], RecompileReport] = {}
        self._specs: dict[tuple[int | None, str, str], SpecializationReport] = {}
        # violations whose user line came from torch's User stack, not from a guard
        self._cv_stack: set[tuple[int | None, str, str]] = set()
        # (source, value) -> the key of its first violation row, and of its id-less one
        self._cv_first: dict[tuple[str, str], tuple[int | None, str, str]] = {}
        self._cv_idless: dict[tuple[str, str], tuple[int | None, str, str]] = {}
        self._breaks: dict[tuple[int | None, str, int, str], GraphBreakReport] = {}
        # one report per frame where the warnings carry a compile id (several threads each
        # refused at the limit write one each), else per (limit, function, file, first line)
        self._limits: dict[tuple[Any, ...], RecompileLimitReport] = {}
        self._unbacked: dict[tuple[int | None, str, str], UnbackedReport] = {}
        self._relations: dict[tuple[int | None, str, str, str], Relation] = {}
        self._zero_one: dict[tuple[int | None, str], tuple[int, str]] = {}
        self._data_dependent = 0
        # (rank, compile id) -> the facts of its data-dependent errors (textdde), joined there
        self._dde: dict[tuple[int | None, str], DdeFacts] = {}
        self._guard_errors: list[tuple[int | None, str, str, int]] = []
        self._ranges: dict[tuple[int | None, str, str], RangeViolationReport] = {}
        self._suggested: list[tuple[str, str]] = []
        # frames run eagerly under a dispatch mode: (rank, function, file) -> [count, first line]
        self._mode_skips: dict[tuple[int | None, str, str], list[int]] = {}
        self._not_converted: dict[tuple[int | None, str, str, int | None], NotConvertedReport] = {}
        # frames skipped for a graph break in a loop: (rank, function, file, break line) -> it
        self._loop_skips: dict[tuple[int | None, str, str, int | None], LoopSkipReport] = {}
        # the last skip whose record named no frame (2.0's INFO line), until the next skip
        # record: convert_frame's DEBUG echo right after it names that frame
        self._loop_bare: tuple[int | None, str, str, int | None] | None = None
        # fullgraph calls that compiled nothing, one per distinct list of skipped frames
        self._no_frames: dict[tuple[int | None, tuple[tuple[str, str, int, str], ...]],
                              NoCompiledFramesReport] = {}
        self._self_checks: dict[tuple[int | None, str, str], GuardSelfCheckReport] = {}
        self._refused: set[tuple[int | None, str]] = set()
        self._kinds: set[type] = set()  # event types seen: what level of logging this is
        self._auto_marks = False  # an automatic-dynamic marking was logged (see _from_guards)
        self._static: dict[tuple[int | None, str], dict[int, None]] = {}  # mark_static dims
        self._unnumbered = proven.Unnumbered()  # what records without a compile id prove
        self._raised: list[str] = []  # the limit raised (fullgraph=True): the error lines
        self._raised_at: ev.LimitRaised | None = None  # the first exception line of it
        self._traceback: int | None = None  # the line of the last Python traceback
        self._crashes: dict[tuple[str, str], CompileCrashReport] = {}
        # torch's compile-time table, the last of each process (it logs one, at exit)
        self._metrics: dict[tuple[int | None, int], CompileMetricsReport] = {}
        self._explained: dict[int | None, ExplainCountsReport] = {}  # explain()'s head, per rank
        self._last_cid = ""  # the compile id of the last event that had one
        # the torch versions the input states, each with what states it (a trace's metrics,
        # a pasted collect_env or package list): {version: words}, the first of each
        self._versions: dict[str, str] = {}
        self._dispatch: dict[type, Callable[[Any], None]] = {
            ev.CompileStart: self._on_compile_start, ev.CreateSymbol: self._on_create_symbol,
            ev.CreateUnbacked: self._on_unbacked, ev.GuardAdded: self._on_guard,
            ev.SetReplacement: self._on_replacement, ev.VarToRange: self._on_var_range,
            ev.Specialized: self._on_specialized,
            ev.MarkedDynamic: self._on_marked, ev.Recompile: self._on_recompile,
            ev.RecompileLimit: self._on_limit, ev.GraphBreak: self._on_graph_break,
            ev.TensorMatch: self._on_tensor_match, ev.ShapeGuard: self._on_shape_guard,
            ev.ConstraintViolation: self._on_constraint, ev.DataDependent: self._on_dde,
            ev.RangeViolation: self._on_range, ev.SuggestedFix: self._on_suggested,
            ev.DataDependentError: self._on_dde_error,
            ev.GuardError: self._on_guard_error, ev.ModeSkip: self._on_mode_skip,
            ev.MarkedStatic: self._on_marked_static,
            ev.LimitRaised: self._on_limit_raised,
            ev.Traceback: self._on_traceback, ev.NotConverted: self._on_not_converted,
            ev.LoopSkip: self._on_loop_skip,
            ev.TorchVersion: self._on_torch_version,
            ev.NoCompiledFrames: self._on_no_compiled_frames,
            ev.GuardSelfCheck: self._on_guard_self_check,
            ev.CompileCrash: self._on_compile_crash,
            ev.CompileMetrics: self._on_compile_metrics, te.CompileMetrics: self._on_trace_metrics,
            ev.ExplainCount: self._on_explain_count,
            ev.CreateEnv: self._on_create_env,
        }
        self._cudagraphs = CudagraphAccumulator()  # CUDA-graph events: dyncli.diagnose.cudagraphs
        self._dispatch.update(dict.fromkeys(cg.EVENTS, self._cudagraphs.feed))
        self._notes = NoteAccumulator()  # torch's output that needs no fix: dyncli.diagnose.notes
        self._dispatch[ev.TorchNote] = self._notes.feed
        self._misses = MissAccumulator()  # compiled autograd's captures: dyncli.diagnose.autograd
        self._dispatch[ev.AutogradCacheMiss] = self._misses.feed

    # ------------------------------------------------------------ bookkeeping

    def feed(self, event: ev.Event) -> None:
        """Take one event; unknown event types are ignored (newer parsers, older analysis)."""
        cid = event.compile_id
        if cid is not None and cid.frame is not None:
            self._frame(event.rank, cid).compiles.add(cid.key)
            self._last_cid = str(cid)
        self._kinds.add(type(event))
        handler = self._dispatch.get(type(event))
        if handler is not None:
            handler(event)

    def _speculations_resumed(self, recorded: list[GraphBreakReport],
                              proofs: list[GraphBreakReport]) -> list[GraphBreakReport]:
        """``recorded`` and ``proofs``, a speculate_subgraph record without its place (torch
        2.15 under TORCH_LOGS="dynamo" only) joined with the one resume function of its frame:
        dynamo breaks the frame at the Function's call and resumes after it
        (torch_dynamo_resume_in_fn_at_14 for ``Doubled.apply`` at line 14 of fn). Only where
        the frame has that one speculated record and that one resumed break; otherwise both
        stand (which break the name proves is not in the log)."""
        def frame_of(b: GraphBreakReport) -> _Frame | None:
            keys = {c.frame_key for x in b.compile_ids if (c := ev.CompileId.parse(x))}
            return self._frames.get((b.rank, keys.pop())) if len(keys) == 1 else None

        frames = [frame_of(b) for b in recorded]
        records = Counter(id(f) for f in frames if f is not None)
        out, used = list(recorded), set()
        for i, b in enumerate(recorded):
            frame = frames[i] if not b.file and b.reason.startswith(SPECULATED) else None
            if frame is None or not frame.function or records[id(frame)] != 1:
                continue
            mine = [j for j, p in enumerate(proofs)
                    if p.rank == b.rank and p.function == frame.function
                    and resumed.same_file(p.file, frame.file)]
            if len(mine) != 1 or mine[0] in used:
                continue
            p = proofs[mine[0]]
            used.add(mine[0])
            out[i] = dataclasses.replace(b, file=p.file, user_line=p.user_line,
                                         function=p.function)
        return out + [p for j, p in enumerate(proofs) if j not in used]

    def _frame(self, rank: int | None, cid: ev.CompileId) -> _Frame:
        key = (rank, cid.frame_key)
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = _Frame(rank, key[1])
        return frame

    def _compile(self, event: ev.Event) -> _Compile:
        per_rank = self._compiles.setdefault(event.rank, OrderedDict())
        key = event.compile_id.key if event.compile_id else ""
        comp = per_rank.get(key)
        if comp is None:
            comp = per_rank[key] = _Compile()
            while len(per_rank) > _KEEP_COMPILES:
                per_rank.popitem(last=False)
        else:
            per_rank.move_to_end(key)
        return comp

    def _name_frame(self, event: ev.Event, function: str, file: str, first: int | None,
                    from_user: bool = False) -> None:
        if event.compile_id is None or event.compile_id.frame is None or not function:
            return
        frame = self._frame(event.rank, event.compile_id)
        if frame.function and not (frame.from_user_loc and not from_user):
            return
        frame.function, frame.file, frame.first_line = function, file, first
        frame.from_user_loc, frame.named_at = from_user, event.line

    def _see_user(self, event: ev.Event, user: ev.UserLoc | None, name: bool = True) -> None:
        """A record's user line names its frame only while every line the frame's records name
        is in one function: torch logs the innermost frame of the user's stack
        (symbolic_shapes' _get_stack_summary: TracingContext.extract_stack()'s last frame),
        which is a call inlined into the compiled frame as often as the frame itself
        (pytorch#174704: [8/47] at rmsnorm.py:310 in forward and nn/modules/linear.py:134 in
        forward). A resume function is always the frame itself (torch never inlines one)."""
        if user is None or not user.function or event.compile_id is None \
                or event.compile_id.frame is None:
            return
        frame = self._frame(event.rank, event.compile_id)
        if frame.function and not frame.from_user_loc:
            return  # named by torch's own record of the frame
        # (the file's last part: a paste's paths may be edited apart, pytorch#145587's two
        # records of one line, "nt/ssd1/…/home_dir/misc_experiments/…" and "nt/ssd1/…")
        loc = (user.function, user.file.replace("\\", "/").rsplit("/", 1)[-1])
        if len(frame.user_locs) < 2:
            frame.user_locs.add(loc)
        if frame.from_user_loc and is_resume(frame.function):
            return
        if len(frame.user_locs) > 1 or is_resume(user.function):
            frame.function, frame.file, frame.from_user_loc = "", "", False
        if is_resume(user.function) or (name and len(frame.user_locs) == 1):
            self._name_frame(event, user.function, user.file, None, from_user=True)

    # ------------------------------------------------------------ handlers

    def _on_create_env(self, e: ev.CreateEnv) -> None:
        if e.compile_id is not None and e.compile_id.frame is not None:
            frame = self._frame(e.rank, e.compile_id)
            (frame.backend_ids if e.backend else frame.dynamo_ids).add(e.compile_id.key)

    def _on_compile_start(self, e: ev.CompileStart) -> None:
        self._name_frame(e, e.function, e.file, e.first_line)

    def _on_create_symbol(self, e: ev.CreateSymbol) -> None:
        self._compile(e).symbols[e.symbol] = e.source
        self._see_user(e, e.user)
        # the sizes a recompile was made for: which bound of a size branch failed (issue 21)
        key = (e.rank, e.compile_id.key if e.compile_id else "")
        rec = self._recompiles.get(key)
        if rec is not None and len(rec.sizes) < 64 and e.source and e.value.isdigit() \
                and len(e.value) <= 18:  # a longer number is damage (and int() of it refused)
            self._recompiles[key] = dataclasses.replace(rec, sizes=(*rec.sizes, (e.source, e.value)))

    def _on_unbacked(self, e: ev.CreateUnbacked) -> None:
        key = (e.rank, e.compile_id.key if e.compile_id else "", e.symbol)
        if key not in self._unbacked:
            self._unbacked[key] = UnbackedReport(
                rank=e.rank, compile_id=str(e.compile_id or ""), symbol=e.symbol, kind=e.kind,
                lower=e.lower, upper=e.upper, user=e.user, framework=e.framework)

    def _on_guard(self, e: ev.GuardAdded) -> None:
        self._see_user(e, e.user, name=False)  # (evidence of inlining; names no frame)
        comp = self._compile(e)
        for sym in symbols_in(e.expr):
            if e.user is not None or sym not in comp.guards:
                comp.guards[sym] = e
        if e.forcing_spec:
            syms = sorted(symbols_in(e.expr))
            if syms:
                self._add_spec(e, syms[0], value="", reason="forcing_spec", guard=e)
            return
        pinned = _PIN_RE.match(e.expr)
        if pinned is not None:
            # Eq(s0, 4): the compiled code holds for s0 == 4 only. A full log also logs the
            # replacement (before the guard); a paste of the guard line alone proves it too.
            sym, val = pinned["sym"] or pinned["sym2"], pinned["val"] or pinned["val2"]
            key = (e.rank, e.compile_id.key if e.compile_id else "", sym)
            spec = self._specs.get(key)
            if spec is None:
                self._add_spec(e, sym, val, "guard", guard=e)
            elif spec.user is None and (e.user is not None or not spec.guard):
                # the replacement came first (torch logs it before the guard that made it):
                # the guard says where, the user's line or torch's own (pytorch#135429's
                # executorch pass: Eq(2, s1) in fake_impls.py's conv)
                self._specs[key] = dataclasses.replace(spec, guard=e.expr, user=e.user,
                                                       framework=e.framework)

    def _on_replacement(self, e: ev.SetReplacement) -> None:
        if _INT_RE.match(e.target):
            self._add_spec(e, e.symbol, e.target, e.reason or "replacement")
            return
        if e.reason == "rename_unbacked_to":
            return  # torch renaming its own fresh unbacked symbols: not a relation between inputs
        comp = self._compile(e)
        ckey = e.compile_id.key if e.compile_id else ""
        key = (e.rank, ckey, e.symbol, e.target)
        if key not in self._relations:
            self._relations[key] = Relation(
                rank=e.rank, compile_id=str(e.compile_id or ""), symbol=e.symbol,
                target=e.target, reason=e.reason, lhs=comp.symbols.get(e.symbol, ""),
                rhs=comp.symbols.get(e.target, ""))

    def _on_specialized(self, e: ev.Specialized) -> None:
        # the symbol the source was made as, where +dynamic's create_symbol said it: the same
        # specialization as set_replacement's after it (torch logs this warning first)
        comp = self._compile(e)
        if _SYMBOL_NAME_RE.match(e.what):
            self._add_spec(e, e.what, e.value, "print_specializations")
            return
        symbol = next((sym for sym, src in comp.symbols.items() if src == e.what), "")
        if symbol:
            self._add_spec(e, symbol, e.value, "print_specializations")
            return
        key = (e.rank, e.compile_id.key if e.compile_id else "", e.what)
        if key not in self._specs:
            self._specs[key] = SpecializationReport(
                rank=e.rank, compile_id=str(e.compile_id or ""), symbol="", sources=(e.what,),
                value=e.value, reason="print_specializations", line=e.line)

    def _on_var_range(self, e: ev.VarToRange) -> None:
        if e.lower == e.upper and _INT_RE.match(e.lower) and e.symbol.startswith("s"):
            self._add_spec(e, e.symbol, e.lower, "range_refined_to_singleton")

    def _add_spec(self, e: ev.Event, symbol: str, value: str, reason: str,
                  guard: ev.GuardAdded | None = None) -> None:
        ckey = e.compile_id.key if e.compile_id else ""
        key = (e.rank, ckey, symbol)
        old = self._specs.get(key)
        if old is not None:
            # the guard, or print_specializations' warning, came first: torch's reason says why
            if old.reason in ("guard", "print_specializations") and reason not in ("guard", old.reason):
                self._specs[key] = dataclasses.replace(old, reason=reason, value=value or old.value,
                                                       line=e.line)
            return
        comp = self._compile(e)
        guard = guard or comp.guards.get(symbol)
        source = comp.symbols.get(symbol, "")
        self._specs[key] = SpecializationReport(
            rank=e.rank, compile_id=str(e.compile_id or ""), symbol=symbol,
            sources=(source,) if source else (), value=value, reason=reason,
            guard=guard.expr if guard else "", user=guard.user if guard else None,
            framework=guard.framework if guard else "", line=e.line)

    def _on_marked(self, e: ev.MarkedDynamic) -> None:
        if e.compile_id is None:
            return
        frame = self._frame(e.rank, e.compile_id)
        name = e.source if e.dim is None else f"{e.source}:{e.dim}"
        origin = e.origin or ("dynamic-sources " + e.entry).strip()
        if origin.startswith("automatic"):
            frame.marking[str(e.compile_id)] = None
            self._auto_marks = True
        if name not in frame.dynamic:
            frame.dynamic[name] = DynamicInput(source=name, origin=origin,
                                               compile_id=str(e.compile_id), line=e.line)
        self._compile(e).marked[e.source] = origin

    def _on_recompile(self, e: ev.Recompile) -> None:
        self._name_frame(e, e.function, e.file, e.first_line)
        if e.compile_id is None:
            self._unnumbered.recompile(e)
        key = (e.rank, e.compile_id.key if e.compile_id else f"line {e.line}")
        if key in self._recompiles:
            return
        causes = tuple(str(classify(f.reason)) for f in e.failures)
        self._recompiles[key] = RecompileReport(
            rank=e.rank, compile_id=str(e.compile_id or ""), function=e.function, file=e.file,
            first_line=e.first_line, cause=causes[0] if causes else str(GuardKind.UNKNOWN),
            compiled=not e.refused, refused_by=e.refused,
            reasons=tuple(f.text for f in e.failures),
            causes=causes, kinds=tuple(str(Checked.DUCK if f.duck else checked(f.reason))
                                       for f in e.failures),
            user=next((f.user for f in e.failures if f.user), None)
            or (e.user_stack[-1] if e.user_stack else None),
            unknown_origin=next((f.unknown_origin for f in e.failures if f.unknown_origin), ""),
            line=e.line)

    def _on_limit(self, e: ev.RecompileLimit) -> None:
        self._name_frame(e, e.function, e.file, e.first_line)
        key: tuple[Any, ...]
        failed = proven.failed_entry(e.last_reason) if e.compile_id is None else None
        if e.compile_id is not None:  # this compile id was refused: it never compiled
            self._refused.add((e.rank, e.compile_id.key))  # (see result() for what it proves)
            key = ("frame", e.rank, e.compile_id.frame_key)
        elif failed is not None:
            # a warning without its prefix (pasted bare): the frame is the one of the entry its
            # last reason names, and the entries it proves are that frame's compiles
            self._frame(e.rank, failed).compiles.update(proven.entries(failed, e.limit))
            self._name_frame(dataclasses.replace(e, compile_id=failed), e.function, e.file,
                             e.first_line)
            key = ("frame", e.rank, failed.frame_key)
        else:
            self._unnumbered.limit(e)
            key = ("function", e.rank, e.limit_name, e.function, e.file, e.first_line)
        report = RecompileLimitReport(
            rank=e.rank, compile_id=str(e.compile_id or ""), limit_name=e.limit_name,
            limit=e.limit, function=e.function, file=e.file, first_line=e.first_line,
            last_reason=e.last_reason, line=e.line, before_2_2=e.before_2_2,
            reasons_off=e.reasons_off)
        old = self._limits.get(key)
        self._limits[key] = report if old is None else _merged_limit(old, report)

    def _on_graph_break(self, e: ev.GraphBreak) -> None:
        reason = e.reason.strip()
        key = (e.rank, e.file, e.user_line, reason)
        old = self._breaks.get(key)
        ids = old.compile_ids if old else ()
        cid = str(e.compile_id or "")
        if cid and cid not in ids and len(ids) < _MAX_IDS:
            ids = (*ids, cid)
        # the stack's last frame is the break's place; where the place is not in the log (a
        # record cut short: pytorch#126026), it is the last frame known on the way there
        placed = bool(e.file)
        user = e.user_stack[-1] if e.user_stack and placed else None
        sites = old.call_sites if old else ()
        caller = _caller(e.user_stack) if placed else (
            e.user_stack[-1] if e.user_stack else None)
        site = f"{caller.file}:{caller.line} in {caller.function}" if caller else ""
        if site and site not in sites and len(sites) < _MAX_IDS:
            sites = (*sites, site)
        users = old.user_callers if old else ()
        past = _user_caller(e.user_stack) if placed else None
        at = f"{past.file}:{past.line} in {past.function}" if past else ""
        if at and at not in users and len(users) < _MAX_IDS:
            users = (*users, at)
        self._breaks[key] = GraphBreakReport(
            rank=e.rank, file=e.file, user_line=e.user_line, reason=reason,
            explanation=e.explanation or (old.explanation if old else ""),
            hints=e.hints or (old.hints if old else ()),
            code=(user.code if user else "") or (old.code if old else ""),
            count=(old.count if old else 0) + 1, compile_ids=ids,
            line=old.line if old else e.line,
            gb_type=e.gb_type or (old.gb_type if old else ""),
            gb_code=e.gb_code or (old.gb_code if old else ""), call_sites=sites,
            user_callers=users,
            debug=e.debug or (old.debug if old else ""),
            raised=e.raised or (old.raised if old else False),
            releases=e.releases or (old.releases if old else ""),
            skipped_frame=e.skipped_frame or (old.skipped_frame if old else False))

    def _on_tensor_match(self, e: ev.TensorMatch) -> None:
        self._see_user(e, e.user)
        if e.compile_id is not None and e.compile_id.frame is not None:
            # A dim counts as dynamic if any compile of the frame had it dynamic (size=None);
            # a later compile specialized to 1 must not hide it.
            frame = self._frame(e.rank, e.compile_id)
            dims = frame.dims
            if None in e.sizes and e.source not in frame.dynamic_at:
                frame.dynamic_at[e.source] = (str(e.compile_id), e.line)
            old = dims.get(e.source)
            if old is None or len(old) != len(e.sizes):
                dims[e.source] = e.sizes
            else:
                dims[e.source] = tuple(None if a is None or b is None else b
                                       for a, b in zip(old, e.sizes, strict=True))

    def _from_guards(self, f: _Frame) -> tuple[DynamicInput, ...]:
        """Inputs dynamic in the guards (``size=[None, …]``) of a log that names no
        automatic-dynamic marking: text logs before torch 2.13 have no ``marking … as
        dynamic`` line and traces before 2.6 no ``automatic_dynamic`` event, so the guards are
        the only evidence there."""
        if self._auto_marks:
            return ()
        named = {whole_source(name) for name in f.dynamic}  # "L['x']:0" names L['x'] too
        return tuple(DynamicInput(source=src, origin="dynamic in the guards", compile_id=cid, line=line)
                     for src, (cid, line) in f.dynamic_at.items() if src not in named)

    def _on_shape_guard(self, e: ev.ShapeGuard) -> None:
        if e.zero_one:
            self._zero_one.setdefault((e.rank, e.expr), (e.line, str(e.compile_id or "")))

    def _on_constraint(self, e: ev.ConstraintViolation) -> None:
        # Replaces the plain specialization of the same symbol: one row, the stronger reason.
        # One violation, however many times the log tells it: produce_guards' track_symint
        # line, the E-level "Error while creating guard" record, and the exception's text
        # that the program printed as it ended (no compile id): the first row stays, the later
        # ones add the user's line it lacked, and an id-less row gives way to its compile's.
        ckey = e.compile_id.key if e.compile_id else ""
        comp = self._compile(e)
        symbol = next((s for s, src in comp.symbols.items() if src == e.source), "")
        key = (e.rank, ckey, symbol or "constraint:" + e.source)
        old = self._specs.get(key)
        pair = (e.source, e.value)
        carried: ev.UserLoc | None = None  # the user line of an id-less row this one replaces
        if ckey == "":  # the exception's text of a violation a record told: that row
            same = self._cv_first.get(pair) if old is None else None
            if same is not None and same in self._specs and (
                    same[0] is None or e.rank is None or same[0] == e.rank):
                key, old = same, self._specs[same]
        elif (same := self._cv_idless.pop(pair, None)) is not None and same in self._specs \
                and (same[0] is None or e.rank is None or same[0] == e.rank):
            # a violation first read id-less (the exception pasted before the log): this
            # compile's row replaces it (dicts, not a scan of every row: a log may hold many)
            moved = self._specs.pop(same)
            carried = moved.user if same in self._cv_stack else None
            if self._cv_first.get(pair) == same:
                del self._cv_first[pair]
        if old is not None and old.reason == "constraint_violation":
            if e.user is not None and key not in self._cv_stack:  # torch's own User stack
                self._cv_stack.add(key)
                self._specs[key] = dataclasses.replace(old, user=e.user, message=e.message)
            return
        user = e.user or carried
        if user is not None:
            self._cv_stack.add(key)
        self._cv_first.setdefault(pair, key)
        if ckey == "":
            self._cv_idless.setdefault(pair, key)
        guard = comp.guards.get(symbol) if symbol else None
        self._specs[key] = SpecializationReport(
            rank=e.rank, compile_id=str(e.compile_id or ""), symbol=symbol,
            sources=(e.source,) if e.source else (), value=e.value,
            reason="constraint_violation", guard=guard.expr if guard else "",
            user=user or (guard.user if guard else None),
            framework=guard.framework if guard else "", line=old.line if old else e.line,
            message=e.message)

    def _on_marked_static(self, e: ev.MarkedStatic) -> None:
        dims = self._static.setdefault((e.rank, e.source), {})
        dims.update(dict.fromkeys(e.dims))

    def _on_limit_raised(self, e: ev.LimitRaised) -> None:
        if len(self._raised) < 8 and e.message not in self._raised:
            self._raised.append(e.message)
        if self._raised_at is None and not e.message.startswith("raise "):
            self._raised_at = e

    def _on_traceback(self, e: ev.Traceback) -> None:
        self._traceback = max(e.line, self._traceback or 0)

    def _on_dde(self, e: ev.DataDependent) -> None:
        self._data_dependent += 1

    def _on_guard_error(self, e: ev.GuardError) -> None:
        if len(self._guard_errors) < _MAX_ERRORS:
            self._guard_errors.append((e.rank, str(e.compile_id or ""), e.create_function, e.line))

    def _on_not_converted(self, e: ev.NotConverted) -> None:
        self._name_frame(e, e.function, e.file, e.first_line)
        key = (e.rank, e.function, e.file, e.first_line)
        old = self._not_converted.get(key)
        if old is not None:  # the same frame given up on again: counted, its first error kept
            self._not_converted[key] = dataclasses.replace(
                old, count=old.count + 1, error=old.error or e.error)
        elif len(self._not_converted) < _MAX_ERRORS:
            self._not_converted[key] = NotConvertedReport(
                rank=e.rank, function=e.function, file=e.file, first_line=e.first_line,
                error=e.error, line=e.line, compile_id=str(e.compile_id or ""),
                raised_in=e.raised_in)

    def _on_loop_skip(self, e: ev.LoopSkip) -> None:
        """A frame skipped for a graph break in a loop, once per skip: convert_frame's DEBUG
        echo of the INFO record is the same skip (it adds the frame's first line, and stands
        alone only where the paste has no INFO record). 2.0's INFO record names no frame, and
        its echo, the next skip record, names it: the two are one skip, of the echo's frame."""
        key = (e.rank, e.function, e.file, e.user_line)
        bare, self._loop_bare = self._loop_bare, None
        if e.echo and bare is not None and bare[0] == e.rank and bare in self._loop_skips:
            info = self._loop_skips.pop(bare)
            if info.count > 1:  # earlier skips of no named frame stay as they were read
                self._loop_skips[bare] = dataclasses.replace(info, count=info.count - 1)
            old = self._loop_skips.get(key)
            self._loop_skips[key] = dataclasses.replace(
                old or info, count=(old.count if old else 0) + 1, function=e.function,
                file=e.file, first_line=(old and old.first_line) or e.first_line)
            return
        if not e.echo and not e.function:
            self._loop_bare = key
        old = self._loop_skips.get(key)
        if old is not None:
            self._loop_skips[key] = dataclasses.replace(
                old, count=old.count + (not e.echo), first_line=old.first_line or e.first_line)
        elif len(self._loop_skips) < _MAX_ERRORS:
            self._loop_skips[key] = LoopSkipReport(
                rank=e.rank, function=e.function, file=e.file, user_line=e.user_line,
                first_line=e.first_line, line=e.line, compile_id=str(e.compile_id or ""),
                chained=e.chained)

    def _on_no_compiled_frames(self, e: ev.NoCompiledFrames) -> None:
        key = (e.rank, e.skipped)
        if key not in self._no_frames and len(self._no_frames) < _MAX_ERRORS:
            self._no_frames[key] = NoCompiledFramesReport(rank=e.rank, skipped=e.skipped,
                                                          line=e.line)

    def _on_guard_self_check(self, e: ev.GuardSelfCheck) -> None:
        key = (e.rank, e.entry, e.reason)
        if key not in self._self_checks and len(self._self_checks) < _MAX_ERRORS:
            self._self_checks[key] = GuardSelfCheckReport(rank=e.rank, entry=e.entry,
                                                          reason=e.reason, line=e.line)

    def _on_trace_metrics(self, e: te.CompileMetrics) -> None:
        # (the rest of a trace's metrics is dyncli.diagnose.trace's)
        if e.torch_version and len(self._versions) < _MAX_VERSIONS:
            v = e.torch_version[:64]
            self._versions.setdefault(v, f"the trace's compilation_metrics (pytorch_version {v})")

    def _on_torch_version(self, e: ev.TorchVersion) -> None:
        if len(self._versions) < _MAX_VERSIONS:
            self._versions.setdefault(e.version, torch_releases.stated_words(e))

    def _on_compile_metrics(self, e: ev.CompileMetrics) -> None:
        if (e.rank, e.pid) in self._metrics or len(self._metrics) < _MAX_ERRORS:
            self._metrics[(e.rank, e.pid)] = compile_metrics.report(e)

    def _on_explain_count(self, e: ev.ExplainCount) -> None:
        if e.rank in self._explained or len(self._explained) < _MAX_ERRORS:
            was = self._explained.get(e.rank) or ExplainCountsReport(rank=e.rank, line=e.line)
            field = "graph_count" if e.what == "graphs" else "graph_break_count"
            self._explained[e.rank] = dataclasses.replace(was, **{field: e.count})

    def _on_compile_crash(self, e: ev.CompileCrash) -> None:
        key = (e.error, str(e.at))
        if key not in self._crashes and len(self._crashes) < _MAX_ERRORS:
            self._crashes[key] = CompileCrashReport(
                rank=e.rank, error=e.error, cause=e.cause, cut=e.cut, at=e.at,
                deepest=e.deepest, user=e.user, resumes=e.resumes, kernel=e.kernel,
                compile_id=self._last_cid, cudagraph_run=e.cudagraph_run, graph_run=e.graph_run,
                went_on=e.went_on, begun=e.begun, headless=e.headless, line=e.line)

    def _dde_raised(self, facts: DdeFacts, inputs: tuple[str, ...]) -> bool:
        """Whether the log shows a data-dependent error leave torch: a fact of the error's own
        (its message, a traceback of it, dynamo's or export's report), or a Python traceback
        after torch's log of it (one input: the lines of several do not say which came
        after which). torch's logged-and-re-raised record alone does not (pytorch#134421:
        export caught it, trying an operator's overloads)."""
        return facts.shown or (self._traceback is not None and (
            len(inputs) > 1 or self._traceback > facts.first))

    def _evaluate_failures(self, during: dict[tuple[int | None, str], bool | None]) -> None:
        """torch's logs of a failed evaluate_expr (recording.py's record, symbolic_shapes'
        warning) that the compile's facts do not prove a data-dependent error's
        (``DdeFacts.failures``): notes of a ShapeEnv call that raised, as recording.py's
        records of other calls are (``notes.SHAPE_ENV``), saying what the log shows of it."""
        for (rank, cid), facts in self._dde.items():
            for expr, line, said in facts.failures(during[(rank, cid)]):
                self._notes.feed(ev.TorchNote(kind=SHAPE_ENV, what="evaluate_expr", line=line,
                                              rank=rank, text=f"evaluate_expr({expr}), {said}"))

    def _crashes_told(self, dde: bool) -> tuple[CompileCrashReport, ...]:
        """The crashes; a traceback the paste cut before its exception only where no other
        record reads the compile's failure (``dde``: a data-dependent error is read; a
        GuardOnDataDependentSymNode's message, then its traceback cut short)."""
        failed = bool(dde or self._data_dependent or self._guard_errors or self._raised
                      or self._self_checks or self._not_converted or self._no_frames)
        return tuple(x for x in self._crashes.values() if x.error or not failed)

    def _on_mode_skip(self, e: ev.ModeSkip) -> None:
        seen = self._mode_skips.get((e.rank, e.function, e.file))
        if seen is not None:
            seen[0] += 1
        elif len(self._mode_skips) < _MAX_ERRORS:
            self._mode_skips[(e.rank, e.function, e.file)] = [1, e.line]

    def _on_range(self, e: ev.RangeViolation) -> None:
        # one row per (rank, source): torch lists each guard the range fails as an item, and
        # the same items again where the exception's text follows its record
        key = (e.rank, e.source, e.dim)
        old = self._ranges.get(key)
        if old is None:
            if len(self._ranges) >= _MAX_ERRORS:
                return
            self._ranges[key] = RangeViolationReport(
                rank=e.rank, compile_id=str(e.compile_id or ""), source=e.source, dim=e.dim,
                range=e.range, guards=(e.guard,) if e.guard else (), user=e.user, line=e.line)
            return
        guards = old.guards if not e.guard or e.guard in old.guards or \
            len(old.guards) >= _MAX_IDS else (*old.guards, e.guard)
        self._ranges[key] = dataclasses.replace(
            old, guards=guards, compile_id=old.compile_id or str(e.compile_id or ""),
            range=old.range or e.range, user=old.user or e.user)

    def _on_suggested(self, e: ev.SuggestedFix) -> None:
        if (e.name, e.value) not in self._suggested and len(self._suggested) < _MAX_IDS:
            self._suggested.append((e.name, e.value))

    def _on_dde_error(self, e: ev.DataDependentError) -> None:
        key = (e.rank, str(e.compile_id or ""))
        facts = self._dde.get(key)
        if facts is None:
            if len(self._dde) >= _MAX_ERRORS:
                return
            facts = self._dde[key] = DdeFacts()
        facts.add(e)

    # ------------------------------------------------------------ result


    def result(self, stats: ev.ParseStats | None = None,
               inputs: Iterable[str] = ()) -> Diagnosis:
        """Build the Diagnosis from everything fed so far (suggestions included)."""
        inputs = tuple(inputs)
        refused_by_rank: dict[int | None, set[str]] = {}
        for rank, key in self._refused:
            refused_by_rank.setdefault(rank, set()).add(key)
        limits = {(key[1], key[2]): x for key, x in self._limits.items() if key[0] == "frame"}
        for f in self._frames.values():
            denied = {k for k in refused_by_rank.get(f.rank, set())
                      if k.rpartition("/")[0] == f.frame_id}
            limit = limits.get((f.rank, f.frame_id))
            # a record at [F/N] proves F/0..F/N-1, whether the log shows them or not; but not
            # past a frame's refusals when there are several (threads refused side by side)
            seen = f.compiles
            at_limit = (limit.limit, limit.last_reason) if limit else ("", "")
            f.compiles = proven.compiled(f.frame_id, seen, denied, *at_limit)
            if only := f.backend_ids - f.dynamo_ids:  # ids only the backend's records show
                f.backend_proven = len(f.compiles - proven.compiled(
                    f.frame_id, seen - only, denied, *at_limit))
        refused = {(rank, key) for rank, key in self._refused}
        self._recompiles = {k: dataclasses.replace(r, compiled=False) if k in refused else r
                            for k, r in self._recompiles.items()}
        files = {f.file for f in self._frames.values()} | {r.file for r in self._recompiles.values()} \
            | {b.file for b in self._breaks.values()}
        resolve = _resolver(files)
        frames = tuple(
            FrameReport(
                rank=f.rank, frame_id=f.frame_id, function=f.function, file=_resolved(resolve, f.file),
                first_line=f.first_line, compiles=len(f.compiles),
                compile_ids=tuple(sorted(f.compiles, key=compile_id_key)),
                dynamic_inputs=tuple(f.dynamic.values()) + self._from_guards(f),
                dynamic_dims=tuple((src, tuple(i for i, s in enumerate(sizes) if s is None))
                                   for src, sizes in sorted(f.dims.items())
                                   if any(s is None for s in sizes)),
                marking_compiles=tuple(f.marking), backend_proven=f.backend_proven)
            for f in sorted(self._frames.values(), key=lambda f: (rank_key(f.rank),
                                                                   compile_id_key(f.frame_id))))
        frames += tuple(self._unnumbered.frames({(f.rank, f.function) for f in frames}))
        by_frame = {(f.rank, f.frame_id): f for f in frames}
        level = _level_of(self._kinds)
        named = {(f.rank, f.frame_id): f for f in frames if f.function and f.frame_id != "?"}

        def _named(r: RecompileReport) -> RecompileReport:
            # a record the paste began inside names no function: its frame's other records may
            # (kjnodes#446: "2 recompile(s) of ?, forward", both of frame 0)
            cid = ev.CompileId.parse(r.compile_id) if not r.function and r.compile_id else None
            frame = named.get((r.rank, cid.frame_key)) if cid is not None else None
            return dataclasses.replace(r, function=frame.function, file=frame.file) \
                if frame is not None else r

        recompiles = tuple(sorted((dataclasses.replace(_named(r), user=resolve(r.user))
                                   for r in self._recompiles.values()),
                                  key=lambda r: (rank_key(r.rank), compile_id_key(r.compile_id))))
        specs = tuple(sorted((dataclasses.replace(s, user=resolve(s.user))
                              for s in self._specs.values()),
                             key=lambda s: (rank_key(s.rank), s.line)))
        recorded = _one_break_per_speculation(_one_break_per_builtin(self._breaks.values()))
        # breaks proven by the names of the functions torch resumed after them
        evidence: list[resumed.Named] = [
            (x.rank, x.function, x.file, x.first_line, x.line) for x in self._limits.values()]
        evidence += [(x.rank, x.function, x.file, x.first_line, x.line)
                     for x in self._recompiles.values()]
        evidence += [(x.rank, x.function, x.file, x.first_line, x.line)
                     for x in self._not_converted.values()]
        evidence += [(x.rank, x.function, x.file, x.first_line, x.line)
                     for x in self._loop_skips.values() if x.function]
        evidence += [(f.rank, f.function, _resolved(resolve, f.file), f.first_line, f.named_at)
                     for f in self._frames.values()]
        evidence += [(f.rank, f.function, f.file, f.first_line, 0)
                     for f in frames if f.frame_id == "?"]
        evidence += [(x.rank, r.function, r.file, None, x.line)
                     for x in self._crashes.values() for r in x.resumes]
        evidence += self._cudagraphs.resumed()  # the stacks of CUDA-graph skips
        proofs = resumed.proven_breaks(evidence, recorded)
        breaks = tuple(sorted(self._speculations_resumed(recorded, proofs),
                              key=lambda b: (rank_key(b.rank), b.line)))
        releases = torch_releases.judge(((b.releases, bool(b.debug)) for b in breaks),
                                        self._versions.items(), trace=self._trace)
        during = {key: facts.during_is_dde(releases) for key, facts in self._dde.items()}
        self._evaluate_failures(during)
        dde_reports = tuple(dataclasses.replace(x, user=resolve(x.user)) for x in _joined_symbols(
            [x for (rank, cid), facts in self._dde.items()
             for x in facts.reports(rank, cid, self._dde_raised(facts, inputs),
                                    during[(rank, cid)])]))
        diag = Diagnosis(
            inputs=tuple(inputs), frames=frames, recompiles=recompiles,
            specializations=specs, graph_breaks=breaks,
            recompile_limits=_limits_told_once(self._limits.values())
            or _limit_of_exception(self._raised_at),
            unbacked=tuple(self._unbacked.values()), relations=tuple(self._relations.values()),
            # the frames' own inputs only: what `dyncli suggest` gives by default (module
            # attributes and parameters are left out there too; their advice names a flag)
            dynamic_sources=tuple(x for x in advice.dynamic_sources(frames, recompiles)
                                  if is_input(without_dim(x))),
            zero_one_guards=tuple((rank, expr, cid) for (rank, expr), (_, cid)
                                  in self._zero_one.items()),
            data_dependent=self._data_dependent,
            # the exception's own line over a traceback's "raise FailOnRecompileLimitHit("
            limit_raised=tuple(m for m in self._raised if not m.startswith("raise "))
            or tuple(self._raised),
            # a traceback after a limit's warning: the program raised after it (one input:
            # line numbers of several inputs do not say which came after which)
            stopped_after_limit=self._traceback if self._traceback is not None
            and len(inputs) <= 1 and any(self._traceback > x.line for x in self._limits.values())
            else None,
            guard_errors=tuple(self._guard_errors),
            mode_skips=tuple((rank, fn, file, n, line) for (rank, fn, file), (n, line)
                             in self._mode_skips.items()),
            not_converted=tuple(self._not_converted.values()),
            loop_skips=tuple(self._loop_skips.values()),
            no_compiled_frames=tuple(self._no_frames.values()),
            guard_self_checks=tuple(self._self_checks.values()),
            compile_crashes=self._crashes_told(bool(dde_reports)),
            compile_metrics=tuple(sorted(self._metrics.values(), key=lambda x: rank_key(x.rank))),
            explain_counts=tuple(sorted(self._explained.values(), key=lambda x: rank_key(x.rank))),
            range_violations=tuple(dataclasses.replace(x, user=resolve(x.user))
                                   for x in self._ranges.values()),
            suggested_fixes=tuple(self._suggested),
            data_dependent_errors=dde_reports,
            ranks=tuple(sorted({f.rank for f in frames}, key=rank_key)),
            stats=stats or ev.ParseStats(), log_level=level, richer_log=richer(level, releases),
            marked_static=tuple((rank, src, tuple(sorted(dims)))
                                for (rank, src), dims in self._static.items()),
            cudagraphs=self._cudagraphs.finish(frames), torch_notes=self._notes.finish(),
            autograd_misses=self._misses.finish(),
            releases=releases)
        # (torch's output explained first among the notes: a paste's own subject, before
        # unexplained recompiles that only its compile ids prove, pytorch#150980)
        return diag.with_suggestions(tuple(torch_note_findings(diag))
                                     + advice.advise(diag, by_frame) + branches.advise(diag)
                                     + cudagraph_advice(diag) + tuple(autograd_findings(diag)))


# ({trace}: " (or TORCH_TRACE)" where the log's releases read it: richer())
_RICHER = {
    "warnings": ("torch's default warnings name only the last reason of a function that hit "
                 'the recompile limit; TORCH_LOGS="recompiles" shows every recompile, and '
                 'TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks"{trace} also '
                 "what specializes each size"),
    "recompiles": ('TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks"{trace} would '
                   "also show what specializes each size (so mark_dynamic, not only "
                   "maybe_mark_dynamic, can be advised) and what automatic dynamic marked"),
    "guards": "TORCH_LOGS=+dynamic{trace} would also show what specializes each size",
    "dynamic": ("TORCH_TRACE would also give compile times, similar graphs and the PGO state "
                "(dyncli suggest --from-trace)"),
}


def richer(level: str, known: torch_releases.Releases | None) -> str:
    """What a richer log would show (``_RICHER``), in what the log's releases ``known`` read:
    TORCH_TRACE from 2.3, TORCH_LOGS from 2.1 (releases.FIRST); torch 2.0 reads neither, and a
    rerun on a later torch is what shows more there."""
    text = _RICHER.get(level, "")
    if not text:
        return ""
    logs, trace = (torch_releases.named(api, known) for api in ("TORCH_LOGS", "TORCH_TRACE"))
    if logs is None:
        return (f"the log's {known.text if known else 'torch'} reads neither TORCH_LOGS (torch "
                f"2.{torch_releases.FIRST['TORCH_LOGS']} on) nor TORCH_TRACE "
                f"(2.{torch_releases.FIRST['TORCH_TRACE']} on): a rerun on a later torch with "
                'TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" would show what '
                "specializes each size")
    if trace is None and "{trace}" not in text:
        return ""  # (what only a trace gives)
    return text.format(trace=" (or TORCH_TRACE)" if trace else "")


def _level_of(kinds: set[type]) -> str:
    if kinds & {ev.CreateSymbol, ev.GuardAdded, ev.SetReplacement}:
        return "dynamic"
    if kinds & {ev.TensorMatch, ev.ShapeGuard}:
        return "guards"
    if kinds & {ev.Recompile, ev.GraphBreak}:
        return "recompiles"
    return "warnings" if ev.RecompileLimit in kinds else ""


def _resolver(files: set[str]) -> Callable[[ev.UserLoc | None], ev.UserLoc | None]:
    """Resolve the shortened paths torch prints in guard comments (``wt/i21/prog.py``, cut
    at a few directories) against the frames' own absolute files (``/work/wt/i21/prog.py``)."""
    absolute = sorted(f for f in files if f.startswith("/"))

    def resolve(user: ev.UserLoc | None) -> ev.UserLoc | None:
        if user is None or not user.file or user.file.startswith("/"):
            return user
        tail = "/" + user.file
        # (a file whose only common directory with torch's is "/" loses that and its first
        # letter: torch's shorten_filename cuts len(commonpath) + 1 characters, /tmp -> "mp")
        match = [f for f in absolute if f.endswith(tail) or (
            f.endswith(user.file) and len(f) == len(user.file) + 2)]
        return dataclasses.replace(user, file=match[0]) if len(match) == 1 else user

    return resolve


def _resolved(resolve: Callable[[ev.UserLoc | None], ev.UserLoc | None], file: str) -> str:
    """A frame's file, resolved like a guard comment's (a frame named only from one)."""
    if not file or file.startswith("/"):
        return file
    found = resolve(ev.UserLoc(file, 0, ""))
    return found.file if found is not None else file


def analyze(events: Iterable[ev.Event], stats: ev.ParseStats | None = None,
            inputs: Iterable[str] = (), registry: RegistryLoader = no_registry) -> Diagnosis:
    """Run the whole analysis over an iterable of events (streamed, bounded memory), and
    conclude it (``registry``: see ``dyncli.diagnose.conclude``)."""
    analyzer = Analyzer()
    for event in events:
        analyzer.feed(event)
    return conclude(analyzer.result(stats=stats, inputs=inputs), registry)


def _caller(stack: tuple[ev.UserLoc, ...]) -> ev.UserLoc | None:
    """The frame that reached a break placed at ``stack``'s last frame: the one under it, past
    torch's polyfills in between, which are its stand-ins for the builtins the code called (a
    2.15 log: the code's ``operator.countOf(arrays, a)`` runs polyfills/operator.py's countOf,
    which calls sum(), polyfills/builtins.py's, which runs countOf's generator, where an array's
    ``==`` breaks): the code's call is the one to name. Where the log shows only polyfills
    under the break, the one under it."""
    under = stack[:-1]
    return next((f for f in reversed(under) if not is_polyfill_file(f.file)),
                under[-1] if under else None)


def _user_caller(stack: tuple[ev.UserLoc, ...]) -> ev.UserLoc | None:
    """The user's frame that reached a break placed at ``stack``'s last frame through torch's
    own code in between, or None where the frame under the break is not torch's. torch 2.15's
    record of a break in an autograd.Function's forward dynamo inlined: ``fn`` line 14 (the
    ``.apply``), then torch/_functorch/autograd_function.py's ``inner``, then ``forward``; the
    break resumes ``fn`` after line 14 (torch_dynamo_resume_in_fn_at_14)."""
    under = stack[:-1]
    if not under or not is_torch_file(under[-1].file):
        return None
    return next((f for f in reversed(under) if not is_torch_file(f.file)), None)

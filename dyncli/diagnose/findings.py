"""What diagnose concludes: findings (``Advice``), root causes (``Cause``), graph breaks.

Frozen results, computed once by the pipeline (``dyncli.diagnose.conclude``) and stored on the
``Diagnosis``. A finding carries its structure as typed fields, set by the rule that made it:
the allow-list entries it is about, the config flag its fix sets, the user lines it names, the
compiled function, the rule's own key. ``dyncli.diagnose.causes`` groups findings by those
fields only; ``message`` and ``fix`` are sentences for people.

A new kind of finding is one more ``AdviceKind`` member and a rule that returns it (see
docs/diagnose.md, "How a rule plugs in"); a finding that leads to a cause of its own kind (as
zero-one or non-shape findings do) adds a ``CauseKind`` member and a row in
``dyncli.diagnose.causes.OWN_CAUSE``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dyncli.logparse.events import UserLoc


class AdviceKind(StrEnum):
    """A finding's kind: its ``kind`` in ``--json`` (docs/diagnose.md lists each rule)."""

    MARK_DYNAMIC = "mark-dynamic"
    SIZE_PINNED = "size-pinned"
    MARK_DYNAMIC_DIMS_CHANGED = "mark-dynamic-dims-changed"
    MARK_STATIC = "mark-static"
    CONSTRAINT_VIOLATION = "constraint-violation"
    FRAMEWORK_SPECIALIZATION = "framework-specialization"
    USER_SPECIALIZATION = "user-specialization"
    GUARD_LIMIT_SPECIALIZATION = "guard-limit-specialization"
    SCALAR_RECOMPILE = "scalar-recompile"
    STATIC_PARAMETERS = "static-parameters"
    ZERO_ONE = "zero-one-specialization"
    NON_SHAPE = "non-shape-recompile"
    RECOMPILE_LIMIT = "recompile-limit"
    UNEXPLAINED = "unexplained-recompiles"
    DATA_DEPENDENT = "data-dependent-error"
    GUARD_ERROR = "guard-creation-error"
    GUARD_SELF_CHECK = "guard-self-check"
    COMPILE_CRASH = "compile-crash"
    MODE_SKIP = "dispatch-mode-skip"
    NOT_CONVERTED = "frame-not-compiled"
    LOOP_SKIP = "loop-break-skip"  # a frame skipped for a graph break in a loop (2.0-2.10)
    NO_COMPILED_FRAMES = "fullgraph-compiled-nothing"
    DUCK_SIZING = "duck-sizing"
    GRAPH_BREAK = "graph-break"
    SIZE_BRANCH = "size-branch"
    COMPILED_AUTOGRAD = "compiled-autograd-recompile"  # the backward captured again (autograd)
    COMPILE_TIME = "compile-time"  # torch's compile-time table at exit (compile_metrics)
    # from a TORCH_TRACE only (dyncli.diagnose.trace)
    SIMILAR_GRAPHS = "similar-graphs"
    PGO_RECOMPILE = "pgo-recompile"
    PGO_ALLOW_LIST = "pgo-allow-list"
    RANK_DIVERGENCE = "rank-divergence"
    # CUDA graphs under reduce-overhead (dyncli.diagnose.cudagraph_advice)
    CUDAGRAPH_SIZES = "cudagraph-sizes"
    CUDAGRAPH_SKIP = "cudagraph-skip"
    CUDAGRAPH_ERROR = "cudagraph-error"
    # notes on torch's own output, nothing to fix (dyncli.diagnose.notes)
    AUTOTUNE_OUTPUT = "autotune-output"  # max-autotune's tuning report, failed candidates
    EMPTY_CUDAGRAPH = "empty-cudagraph"  # a CUDA graph captured without a kernel
    GEMM_TEMPLATES_OFF = "gemm-templates-off"  # too few SMs for inductor's GEMM templates
    SYMPY_RECURSION = "sympy-recursion"  # sympy hit the recursion limit; torch went on
    BACKWARD_DEFERRED = "backward-deferred"  # a backward compile torch suppressed, redone later
    AUTO_DIM_SPECIALIZED = "auto-dim-specialized"  # a Dim.AUTO size export kept at 0 or 1
    SHAPE_ENV_FAILED = "shape-env-failed"  # a ShapeEnv call raised; recording.py re-raised it
    BACKEND_KWARGS_IGNORED = "backend-kwargs-ignored"  # cudagraphs backend dropped mode/options
    FLEX_ATTENTION_EAGER = "flex-attention-eager"  # flex_attention ran unfused, uncompiled


@dataclass(frozen=True, slots=True)
class Site:
    """A line of code: ``file:line``."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def sites_of(*users: UserLoc | None) -> tuple[Site, ...]:
    """The lines of user-code locations, as a finding's ``sites`` (those without a file left out)."""
    return tuple(Site(u.file, u.line) for u in users if u is not None and u.file and u.line)


def place(u: UserLoc) -> str:
    """``file:line``; ``file in function`` for a place a paste lost the line of (a stack
    without line numbers: comfyui#6866)."""
    return f"{u.file}:{u.line}" if u.line else f"{u.file} in {u.function or '?'}"


@dataclass(frozen=True, slots=True)
class ConfigFlag:
    """A torch config flag a fix sets: ``torch._dynamo.config.<name> = <value>``."""

    name: str
    value: str
    module: str = "torch._dynamo.config"
    title: str = ""  # its cause's title ("static by default: NAME" without one)

    def __str__(self) -> str:
        return f"{self.module}.{self.name} = {self.value}"


@dataclass(frozen=True)
class Advice:
    """One finding: what to do (``message``, ``fix``: for people), the log lines that show it,
    and the structure the rule knew when it wrote them (for ``causes``)."""

    kind: AdviceKind
    message: str
    evidence: tuple[str, ...] = ()
    fix: str = ""
    rank: int | None = None
    # Allow-list entries (``L['x']:0``, ``L['n']``, ``.*:0``) the finding is about; ``listed``:
    # its fix prints them as TORCH_COMPILE_DYNAMIC_SOURCES (the rule decided a list helps).
    entries: tuple[str, ...] = ()
    listed: bool = False
    inputs: tuple[str, ...] = ()  # the sources it decides about (``L['x']:0``, ``L['n']``…)
    flag: ConfigFlag | None = None  # the config flag the fix sets
    sites: tuple[Site, ...] = ()  # the lines it is about (user code first), in its order
    function: str = ""  # the compiled function it is about, where it is about one
    key: str = ""  # the rule's own identity of the thing it is about (a break's code…)
    # the log cannot tell what fixes it: the fix names the richer log that would
    needs_richer_log: bool = False
    # the frame (its id, ``?`` for one without) whose compiles the finding proves: a limit
    # warning at [F/N] proves N compiles of F that no recompile record of the log claims
    frame: str = ""
    frame_line: int | None = None  # a frame ``?``'s first line: which of two of one name
    # CUDA-graph recordings it is about, and their seconds (a trace's CUDAGraphNode.record
    # spans; None: no time for them): the cost of a cudagraph cause
    recordings: int = 0
    record_s: float | None = None
    # an error raised as the compiled graph ran (the CUDA-graph trees), not by a compile: a
    # compile-crash traceback through them, or a cudagraph-error the log shows raised; the
    # program stopped on it
    ran: bool = False
    # of those, one the traceback shows run through AOTAutograd's run-time wrapper, with no
    # CUDA-graph trees in it (a compile-crash's graph_run)
    graph_ran: bool = False
    # a graph break torch raised as an exception (fullgraph=True): the program stopped on it
    stopped: bool = False
    # torch.compile refused the machine (Windows, the Python version) before compiling
    # anything: a crash of the program, not a failed compile
    refused: bool = False
    # compiled autograd's captures of the backward the finding proves, each with the forward
    # recompile it followed ("" for none): (``!N``, compile id); their compiles are its cost
    autograd: tuple[tuple[str, str], ...] = ()
    # a note: what the log shows, nothing there to fix (``Diagnosis.notes``): said under
    # Notes, never a root cause
    note: bool = False

    def to_json(self) -> dict[str, Any]:
        """One item of ``suggestions`` (and of a cause's ``findings``) in ``--json``."""
        return {"kind": str(self.kind), "message": self.message, "fix": self.fix,
                "evidence": list(self.evidence), "rank": self.rank}


class CauseKind(StrEnum):
    """What a root cause is: its ``kind`` in ``--json``."""

    ALLOW_LIST = "allow-list"
    USER_CODE = "user-code"
    CONFIG = "config"
    GRAPH_BREAK = "graph-break"
    ZERO_ONE = "zero-one"
    NON_SHAPE = "non-shape"
    CUDAGRAPH = "cudagraph"
    # compiled autograd's backward captured again for changed sizes or a new node
    COMPILED_AUTOGRAD = "compiled-autograd"
    # every compile and break of it in a package called for its side effects (plotting,
    # logging: dyncli.diagnose.side_libraries): one fix, keep the call out of compiled code
    LIBRARY = "library"
    OTHER = "other"


@dataclass(frozen=True)
class Cause:
    """One fix and everything it would remove (``dyncli.diagnose.causes``)."""

    key: str
    kind: CauseKind
    title: str = ""
    fix: str = ""
    compile_ids: tuple[tuple[int | None, str], ...] = ()
    recompiles: int = 0
    graph_breaks: int = 0
    compile_s: float | None = None
    findings: tuple[Advice, ...] = ()
    entries: tuple[str, ...] = ()  # allow-list entries (allow-list causes)
    ranks: tuple[int | None, ...] = ()

    @property
    def compiles(self) -> int:
        """Compiles the fix would remove."""
        return len(self.compile_ids)

    @property
    def recordings(self) -> int:
        """CUDA-graph recordings the fix would spare (its findings')."""
        return sum(a.recordings for a in self.findings)

    @property
    def record_s(self) -> float | None:
        """Seconds of those recordings (None when none has a time)."""
        times = [a.record_s for a in self.findings if a.record_s is not None]
        return sum(times) if times else None

    @property
    def stops(self) -> bool:
        """The program stopped on it: torch's compiler raised (a compile-crash finding, a
        graph break raised as an error), or the compiled graph as it ran under CUDA graphs
        (its ``ran``)."""
        return any(a.kind is AdviceKind.COMPILE_CRASH or a.ran or a.stopped
                   for a in self.findings)

    @property
    def runs_eagerly(self) -> bool:
        """A frame torch skipped or gave up on (every such call runs uncompiled)."""
        return any(a.kind in (AdviceKind.MODE_SKIP, AdviceKind.NOT_CONVERTED, AdviceKind.LOOP_SKIP)
                   for a in self.findings)

    def ranks_said(self, seen: Sequence[int | None]) -> str:
        """``"rank 0: "`` where the input has ranks ``seen`` and the cause is on some of them
        only (two ranks' like causes read as one listed twice without it); else ``""``."""
        mine = [r for r in self.ranks if r is not None]
        every = {r for r in seen if r is not None}
        if len(every) < 2 or not mine or every <= set(mine):
            return ""
        shown = ", ".join(map(str, mine[:8])) + (f", … ({len(mine)} in all)" if len(mine) > 8
                                                 else "")
        return f"{'rank' if len(mine) == 1 else 'ranks'} {shown}: "

    def line(self, ranks: Sequence[int | None] = ()) -> str:
        """The one-line summary: cost, what (on which ranks, of ``ranks``), fix."""
        cost = (f"{self.compile_s:.2f} s, " if self.compile_s is not None else "") + \
            f"{self.compiles} compile(s)"
        errors = sum(1 for a in self.findings if a.kind is AdviceKind.DATA_DEPENDENT)
        # a guard torch could not make, a mark_dynamic torch could not keep: the compile raised
        failed = sum(1 for a in self.findings
                     if a.kind in (AdviceKind.GUARD_ERROR, AdviceKind.GUARD_SELF_CHECK,
                                   AdviceKind.CONSTRAINT_VIOLATION, AdviceKind.COMPILE_CRASH)
                     and not a.ran and not a.refused)
        if not self.compiles and any(a.kind is AdviceKind.MODE_SKIP for a in self.findings):
            cost = "never compiled"  # every call ran eagerly
        elif not self.compiles and self.runs_eagerly:
            cost = "runs eagerly"  # torch gave up compiling it
        elif not self.compiles and any(a.kind is AdviceKind.NO_COMPILED_FRAMES
                                       for a in self.findings):
            cost = "compiled nothing, raised"  # a fullgraph call: the program stopped
        elif not self.compiles and any(a.kind is AdviceKind.CUDAGRAPH_ERROR
                                       or (a.ran and not a.graph_ran) for a in self.findings):
            cost = "CUDA-graph error"  # the graphs failed as they ran: not a compile's cost
        elif not self.compiles and any(a.graph_ran for a in self.findings):
            cost = "error as the graph ran"  # raised at run time: not a compile's cost
        elif not self.compiles and self.findings and all(
                a.kind is AdviceKind.CUDAGRAPH_SKIP for a in self.findings):
            cost = "ran without CUDA graphs"
        elif not self.compiles and not (errors or failed) \
                and any(a.refused for a in self.findings):
            cost = "refused before compiling"  # torch.compile refused the platform
        elif (errors or failed) and not self.compiles:  # the compile it stopped, not counted
            cost = ", ".join(x for x in (f"{errors} data-dependent error(s)" if errors else "",
                                         f"{failed} failed compile(s)" if failed else "") if x)
        if self.graph_breaks:
            cost += f", {self.graph_breaks} graph break(s)"
        captures = sum(len(a.autograd) for a in self.findings)
        if captures:  # compiled autograd's captures of the backward (their compiles: above)
            cost += f", {captures} backward capture(s)"
        if self.recordings:
            secs = self.record_s
            cost += f", {self.recordings} CUDA-graph recording(s)" + (
                f" ({secs * 1e3:.2f} ms)" if secs is not None else "")
        return (f"[{cost}] {self.ranks_said(ranks)}{self.title}"
                + (f" — fix: {self.fix}" if self.fix else ""))

    def to_json(self, rank: int) -> dict[str, Any]:
        """One item of the ``causes`` list of ``--json``."""
        return {
            "rank": rank, "key": self.key, "kind": str(self.kind), "title": self.title,
            "fix": self.fix,
            "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
            "compiles": self.compiles, "recompiles": self.recompiles,
            "graph_breaks": self.graph_breaks,
            # a cudagraph cause's cost (only there: the other causes' documents are unchanged)
            **({"recordings": self.recordings,
                "record_s": None if self.record_s is None else round(self.record_s, 6)}
               if self.recordings else {}),
            "compile_ids": [{"rank": r, "compile_id": c} for r, c in self.compile_ids],
            "ranks": list(self.ranks),
            "findings": [a.to_json() for a in self.findings],
        }


# a raised break's mark in the graph-break tables, under torch's words (its cause says how)
RAISED_MARK = "raised as an error: the program stopped on it"


@dataclass(frozen=True)
class DistinctBreak:
    """One graph break: torch's code and words, where in user code, how often, what it split."""

    code: str  # GB0025, or "" when neither the log nor the registry names it
    known: bool  # the registry the pipeline was given knows the code
    gb_type: str
    explanation: str
    hints: tuple[str, ...]
    file: str
    line: int
    user_code: str
    count: int
    call_sites: tuple[str, ...]
    frames: tuple[str, ...]  # "function (frame id)" of the frames the break split
    compile_ids: tuple[str, ...]
    ranks: tuple[int | None, ...]
    function: str = ""  # the function that broke, where only a resume function's name says
    debug: str = ""  # torch's "Developer debug context" (2.7 on), text from the log
    # one of its breaks was raised (fullgraph=True, error_on_graph_break): the program stopped
    raised: bool = False

    @property
    def said(self) -> str:
        """Its type and torch's explanation; where torch explains nothing (GB0090's explanation
        is empty), its debug context, the one place that names what broke."""
        words = self.explanation or (f"torch's debug context: {self.debug}" if self.debug else "")
        return self.gb_type + (f"\n{words}" if words else "")

    @property
    def place(self) -> str:
        """``file:line``, ``line N of f``, or that the log lacks it."""
        if self.file:
            return f"{self.file}:{self.line}"
        return f"line {self.line} of {self.function}" if self.function else "not in the log"

    def to_json(self) -> dict[str, Any]:
        """One item of ``distinct_graph_breaks`` in ``--json``."""
        return {"code": self.code, "known": self.known, "type": self.gb_type,
                "explanation": self.explanation, "hints": list(self.hints),
                "file": self.file, "line": self.line, "user_code": self.user_code,
                "count": self.count, "call_sites": list(self.call_sites),
                "frames": list(self.frames), "compile_ids": list(self.compile_ids),
                "ranks": list(self.ranks), "debug": self.debug,
                **({"raised": True} if self.raised else {})}

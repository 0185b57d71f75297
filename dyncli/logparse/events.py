"""Typed events parsed from torch logs: frozen dataclasses, one per kind of fact.

Both parsers produce these: ``textlog`` (TORCH_LOGS text) and ``trace`` (TORCH_TRACE
structured logs). ``dyncli.diagnose.analyzer`` consumes any iterable of them. Every field beyond
the common ones is optional or defaulted, so that a newer torch that drops a detail still
yields an event; add new fields WITH defaults, never rename (the trace parser depends on them).

Common fields (on every event, keyword-only):
    line        1-based line number of the event's first line in its input
    rank        distributed rank (``[rankN]:`` prefix, or the trace's ``rank``), None if none
    compile_id  the ``[frame/compile]`` of the record, None outside a compile
    pid         the process id of the glog prefix (0 when unknown)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

# Numbers of at most 9 digits: a longer one is damage, and int() of it stays cheap.
_COMPILE_ID_RE = re.compile(r"^(?:!(?P<ca>\d{1,9})(?:/(?P<f1>\d{1,9})/(?P<c1>\d{1,9}))?"
                            r"|(?P<f2>\d{1,9})/(?P<c2>\d{1,9}))(?:_(?P<attempt>\d{1,9}))?$")


@dataclass(frozen=True, slots=True)
class CompileId:
    """torch's CompileId: ``frame/compile``, ``frame/compile_attempt``, ``!ca/frame/compile``.

    ``attempt`` > 0 is a restart of the same compile (e.g. after a graph break), not an extra
    compile; ``key`` drops it so restarts group with their compile.

    torch numbers compiles per process and starts again at ``0/0`` after
    ``torch._dynamo.reset()``. So that two processes, or two reset generations of one, never
    share an id, a CompileId also carries its ``generation`` (resets seen before it in its
    process) and, when two trace files claim the same rank, its ``process`` (a label made
    from the file name). Both are written in front of the id: ``r1:0/0`` (generation 1),
    ``rank-0-a1b2:0/0``, ``rank-0-a1b2/r1:0/0``; ``split_id`` takes them apart again (the JSON
    puts them beside the bare id).
    """

    frame: int | None
    compile: int | None
    attempt: int = 0
    autograd: int | None = None
    generation: int = 0
    process: str = ""
    # ``key`` and ``frame_key``, made once: the analysis asks for them on every event.
    _key: str = field(default="", init=False, repr=False, compare=False)
    _frame_key: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        space = space_prefix(self.process, self.generation)
        frame = "" if self.frame is None else str(self.frame)
        key = "" if self.frame is None else f"{frame}/{self.compile}"
        if self.autograd is not None:
            frame = f"!{self.autograd}" + (f"/{frame}" if frame else "")
            key = f"!{self.autograd}" + (f"/{key}" if key else "")
        object.__setattr__(self, "_key", space + key)
        object.__setattr__(self, "_frame_key", space + frame)

    @classmethod
    def parse(cls, text: str) -> CompileId | None:
        """Parse the text inside ``[...]`` (or ``str()`` of one: ``r1:0/2`` keeps its
        generation and process); None when it is not a compile id."""
        if ":" in text:
            bare, generation, process = split_id(text)
            parsed = cls.parse(bare)
            if parsed is None:
                return None
            return cls(parsed.frame, parsed.compile, parsed.attempt, parsed.autograd,
                       generation, process)
        m = _COMPILE_ID_RE.match(text)
        if m is None:
            return None
        attempt = int(m["attempt"]) if m["attempt"] else 0
        if m["ca"] is not None:
            frame = int(m["f1"]) if m["f1"] else None
            comp = int(m["c1"]) if m["c1"] else None
            return cls(frame, comp, attempt, int(m["ca"]))
        return cls(int(m["f2"]), int(m["c2"]), attempt, None)

    @property
    def space(self) -> str:
        """``process/rN:`` in front of the id ("" for generation 0 of an only process)."""
        return space_prefix(self.process, self.generation)

    @property
    def key(self) -> str:
        """The compile id without its restart attempt: what counts as one compile."""
        return self._key

    @property
    def frame_key(self) -> str:
        """The frame this compile belongs to: ``0`` of ``0/3``, ``!1/0`` of ``!1/0/2``, with its
        space (``r1:0`` of ``r1:0/3``): what counts as one frame."""
        return self._frame_key

    def capture(self, autograd: int | None = None) -> CompileId:
        """The compiled autograd capture this id belongs to, ``!N`` alone in the same space
        (``!2`` of ``!2/0/1``); ``autograd``: capture ``!autograd`` instead (a trace names a
        capture's misses in a record of another compile)."""
        return replace(self, frame=None, compile=None, attempt=0,
                       autograd=self.autograd if autograd is None else autograd)

    def __str__(self) -> str:
        return self.key + (f"_{self.attempt}" if self.attempt else "")


@functools.lru_cache(maxsize=1024)  # called for every event's key: a few distinct values
def space_prefix(process: str, generation: int) -> str:
    """What goes in front of an id: ``p:``, ``r1:``, ``p/r1:`` or ""."""
    if not process and not generation:  # the usual case, on every event
        return ""
    parts = [p for p in (process, f"r{generation}" if generation else "") if p]
    return "/".join(parts) + ":" if parts else ""


def split_id(text: str) -> tuple[str, int, str]:
    """``(bare id, generation, process)`` of an id or frame id written by ``CompileId``."""
    space, sep, bare = text.rpartition(":")
    if not sep:
        return text, 0, ""
    process, _, gen = space.rpartition("/")
    if gen.startswith("r") and gen[1:].isdigit():
        return bare, int(gen[1:]), process
    return bare, 0, space


@dataclass(frozen=True, slots=True)
class UserLoc:
    """Where in user code something happened: ``code  # file:line in function``."""

    file: str
    line: int
    function: str = ""
    code: str = ""


@dataclass(frozen=True, kw_only=True)
class Event:
    """Fields every event has (see the module docstring)."""

    line: int = 0
    rank: int | None = None
    compile_id: CompileId | None = None
    pid: int = 0


@dataclass(frozen=True, kw_only=True)
class CompileStart(Event):
    """A frame starts compiling (trace ``dynamo_start``; text ``torchdynamo start tracing``)."""

    function: str = ""
    file: str = ""
    first_line: int | None = None


@dataclass(frozen=True, kw_only=True)
class CreateEnv(Event):
    """``create_env``: a new ShapeEnv, i.e. the start of a (re)compile's shape reasoning.

    The text reader makes one for the first record of each compile id, whatever the record;
    ``backend``: that record is the backend's (inductor's: its autotuning, a kernel's compile),
    not dynamo's. A later dynamo record of the same id makes one more, without it: a compile
    id only the backend's records carry proves the compile, not that the log is a recompile
    log (pytorch#150980: select_algorithm's ``[15/4]``).
    """

    backend: bool = False


@dataclass(frozen=True, kw_only=True)
class CreateSymbol(Event):
    """``create_symbol s77 = 6 for L['x'].size()[0] [2, int_oo] <user code> (<framework>)``."""

    symbol: str
    value: str = ""
    source: str = ""
    lower: str = ""
    upper: str = ""
    user: UserLoc | None = None
    framework: str = ""


@dataclass(frozen=True, kw_only=True)
class CreateUnbacked(Event):
    """``create_unbacked_symint u0 [-int_oo, int_oo] …`` (also symfloat, symbool)."""

    kind: str  # symint | symfloat | symbool
    symbol: str
    lower: str = ""
    upper: str = ""
    user: UserLoc | None = None
    framework: str = ""


@dataclass(frozen=True, kw_only=True)
class GuardAdded(Event):
    """``eval Eq(s77, 10) [guard added] …`` or ``runtime_assert … [guard added]``.

    ``suppressed``: the ``[guard suppressed]`` form; ``forcing_spec``: a specialization forced
    by ``symbol_guard_limit_before_specialize``.
    """

    expr: str
    prefix: str = "eval"  # eval | runtime_assert
    suppressed: bool = False
    forcing_spec: bool = False
    user: UserLoc | None = None
    framework: str = ""


@dataclass(frozen=True, kw_only=True)
class SetReplacement(Event):
    """``set_replacement s77 = 10 (range_refined_to_singleton) VR[10, 10]``.

    A ``range_refined_to_singleton`` reason with an integer target is a specialization; a
    symbol target (``s27 = s16 (solve)``) is an equality between sizes.
    """

    symbol: str
    target: str
    reason: str = ""
    lower: str = ""
    upper: str = ""


@dataclass(frozen=True, kw_only=True)
class Specialized(Event):
    """``Specializing L['x'].size()[0] to 10``: the warning ShapeEnv writes as it pins a size
    to a number where ``torch.fx.experimental._config.print_specializations`` is on (2.1-2.15,
    ``_set_replacement``); a 2023 nightly named the symbol instead (``Specializing s1 to 10:``,
    pytorch#95848). ``what`` is the source or the symbol, as torch named it."""

    what: str
    value: str


@dataclass(frozen=True, kw_only=True)
class VarToRange(Event):
    """``_update_var_to_range s77 = VR[10, 10] (update)``."""

    symbol: str
    lower: str
    upper: str
    how: str = ""  # update | new


@dataclass(frozen=True, kw_only=True)
class MarkedStatic(Event):
    """Dims the code marked static (``torch._dynamo.mark_static``), from the guard
    ``DIMENSION_DYNAMIC_MARKING_GUARD: ((getattr(L['x'], '_dynamo_static_indices', set())
    .issubset({0})) …``: no allow-list entry makes them dynamic."""

    source: str
    dims: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MarkedDynamic(Event):
    """An input made dynamic: ``marking L['x'] as dynamic (from automatic dynamic/PGO)``,
    ``… (from mark_dynamic)``, or ``L['x'] was marked dynamic due to dynamic-sources entry``.

    ``origin`` is the text in parentheses (``automatic dynamic/PGO``, ``mark_dynamic``,
    ``assume_static_by_default = False``) or ``dynamic-sources`` with ``entry`` set.
    """

    source: str
    origin: str = ""
    dim: int | None = None
    entry: str = ""


@dataclass(frozen=True, kw_only=True)
class GuardFailure:
    """One reason under ``triggered by the following guard failure(s):``.

    ``failed`` is the compile id of the cache entry whose guard failed (``0/0``); ``reason``
    the guard text (``tensor 'x' size mismatch at index 0. expected 4, actual 6``, ``n == 31``);
    ``user`` the code the guard came from, when torch printed it.
    """

    failed: str
    reason: str
    user: UserLoc | None = None
    # torch's "(user code shown is first use of this value--the guard itself is not due user
    # code but due to 0/1 specialization in the framework…)" note was on the guard's comment
    first_use: bool = False
    # torch's note that duck sizing made this equality of two sizes ("duck sizing added this
    # equality because these variables had the same size 4 (to avoid this specialization, set
    # torch.fx.experimental._config.use_duck_shape = False)"; symbolic_shapes.py, 2.11 on)
    duck: bool = False
    # torch's own note that it cannot say where the guard came from ("(unknown var s1, please
    # file a bug)", "(unknown source L['x'], please file a bug)"; symbolic_shapes.py)
    unknown_origin: str = ""

    @property
    def text(self) -> str:
        """The reason as torch wrote it: ``0/0: guard``, or the guard alone without an entry."""
        return f"{self.failed}: {self.reason}" if self.failed else self.reason


@dataclass(frozen=True, kw_only=True)
class Recompile(Event):
    """``Recompiling function F in FILE:LINE`` and every guard failure that follows."""

    function: str
    file: str = ""
    first_line: int | None = None
    failures: tuple[GuardFailure, ...] = ()
    user_stack: tuple[UserLoc, ...] = ()
    # the paste began inside this record: its header (the function) is not in the log
    partial: bool = False
    # cache entries the failures are of, where not one each: recompiles_verbose groups them
    # ("guard 0 failures:"), torch 2.2's tuple lists every failed guard of one entry
    entries: int = 0
    # what made torch raise instead of recompiling, so that no compile came of it:
    # "fail_on_recompile" (torch.compiler.set_stance's) or "error_on_recompile"
    # (torch._dynamo.config's RecompileError); "" where torch went on and recompiled
    refused: str = ""


@dataclass(frozen=True, kw_only=True)
class RecompileLimit(Event):
    """``torch._dynamo hit config.recompile_limit (8)`` with the function and last reason."""

    limit_name: str
    limit: str = ""
    function: str = ""
    file: str = ""
    first_line: int | None = None
    last_reason: str = ""
    partial: bool = False  # the paste began inside the warning: its first lines are missing
    # the form of torchdynamo, torch 2.0 or 2.1 (``reasons:``, the one-line warning of 2022, or
    # 2.1's line asking for TORCHDYNAMO_REPORT_GUARD_FAILURES=1): torch's default limit was 64
    before_2_2: bool = False
    # torch 2.1 printed no reason: its line asking for TORCHDYNAMO_REPORT_GUARD_FAILURES=1
    # stands where the reason would (nothing was cut)
    reasons_off: bool = False


@dataclass(frozen=True, kw_only=True)
class LimitRaised(Event):
    """The recompile limit raised instead of falling back to eager: a traceback line of
    ``FailOnRecompileLimitHit`` (``fullgraph=True`` or ``fail_on_recompile_limit_hit``) or
    torch 2.5's ``CacheLimitExceeded``; the program stopped there."""

    message: str


@dataclass(frozen=True, kw_only=True)
class NotConverted(Event):
    """``WON'T CONVERT fn file line N`` / ``due to:`` / a traceback (``convert_frame``'s
    ``format_error_msg``): dynamo's compile of a frame raised and torch suppressed the error
    (``suppress_errors``, WARNING; an ``Unsupported`` it treats as soft, INFO): the frame runs
    eagerly. ``error``: the exception's own lines (empty where the paste ends before them);
    ``raised_in``: where the paste cut them, the part of the compiler its deepest frame is in
    ("the backend (inductor)"; "" where not known)."""

    function: str
    file: str = ""
    first_line: int | None = None
    error: str = ""
    raised_in: str = ""


@dataclass(frozen=True, kw_only=True)
class LoopSkip(Event):
    """dynamo skipped a whole frame because a graph break happened inside a for/while loop of it
    (symbolic_convert's INFO ``Skipping frame because there is a graph break in a for/while
    loop`` and, from 2.1, ``<FrameSummary file F, line N in fn>`` under it; the DEBUG echo of
    convert_frame, ``Skipping frame Skipping frame because …`` ending in ``fn F first_line``;
    2.11 on, the break's record chains torch's "graph break in loop" with ``frame skipped: fn
    (F line first_line)``): the frame runs eagerly. ``file``/``user_line``: where the break
    was (torch's frame summary: a line inside the loop); ``function``: the skipped frame ("" where
    the line names none: 2.0's record); ``echo``: convert_frame's DEBUG echo of the INFO record
    (the same skip, not another); ``chained``: 2.11-2.15's "graph break in loop" record."""

    function: str = ""
    file: str = ""
    user_line: int | None = None
    first_line: int | None = None
    echo: bool = False
    chained: bool = False


@dataclass(frozen=True, kw_only=True)
class NoCompiledFrames(Event):
    """``RuntimeError: torch.compile with fullgraph=True found no compiled frames.`` (torch
    2.12 on; 2.12.0 warned instead): a fullgraph call compiled nothing. ``skipped``: torch's
    list, (function, file, first line, reason) each (``  - f (/a.py:2): Dynamo tracing is
    disabled``); empty where torch gave none (2.12's "The frame was likely skipped …")."""

    skipped: tuple[tuple[str, str, int, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class GuardSelfCheck(Event):
    """torch's ``AssertionError: Guard failed on the same frame it was created. This is a bug -
    please create an issue.Guard fail reason: 51/0: …`` (guards.py, after a compile, 2.11-2.15):
    the guards made for a compile failed on the very frame they were made from, so the compile
    raised. ``entry``: the compile id torch names; ``reason``: the failed guard, without the
    parameter hint torch appends to any parameter's size guard."""

    entry: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class CompileMetrics(Event):
    """torch's ``TorchDynamo compilation metrics:`` table, logged at exit under
    ``TORCH_LOGS=dynamo`` (textmetrics): ``rows`` are (function torch timed, seconds over the
    run) as logged, nested; ``cut``: a row without its number (the paste ends inside it)."""

    rows: tuple[tuple[str, float], ...] = ()
    cut: bool = False


@dataclass(frozen=True, kw_only=True)
class ExplainCount(Event):
    """A count in the head of torch._dynamo.explain()'s report (``Graph Count: 16``,
    ``Graph Break Count: 15``): ``what`` is ``graphs`` or ``breaks``. A paste cut after a few
    of its ``Break Reason N:`` blocks still says how many there were."""

    what: str
    count: int


@dataclass(frozen=True, kw_only=True)
class AutogradCacheMiss(Event):
    """Compiled autograd missed its cache, so it captures the backward graph again and dynamo
    compiles that graph (``Cache miss due to …``, logged by its C++ cache under
    ``TORCH_LOGS=compiled_autograd_verbose`` only; a trace's ``compiled_autograd_compile_reasons``).

    ``reason``: ``node`` (a new autograd node: "new autograd node: NODE (NodeCall N) with key
    size K, previous key sizes=[…]", ``previous`` empty at NodeCall 0 on the first capture) or
    ``shapes`` (sizes changed: 2.7 on, "N changed tensor shapes (total of T): sizes[i], …", an
    index into the graph's sizes; 2.4-2.6, one line per size, "changed shapes: marking size idx
    I of NODE (NodeCall N) as dynamic", ``node`` set, I an index into that node's sizes). ``compile_id``: the capture that followed
    (``!N``; None where the log ends first); ``after``: the newest dynamo compile the process
    logged before it (a forward recompiled just before a new node's miss)."""

    reason: str
    node: str = ""
    call: int | None = None
    key_size: int | None = None
    previous: tuple[int, ...] = ()
    changed: int = 0
    total: int | None = None
    sizes: tuple[int, ...] = ()
    after: CompileId | None = None


@dataclass(frozen=True, kw_only=True)
class TorchNote(Event):
    """torch's own output that needs no fix, which diagnose explains as a note
    (``dyncli.logparse.textnotes``, ``textautotune``). ``kind``: ``autotune`` (max-autotune's
    tuning report and its failed candidates), ``empty-cudagraph`` (a CUDA graph captured with
    no kernel), ``gemm-templates-off`` (too few SMs for inductor's GEMM templates),
    ``sympy-recursion`` (sympy hit Python's recursion limit, caught), ``backward-deferred``
    (AOTAutograd's suppressed backward compile; ``what`` ``raised``, ``frozen`` or ``cut``),
    ``auto-dim-specialized`` (export's Dim.AUTO size kept static; ``what`` its line),
    ``shape-env-failed`` (recording.py's record of a ShapeEnv call that raised; ``what`` the
    method), ``backend-kwargs-ignored`` (the cudagraphs backend dropped torch.compile's
    mode/options); ``what``:
    the part of it (autotune: ``table``, ``summary``, ``stats``, ``failed``, ``fallback``,
    ``other``); ``text``: its line, bounded."""

    kind: str
    what: str = ""
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class TorchVersion(Event):
    """The torch version a paste states beside its log (``dyncli.logparse.textversion``):
    ``version`` as written (``2.5.1+cu124``), ``form`` the kind of line that states it
    (``collect_env``, ``pip``, ``conda``, ``pip list``, ``torch.__version__``, ``pip show``),
    ``text`` the line, bounded (a two-line form's two, ``Name: torch / Version: 2.5.1``, from
    the first: ``line``)."""

    version: str
    form: str
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class Traceback(Event):
    """``Traceback (most recent call last):`` in the input: the program raised there (the
    exception itself may be cut from a paste). After a recompile limit's warning it means the
    call did not fall back to eager as the warning's usual reading says (pyg#8418, pytorch
    #111329: ``fullgraph=True``, under which the limit raises)."""


@dataclass(frozen=True, kw_only=True)
class CompileCrash(Event):
    """A program's traceback that ends in torch's compiler (``dyncli.logparse.textcrash``):
    the compile raised and the program stopped. ``error``: the exception's text as the
    traceback ends in it ("" where the paste cut it; IPython's head gives its type alone);
    ``cause``: the exception it was raised from (a chain), where its text is not in
    ``error``; ``at``: the deepest frame of torch's compiler; ``deepest``: the deepest frame
    (a package that patches torch, where it is not torch's); ``user``: the program's own
    deepest frame; ``cudagraph_run``: a frame is the CUDA-graph trees' (the compiled graph
    raised as it ran under CUDA graphs, not in a compile); ``graph_run``: not that, but the
    traceback passes AOTAutograd's run-time wrapper with nothing below it compiling
    (``torchtree.graph_ran``): the compiled graph was running, and what raised below it raised
    at run time; ``went_on``: no traceback, a
    program's warning quoting torch.compile's refusal (``error``: its message): the program
    caught it and ran uncompiled. ``begun``: where the paste begins after the exception's
    line ("from user code:", dynamo's user stack: its exception is before the paste).
    ``headless``: the paste begins inside the traceback, below its head, and ends before its
    exception: it does not show whether the program stopped on it (torch 2.0-2.5 logged the
    traceback of a graph break it caught and went on, pytorch#94795). ``line``: where the
    traceback begins."""

    error: str
    cause: str = ""
    cut: bool = False
    at: UserLoc | None = None
    deepest: UserLoc | None = None
    user: UserLoc | None = None
    resumes: tuple[UserLoc, ...] = ()  # frames of resume functions: each proves a graph break
    kernel: str = ""  # the Triton kernel inductor wrote that Triton could not compile
    cudagraph_run: bool = False
    graph_run: bool = False
    went_on: bool = False
    begun: str = ""
    headless: bool = False


@dataclass(frozen=True, kw_only=True)
class GraphBreak(Event):
    """``Graph break in user code at FILE:LINE`` with its reason and user stack.

    ``duplicate`` is torch's "user stack suppressed due to duplicate graph break" form.
    """

    file: str
    user_line: int
    reason: str = ""
    explanation: str = ""
    hints: tuple[str, ...] = ()
    user_stack: tuple[UserLoc, ...] = ()
    duplicate: bool = False
    gb_type: str = ""  # torch's graph-break type (the registry's Gb_type), torch >= 2.7
    gb_code: str = ""  # GB0025…, from the documentation link torch prints (torch >= 2.14)
    partial: bool = False  # the paste began inside the record: where it broke is not in it
    # torch's "Developer debug context" (2.7 on): what broke, in torch's words, where the type
    # does not say ("unsupported operator: mylib.op.default"); text from the log, shown as text
    debug: str = ""
    # raised as torch._dynamo.exc.Unsupported (a traceback's last line): fullgraph=True or
    # error_on_graph_break made the break an error, and the program stopped on it
    raised: bool = False
    # the releases whose record has this form (FORM_FIRST, FORM_INLINE …), "" where the
    # form does not tell (a raised break, a trace, a line of its own): a fix whose API depends
    # on the release names the one that exists there
    releases: str = ""
    # convert_frame's "Graph break: skip: from user code at:" (2.4-2.7, FORM_SKIP): torch gave
    # up on the whole frame and ran it eagerly ("skip:" says so, its source's comment); its
    # reason is the exception after the record's traceback, like 2.3-2.5's records
    skipped_frame: bool = False


# graph-break record forms by the releases that write them (read in each wheel's
# symbolic_convert.py): 2.1-2.2 "Graph break: REASON from user code at:" (2.1.0:429, 2.2.2:506);
# 2.3-2.5 "Graph break: from user code at:" with the exception after the stack (exc_info=True,
# 2.3.1:517, 2.4.0:535); 2.6 on "Graph break in user code at FILE:LINE"; 2.0 (and torchdynamo
# before it) "Graph break: REASON from user code at   File …", the first frame on the head's line
# (2.0.1:365). (dyncli.diagnose.releases says each in words)
FORM_FIRST = "2.0"
# convert_frame.py's record of a frame it gives up on, "Graph break: skip: from user code at:"
# (2.4.0:990, 2.5.1:1106, 2.6.0:1205, 2.7.1:1252; not in 2.3.1's, 2.12.0's or 2.15's)
FORM_SKIP = "2.4-2.7"
FORM_INLINE = "2.1-2.2"
FORM_AFTER = "2.3-2.5"
FORM_NEW = "2.6-"


@dataclass(frozen=True, kw_only=True)
class TensorMatch(Event):
    """A ``TENSOR_MATCH`` guard of the guards tree: ``size=[None, 8]`` means dim 0 is dynamic."""

    source: str
    sizes: tuple[int | None, ...] = ()
    strides: tuple[int | None, ...] = ()
    dtype: str = ""
    user: UserLoc | None = None


@dataclass(frozen=True, kw_only=True)
class ShapeGuard(Event):
    """A shape guard of the guards tree (``LAMBDA_GUARD: 2 <= L['x'].size()[0]``).

    ``zero_one``: torch's note that the guard is due to 0/1 specialization in the framework.
    """

    expr: str
    user: UserLoc | None = None
    zero_one: bool = False


@dataclass(frozen=True, kw_only=True)
class ConstraintViolation(Event):
    """``ConstraintViolationError``: a dim marked dynamic that the code specialized.

    One event per ``- You marked … as dynamic but your code specialized it to be a constant
    (8)`` item; ``user`` is the last user frame of the following ``User stack:``.
    """

    message: str
    source: str = ""
    value: str = ""
    user: UserLoc | None = None


@dataclass(frozen=True, kw_only=True)
class RangeViolation(Event):
    """``Not all values of X in the specified range R satisfy the generated guard G``: a range
    given to ``mark_dynamic(min=, max=)`` or a ``torch.export`` Dim that the code narrows
    (symbolic_shapes' StrictMinMaxConstraint; 2.1-2.15). ``dim`` is export's Dim name (empty for
    mark_dynamic's item, which names the source twice); ``range`` is torch's rendering of it,
    which leaves out a bound at its default (``b <= 64``; empty when both are)."""

    message: str
    source: str = ""
    dim: str = ""
    range: str = ""
    guard: str = ""
    user: UserLoc | None = None


@dataclass(frozen=True, kw_only=True)
class SuggestedFix(Event):
    """One line of torch's ``Suggested fixes:`` after a constraint violation (``b = 2*_b``,
    ``_b = Dim('_b', min=1, max=32)``): export's own answer, as the paste has it."""

    name: str
    value: str


@dataclass(frozen=True, kw_only=True)
class DataDependent(Event):
    """``could not evaluate Eq(u0, 0) due to data dependency, it was assumed to be False …``."""

    expr: str
    assumed: str = ""
    user: UserLoc | None = None
    framework: str = ""


@dataclass(frozen=True, kw_only=True)
class ModeSkip(Event):
    """dynamo skipped a frame because a TorchDispatchMode was active (``skipping: FN (reason:
    non-infra torch dispatch mode present, …, file: FILE)``, DEBUG, ``TORCH_LOGS=+dynamo``):
    that call ran eagerly. torch 2.11 keeps the skip on the code object, so later calls outside
    the mode run eagerly too; 2.14 and 2.15 do not (pytorch#186085)."""

    function: str
    file: str


@dataclass(frozen=True, kw_only=True)
class GuardError(Event):
    """torch could not make a compile's guards (``Error while creating guard:`` … ``Create
    Function: SHAPE_ENV``): the compile failed there; the error that follows in the log (a
    ``ConstraintViolationError`` for the shape guards) says why, when the log has it."""

    create_function: str


@dataclass(frozen=True, kw_only=True)
class DataDependentError(Event):
    """One fact of a data-dependent error (``dyncli.logparse.textdde``): ``what`` is ``guard``
    (could not guard on EXPR), ``int`` (could not extract an integer from EXPR), ``evaluate``
    (torch's evaluate_expr failed on EXPR, or torch 2.1-2.2's "The expression we were trying to
    evaluate is EXPR"), ``culprit`` (torch's ``Caused by``: FILE:LINE in FN), ``op`` (the
    operator whose meta failed), ``symbol`` (torch's ``Data dependent variable 'u0' allocated
    at:``: an expression over that symbol), ``hint`` (torch's own answer for the code that
    asked: guard_size_oblivious, guard_or_false…), ``check`` (one of the torch._check lines
    non-strict export suggests), ``linked`` (dynamo's exportdb link for one, its message cut)
    or ``stack`` (a user frame of dynamo's ``from user code:`` stack under it, in ``user``),
    or ``raised`` (the exception recording.py's record's traceback ends in, what the failed
    call raised: ``dyncli.diagnose.dde_facts`` reads a failure logged so as a data-dependent
    error only where the error's own words prove one); ``value`` is that text. ``logged``: the line is torch's log of a ShapeEnv call that
    failed, which torch writes and re-raises to the code that asked (recording.py's record
    and its traceback, symbolic_shapes' ``failed during evaluate_expr`` warning): it does not
    show that the error left torch, which up to 2.7 or so logs failures it catches too.
    ``during``: symbolic_shapes' ``failed during evaluate_expr(EXPR`` warning, written for any
    error up to 2.7 and only for one that is not data-dependent from 2.8 (``textdde``); ``form``:
    of recording.py's record, ``old`` (2.1-2.7's arguments) or ``new`` (2.8 on), else ""."""

    what: str
    value: str
    # a culprit's user line, where torch's SLoc names one; a symbol's: where it was made
    user: UserLoc | None = None
    logged: bool = False
    form: str = ""


ALL_EVENTS: tuple[type[Event], ...] = (
    CompileStart, CreateEnv, CreateSymbol, CreateUnbacked, GuardAdded, SetReplacement,
    VarToRange, MarkedDynamic, Recompile, RecompileLimit, GraphBreak, TensorMatch, ShapeGuard,
    ConstraintViolation, RangeViolation, SuggestedFix, DataDependent, DataDependentError,
    GuardError, LimitRaised,
    NotConverted, NoCompiledFrames, GuardSelfCheck, Traceback, CompileCrash, CompileMetrics,
    ExplainCount,
)


@dataclass
class ParseStats:
    """What a parser saw: counted, never fatal (``--strict`` turns unknowns into errors).

    ``lines``: physical lines read; ``recognized``: lines that belong to a record a handler
    understood (continuation lines included); ``unrecognized``: glog lines of no known kind,
    and non-glog lines (stdout noise); ``malformed``: lines of a known kind that failed to
    parse; ``bytes``: size of the input read (set by the reader, not the parser).
    ``samples`` keeps the first few unrecognized/malformed lines for messages; ``reasons``
    counts the malformed records by why they did not parse (``bad number``, ``truncated``,
    ``unparsable graph break``…), as tlparse's Stats counts ``fail_glog``/``fail_json``;
    ``long_lines``: lines cut at the reader's line cap (the rest of such a line is skipped).

    Pasted text (issue 33): ``records``: torch records read (a log without any is not a
    torch log, whatever its blank lines); ``blank``: blank lines and torch's own noise
    outside records (recognized, but no evidence of a torch log); ``pasted``: what the reader
    did to find records where a paste put them ({"prefixes trimmed": 12, …}); ``partial``:
    records the paste began inside (their first lines are not in the log).
    """

    lines: int = 0
    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0
    bytes: int = 0
    samples: list[tuple[int, str]] | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    long_lines: int = 0
    records: int = 0
    blank: int = 0
    pasted: dict[str, int] = field(default_factory=dict)
    partial: int = 0
    unread: int = 0  # torch records of no kind the parser knows (and not a paste's fragment)
    # what the lines with nothing to read were, by kind (lines, or tracebacks): torch's own
    # text without a prefix ("perf-hint", "torch-warning") and the program's tracebacks that
    # are no crash of torch's compiler ("traceback", "traceback-wrapper": textcrash); what a
    # paste of nothing else is refused as
    seen: dict[str, int] = field(default_factory=dict)

    @property
    def torch_lines(self) -> int:
        """Lines that belong to torch's records (understood or not): 0 means not a torch log."""
        return self.recognized + self.malformed - self.blank

    def add(self, other: ParseStats) -> None:
        """Add ``other``'s counts (and keep its samples while there is room): one total of many inputs."""
        self.lines += other.lines
        self.recognized += other.recognized
        self.unrecognized += other.unrecognized
        self.malformed += other.malformed
        self.bytes += other.bytes
        self.long_lines += other.long_lines
        self.records += other.records
        self.blank += other.blank
        self.partial += other.partial
        self.unread += other.unread
        for what, n in other.pasted.items():
            self.pasted[what] = self.pasted.get(what, 0) + n
        for what, n in other.seen.items():
            self.seen[what] = self.seen.get(what, 0) + n
        for why, n in other.reasons.items():
            self.reasons[why] = self.reasons.get(why, 0) + n
        for line, text in other.samples or []:
            self.sample(line, text)

    def count(self, reason: str) -> None:
        """Count one malformed record under ``reason``."""
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def sample(self, line: int, text: str, keep: int = 5) -> None:
        """Remember one of the first ``keep`` bad lines (for --strict and --verbose)."""
        if self.samples is None:
            self.samples = []
        if len(self.samples) < keep:
            self.samples.append((line, text[:200]))

"""The strategy table: everything about each strategy bench measures, one frozen row each. No torch.

As :mod:`dyncli.bench.models` treats the model zoo, a strategy is data: its ``torch.compile``
``dynamic`` argument, the torch config that must hold while dynamo traces (with the environment
variable torch reads each value from), a stance, whether it marks the varied dims of every input
dynamic or pads inputs to buckets, the passes it needs beside the measured one, the torch it
needs, and how it may be run and recommended. A :class:`~dyncli.bench.core.apply.Plan` is built
from a row; the runner measures a strategy by applying that plan through the same code that
``--emit python`` writes (:mod:`dyncli.bench.served`), so no other module branches on a
strategy's name.

**Adding a strategy is one row** in :data:`TABLE` (``dyncli.config`` derives the names it
accepts from it). **Adding a compile mode is one row** in :data:`MODES`: ``Plan.compile_mode``
passes its ``mode=`` to ``torch.compile``; what only some devices can run is a field here that
:func:`unsupported` reads.
"""

from __future__ import annotations

from typing import NamedTuple

# Placeholders in a row's settings, filled from the plan (the run's settings): the allow-list
# of the sources strategy, comma-joined, and pgo's job id.
SOURCES = "{sources}"
JOB_ID = "{job_id}"
PARAMS = (SOURCES, JOB_ID)

# The passes a strategy may need beside its measured one (``Strategy.passes``).
PROFILE = "profile"  # pgo: a cold pass records the profile the measured (warm) pass starts from
PRIME = "prime"  # eager-then-compile: the stream's first request runs eager, not compiled
PASS_STEPS = {  # what a pass asks of whoever applies the plan (said in every emitted form)
    PROFILE: ("Run one profiling process first (the same plan, representative traffic): torch "
              "writes the profile under TORCHINDUCTOR_CACHE_DIR as dynamo/code_state_*.pkl; "
              "keep that directory, and point TORCHINDUCTOR_CACHE_DIR at it in every serving "
              "process."),
}


# Rows are NamedTuples, not dataclasses: dyncli.config imports this table on every command's
# path, and a frozen dataclass of this many fields costs ~2 ms to define (NamedTuple: ~0.3).


class Setting(NamedTuple):
    """One torch config value that must hold while dynamo traces.

    ``module``: ``dynamo`` (``torch._dynamo.config``) or ``compiler``
    (``torch.compiler.config``); ``value``: a literal or a placeholder (:data:`SOURCES`,
    :data:`JOB_ID`); ``env``: the environment variable torch reads the same value from at
    import, when it has one (``None``: only code can set it).
    """

    module: str
    key: str
    value: bool | str
    env: str | None = None


class Strategy(NamedTuple):
    """One way to compile a model for varied shapes (or ``eager``: not at all)."""

    name: str
    summary: str  # one line: what it does
    simplicity: int  # rank, least to apply first: ties in the recommendation go to the lowest
    compiles: bool = True  # False for eager, the baseline
    dynamic: bool | None = None  # torch.compile(dynamic=...); None: not passed
    settings: tuple[Setting, ...] = ()
    stance: str | None = None  # torch.compiler.set_stance around every call
    marks: bool = False  # maybe_mark_dynamic on every input's batch and sequence dims
    pads: bool = False  # inputs padded up to the next bucket, outputs cut back
    passes: tuple[str, ...] = ()  # PROFILE, PRIME
    needs_torch: str | None = None  # the oldest torch release that has what the row uses
    one_process: bool = False  # cannot run under --nproc
    needs_ranks: bool = False  # only under --nproc >= 2 (collectives)
    recommendable: bool = True  # a plan for one process that --emit can write

    def config(self, module: str) -> dict[str, bool | str]:
        """The row's settings for one config module, placeholders unfilled."""
        return {s.key: s.value for s in self.settings if s.module == module}

    @property
    def specializes_zero_one(self) -> bool:
        """Whether a dynamic dim of size 0 or 1 is specialized (torch's rule), as it is but
        where automatic dynamic marks what changes unbacked."""
        return self.config("dynamo").get("automatic_dynamic_shapes_mark_as") != "unbacked"

    @property
    def params(self) -> tuple[str, ...]:
        """The placeholders the row's settings use (:data:`SOURCES`: needs an allow-list)."""
        return tuple(p for p in PARAMS if any(s.value == p for s in self.settings))


class CompileMode(NamedTuple):
    """One ``torch.compile(mode=...)``: the second axis of what bench measures."""

    name: str  # torch's own name; "default" passes no mode
    summary: str
    cuda_graphs: bool = False  # records CUDA graphs: needs a CUDA device
    autotune: bool = False
    needs_torch: str | None = None
    simplicity: int = 0  # rank among modes, least to apply first (after the strategy's)


def _dynamo(key: str, value: bool | str, env: str | None = None) -> Setting:
    return Setting("dynamo", key, value, env)


def _compiler(key: str, value: bool | str, env: str | None = None) -> Setting:
    return Setting("compiler", key, value, env)


# needs_torch: read from torch's sources and release notes (torch._dynamo.config
# automatic_dynamic_shapes_mark_as: 2.6, pytorch#141415; torch.compiler.config with job_id and
# local PGO: 2.6; the eager_then_compile stance: 2.7; torch.compiler.config.dynamic_sources
# (TORCH_COMPILE_DYNAMIC_SOURCES): 2.7; enable_compiler_collectives: 2.5).
TABLE: tuple[Strategy, ...] = (
    Strategy("eager", "no torch.compile: the baseline", 0, compiles=False),
    Strategy("static", "torch.compile(dynamic=False): one graph per distinct shape", 2,
             dynamic=False),
    Strategy("automatic", "plain torch.compile: static first, then what changed is made dynamic "
             "(automatic dynamic shapes)", 1),
    Strategy("mark-dynamic", "plain torch.compile, maybe_mark_dynamic on the varied dims of "
             "every input", 6, marks=True),
    Strategy("dynamic", "torch.compile(dynamic=True): every dim symbolic from the first compile",
             3, dynamic=True),
    Strategy("sources", "plain torch.compile with the allow-list of dynamic sources (what "
             "dyncli suggest writes)", 7,
             settings=(_compiler("dynamic_sources", SOURCES, "TORCH_COMPILE_DYNAMIC_SOURCES"),),
             needs_torch="2.7"),
    Strategy("collectives", "automatic with compiler collectives: ranks agree on what is "
             "dynamic", 10,
             settings=(_dynamo("enable_compiler_collectives", True, "TORCH_COMPILER_COLLECTIVES"),),
             needs_torch="2.5", needs_ranks=True, recommendable=False),
    Strategy("pad", "torch.compile(dynamic=False) on inputs padded to the next bucket", 8,
             dynamic=False, pads=True, one_process=True),
    Strategy("unbacked", "plain torch.compile; a dim that changes becomes unbacked (0 and 1 not "
             "specialized)", 5,
             settings=(_dynamo("automatic_dynamic_shapes_mark_as", "unbacked"),),
             needs_torch="2.6"),
    Strategy("eager-then-compile", "the first call eager, the compile at the second sees two "
             "examples", 4, stance="eager_then_compile", passes=(PRIME,), needs_torch="2.7",
             one_process=True),
    Strategy("pgo", "local profile-guided automatic dynamic: a profiling run first, then "
             "compiles start from its profile", 9,
             settings=(_compiler("job_id", JOB_ID, "TORCH_COMPILE_JOB_ID"),
                       _dynamo("automatic_dynamic_local_pgo", True,
                               "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO"),
                       _dynamo("automatic_dynamic_remote_pgo", False,
                               "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO")),
             passes=(PROFILE,), needs_torch="2.6", one_process=True),
)

MODES: tuple[CompileMode, ...] = (
    CompileMode("default", "inductor's default: no CUDA graphs, no autotuning"),
    CompileMode("reduce-overhead", "CUDA graphs: one recorded per new size", cuda_graphs=True,
                simplicity=1),
    CompileMode("max-autotune-no-cudagraphs", "autotuned kernels, no CUDA graphs", autotune=True,
                simplicity=2),
    CompileMode("max-autotune", "autotuned kernels and CUDA graphs", cuda_graphs=True,
                autotune=True, simplicity=3),
)
DEFAULT_MODE = "default"
# torch's CUDA-graph knobs a plan may set (torch._inductor.config.triton.*), and the first
# release that has each (read from torch's _inductor/config.py: cudagraph_capture_sizes 2.8,
# cudagraph_dynamic_shape_rerecord_limit 2.15, pytorch#197433). Code only: no environment
# variable sets them.
CAPTURE_SIZES = ("triton.cudagraph_capture_sizes", "2.8")
RERECORD_LIMIT = ("triton.cudagraph_dynamic_shape_rerecord_limit", "2.15")

EAGER = "eager"
# What dyncli.config accepts for bench.strategy: the rows that compile, in table order.
NAMES = tuple(s.name for s in TABLE if s.compiles)
MODE_NAMES = tuple(m.name for m in MODES)


def find(name: str) -> Strategy:
    """The row named ``name`` (read from :data:`TABLE` now); ``ValueError`` naming the known."""
    for row in TABLE:
        if row.name == name:
            return row
    raise ValueError(f"unknown strategy {name!r}; one of {', '.join(s.name for s in TABLE)}")


def mode(name: str) -> CompileMode:
    """The compile mode named ``name``; ``ValueError`` naming the known."""
    for row in MODES:
        if row.name == name:
            return row
    raise ValueError(f"unknown compile mode {name!r}; one of {', '.join(MODE_NAMES)}")


def label(strategy: str, compile_mode: str = DEFAULT_MODE) -> str:
    """How a (strategy, compile mode) run is named where one name is needed (tables, the
    recommendation's candidates, same-window columns): the strategy alone under the default
    mode, ``automatic@reduce-overhead`` otherwise (no strategy or mode has an ``@``)."""
    return strategy if compile_mode == DEFAULT_MODE else f"{strategy}@{compile_mode}"


def split(name: str) -> tuple[str, str]:
    """``(strategy, compile mode)`` from a :func:`label`."""
    strategy, _, compile_mode = name.partition("@")
    return strategy, compile_mode or DEFAULT_MODE


def recommendable() -> tuple[str, ...]:
    """The strategies a recommendation may name and ``--emit`` may write, eager first."""
    return tuple(s.name for s in TABLE if s.recommendable)


def simplest(names: list[str] | tuple[str, ...]) -> str:
    """The simplest to apply of ``names`` (strategies or labels, :func:`label`: by the
    strategy's ``simplicity``, then the mode's; unknown names last)."""
    rank = {s.name: s.simplicity for s in TABLE}
    modes = {m.name: m.simplicity for m in MODES}

    def key(name: str) -> tuple[int, int]:
        strategy, compile_mode = split(name)
        return rank.get(strategy, len(rank)), modes.get(compile_mode, len(modes))

    return min(names, key=key)


def release(version: str) -> tuple[int, int]:
    """``(2, 11)`` from ``2.11.0+cu130``, ``2.12.0a0`` or ``2.7``; ``(0, 0)`` if unreadable."""
    parts = version.split("+", 1)[0].split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0



def unsupported(row: Strategy, torch_version: str, compile_mode: str = "default",
                device: str = "cpu") -> str | None:
    """Why ``row`` (under ``compile_mode``) cannot run on this torch and device; None: it can.
    The row is not named (a run's ``error``: its label stands before it); its mode is."""
    cm = mode(compile_mode)
    for what, needs in (("", row.needs_torch), (f"mode {cm.name} ", cm.needs_torch)):
        if needs and release(torch_version) < release(needs):
            return f"{what}needs torch >= {needs} (this is {torch_version})"
    if cm.cuda_graphs and not device.startswith("cuda"):
        return f"mode {cm.name}: CUDA graphs need CUDA (device {device})"
    return None

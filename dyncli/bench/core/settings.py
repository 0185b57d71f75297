"""The checks across ``[bench]`` options that a field's own type and choices cannot express.

``dyncli.config`` checks each key (type, choices); :func:`check` checks how they combine and
their ranges, once, before any work: the command right after resolving its config (errors
name the flag, ``--repeat``), :func:`dyncli.bench.run` for the Python API (errors name the
option, ``bench.repeat``). Bad ``--shapes``/``--sizes`` content is the stream reader's.
"""

from __future__ import annotations

from collections.abc import Callable

from dyncli.bench.core import strategy as table
from dyncli.bench.core.buckets import MAX_BUCKETS
from dyncli.bench.core.cost import parse_buckets
from dyncli.bench.core.graphs import parse_bytes
from dyncli.bench.core.stream_file import MAX_SIZE, StreamError
from dyncli.config import BenchConfig
from dyncli.errors import UsageError


def auto_buckets(text: str) -> bool:
    """Whether ``buckets`` asks for the optimized set (``auto``)."""
    return text.strip().lower() == "auto"


def flag_name(key: str) -> str:
    """How the command line spells option ``key``: ``--batch-size``."""
    return "--" + key.replace("_", "-")


def option_name(key: str) -> str:
    """How the Python API and autodyn.toml spell option ``key``: ``bench.batch_size``."""
    return f"bench.{key}"


def check_modes(cfg: BenchConfig, name: Callable[[str], str] = option_name) -> None:
    """The compile modes and their CUDA-graph options: ``UsageError`` for the first that
    cannot be (the device and torch are the run's: a mode CPU cannot run is a status)."""
    if not cfg.compile_mode:
        raise UsageError(f"{name('compile_mode')}: give at least one compile mode",
                         hint=f"One of {', '.join(table.MODE_NAMES)}")
    graphs = [m for m in cfg.compile_mode if table.mode(m).cuda_graphs]
    for key in ("capture_sizes", "rerecord_limit"):
        if getattr(cfg, key) not in (None, []) and not graphs:
            raise UsageError(f"{name(key)}: only a mode that records CUDA graphs uses it",
                             hint=f"Add {name('compile_mode')} reduce-overhead (or max-autotune)")
    if cfg.capture_sizes and not (len(cfg.capture_sizes) <= 1000
                                  and all(1 <= s <= MAX_SIZE for s in cfg.capture_sizes)):
        raise UsageError(f"{name('capture_sizes')}: at most 1000 sizes in [1, {MAX_SIZE:,}]")
    if cfg.memory_budget is not None:
        try:
            parse_bytes(cfg.memory_budget)
        except ValueError as e:
            raise UsageError(f"{name('memory_budget')}: {e}") from None
    if cfg.nproc > 1 and len(cfg.compile_mode) > 1:
        raise UsageError(f"{name('nproc')} {cfg.nproc}: ranks run one compile mode",
                         hint=f"Give one {name('compile_mode')} per --nproc run")


def check(cfg: BenchConfig, name: Callable[[str], str] = option_name) -> None:
    """``UsageError`` for the first impossible setting, naming it with ``name(key)``."""
    if not cfg.strategy:
        raise UsageError(f"{name('strategy')}: give at least one strategy")
    rows = [table.find(s) for s in cfg.strategy]
    for row in rows:
        if table.SOURCES in row.params and not cfg.dynamic_sources:
            raise UsageError(f"{name('strategy')} {row.name}: no dynamic sources given",
                             hint=f"Pass {name('dynamic_sources')} \"L['x']:0\" or set "
                                  "bench.dynamic_sources (dyncli suggest --format toml writes it)")
    if not cfg.vary:
        raise UsageError(f"{name('vary')}: unknown (empty)", hint="Choose batch, seq or batch,seq")
    check_modes(cfg, name)
    checks = [(cfg.variations >= 1, "variations", "must be >= 1"),
              (0 <= cfg.spread < 1, "spread", "must be in [0, 1)"),
              (cfg.repeat >= 2, "repeat", "must be >= 2 (medians and p-values need samples)"),
              (cfg.warmup >= 0, "warmup", "must be >= 0"),
              (cfg.variations <= 100_000, "variations", "must be at most 100,000"),
              (cfg.batch_size is None or 1 <= cfg.batch_size <= MAX_SIZE, "batch_size",
               f"must be in [1, {MAX_SIZE:,}]"),
              (cfg.seq_len is None or 1 <= cfg.seq_len <= MAX_SIZE, "seq_len",
               f"must be in [1, {MAX_SIZE:,}]"),
              (0 <= cfg.seed < 2**63, "seed", "must be in [0, 2^63)"),
              (cfg.requests is None or cfg.requests >= 1, "requests", "must be >= 1"),
              (1 <= cfg.nproc <= 1024, "nproc", "must be in [1, 1024]"),
              (cfg.timeout is None or cfg.timeout > 0, "timeout", "must be > 0 seconds")]
    for ok, key, message in checks:
        if not ok:
            raise UsageError(f"{name(key)} {message}")
    one_process = [r.name for r in rows if r.one_process]
    streams = [name(k) for k in ("shapes", "sizes", "requests", "replay") if getattr(cfg, k)]
    if cfg.nproc > 1 and (one_process or streams):
        *most, last = [r.name for r in table.TABLE if r.one_process]
        every = f"{', '.join(most)} or {last}" if most else last
        raise UsageError(f"{name('nproc')} {cfg.nproc}: {', '.join(streams + one_process)} "
                         "run in one process only",
                         hint=f"Drop {name('nproc')} to cost a request stream or use {every}")
    for row in rows:
        if row.needs_ranks and cfg.nproc < 2:
            raise UsageError(f"{name('strategy')} {row.name}: needs ranks "
                             "(torch.distributed)",
                             hint=f"Add {name('nproc')} 2 (or more)")
    if cfg.shapes and cfg.sizes:
        raise UsageError(f"{name('shapes')} and {name('sizes')}: give one request stream, "
                         "not both")
    if cfg.max_buckets is not None and not 1 <= cfg.max_buckets <= MAX_BUCKETS:
        raise UsageError(f"{name('max_buckets')} must be in [1, {MAX_BUCKETS}]")
    if cfg.requests_per_start is not None and cfg.requests_per_start < 1:
        raise UsageError(f"{name('requests_per_start')} must be >= 1")
    if (cfg.start == "warm" or cfg.requests_per_start) and cfg.nproc > 1:
        raise UsageError(f"{name('start')} warm and {name('requests_per_start')} run in one "
                         f"process only", hint=f"Drop {name('nproc')}")
    if cfg.emit and not (cfg.shapes or cfg.sizes or cfg.requests):
        raise UsageError(f"{name('emit')}: a plan is for a request stream, and none was given",
                         hint=f"Give your traffic with {name('shapes')} FILE, {name('sizes')} "
                              f"or {name('requests')} N")
    if auto_buckets(cfg.buckets):
        return
    try:
        parse_buckets(cfg.buckets)
    except StreamError as e:
        raise UsageError(str(e).replace("--buckets", name("buckets"), 1)) from None

"""The checks across ``[bench]`` options that a field's own type and choices cannot express.

``dyncli.config`` checks each key (type, choices); :func:`check` checks how they combine and
their ranges, once, before any work: the command right after resolving its config (errors
name the flag, ``--repeat``), :func:`dyncli.bench.run` for the Python API (errors name the
option, ``bench.repeat``). Bad ``--shapes``/``--sizes`` content is the stream reader's.
"""

from __future__ import annotations

from collections.abc import Callable

from dyncli.bench.core.cost import parse_buckets
from dyncli.bench.core.stream_file import MAX_SIZE, StreamError
from dyncli.config import BenchConfig
from dyncli.errors import UsageError

ONE_PROCESS = ("pad", "pgo", "eager-then-compile")


def flag_name(key: str) -> str:
    """How the command line spells option ``key``: ``--batch-size``."""
    return "--" + key.replace("_", "-")


def option_name(key: str) -> str:
    """How the Python API and autodyn.toml spell option ``key``: ``bench.batch_size``."""
    return f"bench.{key}"


def check(cfg: BenchConfig, name: Callable[[str], str] = option_name) -> None:
    """``UsageError`` for the first impossible setting, naming it with ``name(key)``."""
    if not cfg.strategy:
        raise UsageError(f"{name('strategy')}: give at least one strategy")
    if "sources" in cfg.strategy and not cfg.dynamic_sources:
        raise UsageError(f"{name('strategy')} sources: no dynamic sources given",
                         hint=f"Pass {name('dynamic_sources')} \"L['x']:0\" or set "
                              "bench.dynamic_sources (dyncli suggest --format toml writes it)")
    if not cfg.vary:
        raise UsageError(f"{name('vary')}: unknown (empty)", hint="Choose batch, seq or batch,seq")
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
    one_process = [s for s in cfg.strategy if s in ONE_PROCESS]
    streams = [name(k) for k in ("shapes", "sizes", "requests", "replay") if getattr(cfg, k)]
    if cfg.nproc > 1 and (one_process or streams):
        raise UsageError(f"{name('nproc')} {cfg.nproc}: {', '.join(streams + one_process)} "
                         "run in one process only",
                         hint=f"Drop {name('nproc')} to cost a request stream or use pad, pgo "
                              "or eager-then-compile")
    if "collectives" in cfg.strategy and cfg.nproc < 2:
        raise UsageError(f"{name('strategy')} collectives: compiler collectives need ranks",
                         hint=f"Add {name('nproc')} 2 (or more)")
    if cfg.shapes and cfg.sizes:
        raise UsageError(f"{name('shapes')} and {name('sizes')}: give one request stream, "
                         "not both")
    try:
        parse_buckets(cfg.buckets)
    except StreamError as e:
        raise UsageError(str(e).replace("--buckets", name("buckets"), 1)) from None

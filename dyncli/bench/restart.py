"""``--start warm``: what a strategy's compiles cost a process that restarts with caches kept.

For each strategy, two fresh processes run it on the same stream, one after the other, over
one inductor cache directory (``TORCHINDUCTOR_CACHE_DIR``): the first starts cold and leaves
torch's on-disk caches behind (inductor's FX graph cache and the AOTAutograd cache, both on by
default); the second is the restarted service, which finds them. Dynamo still traces in the
second (its decisions are per process), so a warm compile is cheaper, not free. Each process
goes through the child protocol (:mod:`dyncli.bench.child`), so a crash or a hang there is a
status here.

What is recorded per strategy (``runs[].start``, a :class:`WarmStart`): the compile count and
seconds of each process, and the seconds of each of its compiles in stream order, which
:mod:`dyncli.bench.core.restarts` places over the stream for ``--requests-per-start``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dyncli.bench.child import run_child
from dyncli.bench.core import strategy as table
from dyncli.bench.core.recommend import events_of
from dyncli.bench.core.result import RunResult, WarmStart
from dyncli.bench.core.status import Status
from dyncli.config import BenchConfig

# A child that builds, compiles and runs one strategy: generous, but never unbounded.
CHILD_TIMEOUT_S = 1800.0


def _child(model: str, settings: dict[str, Any], cache: Path, name: str) -> RunResult | str:
    """One fresh process over ``cache``: its run, or why there is none."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    ended = run_child(model, settings, timeout=CHILD_TIMEOUT_S, env=env)
    if ended.interrupted:
        raise KeyboardInterrupt
    if ended.timed_out:
        return f"the {name} process ran past {CHILD_TIMEOUT_S:.0f} s"
    if ended.result is None:
        tail = " ".join(ended.tail.strip().splitlines()[-2:])[:300]
        return f"the {name} process wrote no result (exit {ended.returncode}: {tail})"
    if not ended.runs:
        return f"the {name} process measured nothing"
    return ended.runs[0]


def measure(model: str, cfg: BenchConfig, run: RunResult) -> WarmStart:
    """A cold then a warm process of ``run.strategy``; the ``start`` record of the run."""
    row = table.find(run.strategy)
    if table.PROFILE in row.passes:
        return WarmStart(Status.NOT_APPLICABLE,
                         f"{row.name} measures its own warm start (its cold and warm passes)")
    buckets = cfg.buckets
    if run.buckets is not None and run.buckets.chosen:  # --buckets auto: what it measured
        buckets = ",".join(str(b) for b in run.buckets.chosen)
    child = dataclasses.replace(cfg, strategy=[run.strategy], compile_mode=[run.compile_mode],
                                buckets=buckets, replay=False,
                                fresh_cache=False, emit=None, emit_file=None, start="cold",
                                requests_per_start=None, warmup=0, repeat=2, fail_on=[])
    settings = {k: getattr(child, k) for k in child.__dataclass_fields__}
    work = Path(tempfile.mkdtemp(prefix="dyncli-start-"))
    try:
        cache = work / "inductor-cache"
        cache.mkdir()
        cold = _child(model, settings, cache, "cold")
        warm = _child(model, settings, cache, "warm") if isinstance(cold, RunResult) else cold
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if isinstance(cold, str) or isinstance(warm, str):
        return WarmStart(Status.FAIL_TO_COMPILE, cold if isinstance(cold, str) else str(warm))
    failed = next((r for r in (cold, warm) if r.status != Status.PASS), None)
    return WarmStart(
        failed.status if failed else Status.PASS, failed.error or None if failed else None,
        cold_compiles=cold.compiles, cold_compile_time_s=cold.compile_time_s,
        compiles=warm.compiles, compile_time_s=warm.compile_time_s,
        fx_cache_hits=warm.fx_cache_hits,
        cold_event_s=tuple(e.seconds for e in events_of(cold)),
        warm_event_s=tuple(e.seconds for e in events_of(warm)))

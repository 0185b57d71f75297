"""``--start warm``: what a strategy's compiles cost a process that restarts with caches kept.

For each strategy, two fresh processes run it on the same stream, one after the other, over
one inductor cache directory (``TORCHINDUCTOR_CACHE_DIR``): the first starts cold and leaves
torch's on-disk caches behind (inductor's FX graph cache and the AOTAutograd cache, both on by
default); the second is the restarted service, which finds them. Dynamo still traces in the
second (its decisions are per process), so a warm compile is cheaper, not free. Each process
is :mod:`dyncli.bench.suite_worker` (the suite's child), so a crash there is a status here.

What is recorded per strategy (``runs[].start``): the compile count and seconds of each
process, and the seconds of each of its compiles in stream order, which
:mod:`dyncli.bench.core.restarts` places over the stream for ``--requests-per-start``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from dyncli.bench.core.recommend import events_of
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.status import Status
from dyncli.config import BenchConfig
from dyncli.logparse.safe import loads

# A child that builds, compiles and runs one strategy: generous, but never unbounded.
CHILD_TIMEOUT_S = 1800.0


def _child(model: str, settings: dict[str, Any], cache: Path, work: Path, name: str
           ) -> RunResult | str:
    """One fresh process over ``cache``: its run, or why there is none."""
    from dyncli.bench.suite_child import _worker_command

    spec, out = work / f"{name}.spec.json", work / f"{name}.json"
    spec.write_text(json.dumps({"model": model, "settings": settings}), encoding="utf-8")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    try:
        proc = subprocess.run(_worker_command(spec, out), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, env=env,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the {name} process ran past {CHILD_TIMEOUT_S:.0f} s"
    try:
        doc = loads(out.read_text(encoding="utf-8"))
        runs = BenchResult.from_dict(doc).runs
    except (OSError, ValueError) as e:
        tail = " ".join(proc.stderr.strip().splitlines()[-2:])[:300]
        return f"the {name} process wrote no result (exit {proc.returncode}: {tail or e})"
    if not runs:
        return f"the {name} process measured nothing"
    return runs[0]


def measure(model: str, cfg: BenchConfig, run: RunResult) -> dict[str, Any]:
    """A cold then a warm process of ``run.strategy``; the ``start`` object of the run."""
    strategy = run.strategy
    if strategy == "pgo":
        return {"status": Status.NOT_APPLICABLE,
                "error": "pgo measures its own warm start (its cold and warm passes)"}
    buckets = cfg.buckets
    chosen = (run.buckets or {}).get("chosen")
    if isinstance(chosen, list) and chosen:  # --buckets auto: the buckets it measured
        buckets = ",".join(str(b) for b in chosen)
    child = dataclasses.replace(cfg, strategy=[strategy], buckets=buckets, replay=False,
                                fresh_cache=False, emit=None, emit_file=None, start="cold",
                                requests_per_start=None, warmup=0, repeat=2, fail_on=[])
    settings = {k: getattr(child, k) for k in child.__dataclass_fields__}
    work = Path(tempfile.mkdtemp(prefix="dyncli-start-"))
    try:
        cache = work / "inductor-cache"
        cache.mkdir()
        cold = _child(model, settings, cache, work, "cold")
        warm = _child(model, settings, cache, work, "warm") if isinstance(cold, RunResult) \
            else cold
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if isinstance(cold, str) or isinstance(warm, str):
        return {"status": Status.FAIL_TO_COMPILE, "error": cold if isinstance(cold, str)
                else warm}
    failed = next((r for r in (cold, warm) if r.status != Status.PASS), None)
    return {
        "status": failed.status if failed else Status.PASS,
        "error": failed.error or None if failed else None,
        "cold_compiles": cold.compiles, "cold_compile_time_s": cold.compile_time_s,
        "compiles": warm.compiles, "compile_time_s": warm.compile_time_s,
        "fx_cache_hits": warm.fx_cache_hits,
        "cold_event_s": [e.seconds for e in events_of(cold)],
        "warm_event_s": [e.seconds for e in events_of(warm)],
    }

"""What one rank of ``dyncli bench --nproc N`` runs, inside a process torch's launcher started.

Each rank builds the model, makes its own plan of shapes (:func:`rank_plan`), compiles it
under one strategy and steps through the plan. Every step ends with an ``all_reduce`` of a
scalar, as a DDP step would, so a rank that compiles makes the others wait there; the time
spent in that collective is measured apart from the step itself. The setup and every model
call are the single-process bench's: :func:`~dyncli.bench.harness.load`, one
:class:`~dyncli.bench.harness.Harness` (inputs seeded with ``seed + rank``) and the strategy's
plan (:func:`~dyncli.bench.compiling.compile_plan`); only the loop is the rank's own, because a
collective ends each step.

The rank never raises: its result (``RankResult.to_dict()``, so it pickles across the launcher) carries
a status — ``fail_to_compile`` with torch's message, ``timeout`` when the process-group
timeout ended a wait in the collective, ``rank_failed`` when a peer went away.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from dyncli.bench import compiling, tensors
from dyncli.bench.child import write_doc
from dyncli.bench.compile_watch import CountingBackend, clean_reason, watch
from dyncli.bench.core import stats
from dyncli.bench.core.apply import plan_of
from dyncli.bench.core.result import RankResult, RankStep
from dyncli.bench.core.shapes import Variation, plan_variations
from dyncli.bench.core.status import Status, short_error
from dyncli.bench.harness import Harness, load, make_clock
from dyncli.bench.timing import timed
from dyncli.config import BenchConfig

# Delays one rank before its first all_reduce, e.g. "1:30" (rank 1, 30 s): reproduces a
# straggler, and is how the tests provoke a collective timeout without waiting minutes.
DELAY_ENV = "DYNCLI_RANK_DELAY"
# Matched in lower case. gloo (torch 2.14): "Timed out waiting 5000ms for recv operation";
# a peer that left first: "Connection closed by peer".
TIMEOUT_MARKERS = ("timed out", "timeout")
# The process-group timeout when bench.timeout is unset (that key is also a suite's per-model
# wall-clock limit, where unset means none).
PG_TIMEOUT_S = 300.0
PEER_MARKERS = ("connection closed by peer", "connection reset", "broken pipe",
                "communicator was aborted")


@dataclass(frozen=True)
class RankSpec:
    """Everything a rank needs, picklable (the launcher starts ranks with ``spawn``)."""

    model: str
    cfg: BenchConfig
    strategy: str
    device: str  # cpu or cuda
    result_dir: str  # each rank writes rank<N>.json here as it goes


def rank_plan(cfg: BenchConfig, rank: int, base_batch: int, base_seq: int | None
              ) -> list[Variation]:
    """The shapes rank ``rank`` runs: every rank the same number, so collectives pair up.

    ``same``: the one seeded plan everywhere. ``skewed``: rank 0 runs the plan, the others
    keep the base shape at every step (one rank sees new shapes, a known divergence).
    ``independent``: each rank its own plan, seeded with ``seed + rank``.
    """
    seed = cfg.seed + rank if cfg.rank_shapes == "independent" else cfg.seed
    plan = plan_variations(base_batch, cfg.variations, cfg.spread, seed, cfg.vary, base_seq)
    if cfg.rank_shapes == "skewed" and rank != 0:
        return [Variation(v.index, base_batch, base_seq) for v in plan]
    return plan


def collective_status(err: BaseException) -> Status:
    """``timeout`` for a wait the process-group timeout ended, else ``rank_failed``."""
    text = str(err).lower()
    if any(m in text for m in TIMEOUT_MARKERS) and not any(m in text for m in PEER_MARKERS):
        return Status.TIMEOUT
    return Status.RANK_FAILED


def _delay(rank: int) -> float:
    text = os.environ.get(DELAY_ENV, "")
    who, _, seconds = text.partition(":")
    try:
        return float(seconds) if who.strip() and int(who) == rank else 0.0
    except ValueError:
        return 0.0


class _Collective:
    """The step's ``all_reduce`` of one scalar, timed; its failures become statuses."""

    def __init__(self, dist: Any, torch: Any, device: str) -> None:
        self.dist, self.flag = dist, torch.ones(1, device=device)
        self.clock = make_clock(device)

    def __call__(self) -> float:
        _, ms = timed(self.clock, lambda: self.dist.all_reduce(self.flag))
        return float(ms)


def _save(result: RankResult, directory: str) -> None:
    result.wait_ms = sum(s.wait_ms for s in result.steps)  # kept current with every save
    write_doc(os.path.join(directory, f"rank{result.rank}.json"), result.to_dict())


def run_rank(spec: RankSpec) -> dict[str, Any]:
    """The launcher's entry point: set up the process group, bench, tear down; a dict back."""
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    result = RankResult(rank)
    device = spec.device
    if device == "cuda":
        torch.cuda.set_device(local)  # one GPU per rank
    else:
        # N ranks share the cores: without this each would start a thread per core.
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    dist.init_process_group("nccl" if device == "cuda" else "gloo",
                            timeout=timedelta(seconds=spec.cfg.timeout or PG_TIMEOUT_S))
    try:
        _bench(spec, rank, device, result, dist, torch)
    except Exception as e:  # setup failures (model build) are statuses too
        result.status, result.error = Status.MODEL_FAIL_TO_LOAD, short_error(e)
    finally:
        _save(result, spec.result_dir)
        with contextlib.suppress(Exception):  # a group a peer abandoned may not tear down
            dist.destroy_process_group()
    return result.to_dict()


def _bench(spec: RankSpec, rank: int, device: str, result: RankResult, dist: Any,
           torch: Any) -> None:
    cfg = spec.cfg
    built, dims = load(spec.model, cfg, device)
    plan = rank_plan(cfg, rank, cfg.batch_size or built.batch_size, built.seq_len)
    h = Harness.create(cfg, built, device, dims, plan, cfg.seed + rank)
    collective = _Collective(dist, torch, device)
    backend = CountingBackend()
    settings = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    compiled = compiling.compile_plan(h.model, plan_of(spec.strategy, settings, dims.as_dict()),
                                      backend)
    samples: list[float] = []
    delay = _delay(rank)
    with watch() as w:
        for variation in plan:
            inputs = h.args(variation.index)
            rs = RankStep(variation.index, tensors.batch_of(*inputs, dims), variation.seq_len)
            result.steps.append(rs)
            step = h.step(compiled, inputs)
            before = backend.compiles
            w.mark()
            if not _phase(result, rs, Status.FAIL_TO_COMPILE, _first, rs, h, step):
                break
            rs.compiles = backend.compiles - before
            rs.recompile_reasons = [clean_reason(r) for r in w.reasons_since()]
            result.compiles = backend.compiles
            if rs.compiles:
                result.compile_time_s += rs.first_call_s
            if result.first_step_s != result.first_step_s:
                result.first_step_s = rs.first_call_s
            result.busy_s += rs.first_call_s
            if delay:  # a straggler: late to its first collective
                time.sleep(delay)
                delay = 0.0
            if not _phase(result, rs, Status.RANK_FAILED, _wait, rs, collective):
                break
            ok = _phase(result, rs, Status.FAIL_TO_COMPILE, _steady, cfg.warmup, cfg.repeat, rs,
                        step, h.clock, collective, samples, result)
            _save(result, spec.result_dir)
            if not ok:
                break
    result.step_ms = stats.median(samples) if samples else float("nan")


def _phase(result: RankResult, rs: RankStep, failure: Status, fn: Callable[..., None],
           *args: Any) -> bool:
    """Run ``fn(*args)``; on error set the rank's status (collective errors are classified)."""
    try:
        fn(*args)
        return True
    except Exception as e:
        status = collective_status(e) if getattr(e, "_dyncli_collective", False) else failure
        result.status, result.error = status, short_error(e)
        if status == Status.TIMEOUT:
            result.error = (f"rank {result.rank} waited longer than the process-group timeout "
                            f"in all_reduce after variation {rs.index}: {result.error}")
        return False


def _first(rs: RankStep, h: Harness, step: Callable[[], Any]) -> None:
    rs.first_call_s = h.first_call(step)[1]


def _wait(rs: RankStep, collective: _Collective) -> None:
    t0 = time.perf_counter()
    try:
        rs.wait_ms += collective()
    except Exception as e:
        rs.wait_ms += (time.perf_counter() - t0) * 1000.0  # a timed-out wait counts in full
        e._dyncli_collective = True  # type: ignore[attr-defined]
        raise


def _steady(warmup: int, repeat: int, rs: RankStep, step: Callable[[], Any], clock: Any,
            collective: _Collective, samples: list[float], result: RankResult) -> None:
    mine: list[float] = []
    for i in range(warmup + repeat):
        _, ms = timed(clock, step)
        result.busy_s += ms / 1000.0
        if i >= warmup:
            mine.append(ms)
        _wait(rs, collective)
    rs.step_ms = stats.median(mine) if mine else float("nan")
    samples.extend(mine)


__all__ = ["RankSpec", "collective_status", "rank_plan", "run_rank"]

"""``dyncli bench --nproc N``: the benchmark on N ranks, launched by torch.distributed's own launcher.

One launch per strategy through ``torch.distributed.launcher.api.elastic_launch`` (the
machinery behind ``torchrun --standalone``: a c10d rendezvous on the loopback, no restarts),
so a strategy whose ranks crash or time out leaves the next one a fresh process group. Each
rank runs :func:`dyncli.bench.rank_worker.run_rank` (gloo on CPU, NCCL with one GPU per rank
on CUDA) and writes its result to a file as it goes (:func:`dyncli.bench.child.write_doc`);
this module reads them back (:func:`~dyncli.bench.child.read_doc`), so a rank the launcher
reports as failed still shows what it measured, plus its last stderr lines.

Across ranks a run has ``divergent`` (compile counts differ), the total wait in the
collective and the slowest rank; its status is the worst of its ranks'.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dyncli.bench import torch_compat
from dyncli.bench.child import read_doc
from dyncli.bench.core import strategy as table
from dyncli.bench.core.result import BenchResult, Hooks, RankResult, RunResult
from dyncli.bench.core.status import Status, worst
from dyncli.bench.rank_worker import RankSpec, run_rank
from dyncli.config import BenchConfig
from dyncli.errors import UsageError

LAST_LINES = 8
LAUNCHER_LOGGERS = ("torch.distributed.elastic", "torch.distributed.launcher",
                    "torch.multiprocessing")
STOPPED = "stopped by the launcher when another rank failed"
# Seconds the launcher's rendezvous may take for every rank to start (imports torch).
RDZV_TIMEOUT_S = 300


def run_distributed(model_name: str, cfg: BenchConfig, device: str, result: BenchResult,
                    hooks: Hooks) -> BenchResult:
    """Fill ``result`` with one run per strategy, each measured on ``cfg.nproc`` ranks."""
    if device == "cuda":
        import torch

        if torch.cuda.device_count() < cfg.nproc:
            raise UsageError(f"--nproc {cfg.nproc}: only {torch.cuda.device_count()} CUDA "
                             "device(s); NCCL needs one GPU per rank",
                             hint="Lower --nproc or use --device cpu (gloo)")
    done, total = [0], len(cfg.strategy)
    compile_mode = cfg.compile_mode[0]  # settings.check: ranks run one mode
    for strategy in cfg.strategy:
        run = RunResult(model_name, strategy, cfg.mode, compile_mode=compile_mode)
        result.runs.append(run)
        reason = table.unsupported(table.find(strategy), torch_compat.installed_text(),
                                   compile_mode, device)
        if reason:  # no ranks launched for a run this torch or this device cannot do
            run.status, run.error = Status.NOT_APPLICABLE, reason
            done[0] += 1
            if hooks.run_done:
                hooks.run_done(result)
            continue
        try:
            t0 = time.perf_counter()
            run.ranks = launch(model_name, cfg, strategy, device)
            run.wall_s = time.perf_counter() - t0
            summarize(run)
            done[0] += 1
            if hooks.progress:
                hooks.progress(strategy, done[0], total)
        except KeyboardInterrupt:
            run.status = Status.INTERRUPTED
            result.stop([table.label(s, compile_mode) for s in cfg.strategy], model_name,
                        cfg.mode)
            break
        finally:
            if hooks.run_done:
                hooks.run_done(result)
    return result


def launch(model_name: str, cfg: BenchConfig, strategy: str, device: str) -> list[RankResult]:
    """One strategy on ``cfg.nproc`` local ranks with ``elastic_launch``; a result per rank.

    The launcher's failures (a rank that crashed or was killed) are statuses: the rank's own
    saved result if it wrote one, ``rank_failed`` otherwise, with its last stderr lines.
    """
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs, Std
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    with tempfile.TemporaryDirectory(prefix="dyncli-ranks-") as tmp:
        spec = RankSpec(model_name, cfg, strategy, device, tmp)
        nproc = cfg.nproc
        logs = os.path.join(tmp, "logs")
        config = LaunchConfig(
            min_nodes=1, max_nodes=1, nproc_per_node=nproc, run_id=f"dyncli-{uuid.uuid4().hex}",
            rdzv_backend="c10d", rdzv_endpoint="127.0.0.1:0", local_addr="127.0.0.1",
            rdzv_configs={"timeout": RDZV_TIMEOUT_S}, max_restarts=0, monitor_interval=0.1,
            start_method="spawn",
            # Ranks' output goes to files: N interleaved copies of torch's warnings help nobody.
            logs_specs=DefaultLogsSpecs(log_dir=logs, redirects=Std.ALL))
        failures: dict[int, Any] = {}
        try:
            with _quiet_launcher():
                elastic_launch(config, run_rank)(spec)
        except ChildFailedError as e:
            failures = dict(e.failures)
        return [_rank_result(tmp, logs, rank, failures.get(rank)) for rank in range(nproc)]


@contextmanager
def _quiet_launcher() -> Iterator[None]:
    """The launcher's own log lines off (each failure is a status with its last lines here);
    ``DYNCLI_DEBUG=1`` keeps them."""
    if os.environ.get("DYNCLI_DEBUG"):
        yield
        return
    loggers = [logging.getLogger(name) for name in LAUNCHER_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _rank_result(tmp: str, logs: str, rank: int, failure: Any) -> RankResult:
    saved = read_doc(Path(tmp, f"rank{rank}.json"))
    result = RankResult(rank, status=Status.RANK_FAILED)
    if saved is not None:
        result = RankResult.from_dict(saved)
    if failure is None and saved is not None:
        return result
    if result.status == Status.PASS:
        result.status = Status.RANK_FAILED  # it saved a partial result, then the process died
    lines = _last_lines(logs, rank)
    result.last_lines = lines
    if not result.error and failure is None:
        result.error = STOPPED  # the launcher stops every rank when one fails
    elif not result.error:
        # torch's message is a link to its docs unless the rank wrote an error file; the
        # rank's own last stderr line says more.
        reason = (lines[-1] if lines else "") or getattr(failure, "message", "") \
            or "exited without a result"
        exitcode = getattr(failure, "exitcode", None)
        result.error = f"rank {rank} process failed (exit code {exitcode}): {reason}"[:300]
    return result


def _last_lines(logs: str, rank: int) -> list[str]:
    for path in sorted(Path(logs).glob(f"**/attempt_*/{rank}/stderr.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        return [ln for ln in text.splitlines() if ln.strip()][-LAST_LINES:]
    return []


def summarize(run: RunResult) -> None:
    """The run's status, error and compile totals from its ranks."""
    run.status = worst(r.status for r in run.ranks)
    failed = sorted((r for r in run.ranks if r.status == run.status and r.error),
                    key=lambda r: r.error == STOPPED)  # the cause first, not its victims
    if failed:
        rank = failed[0]
        others = len(failed) - 1
        run.error = f"rank {rank.rank}: {rank.error}" + (
            f" (and {others} other rank{'s' if others > 1 else ''})" if others else "")
    run.compiles = max((r.compiles for r in run.ranks), default=0)
    run.compile_time_s = max((r.compile_time_s for r in run.ranks), default=0.0)


__all__ = ["launch", "run_distributed", "summarize"]

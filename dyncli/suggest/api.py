"""``dyncli.suggest.run``: PGO state in, an :class:`AllowList` out (the command's one core call)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dyncli.config import SuggestConfig, config_or_options
from dyncli.errors import InputError, UsageError
from dyncli.gcpause import gc_paused
from dyncli.suggest.allowlist import AllowList, build_allowlist, parse_torch_version
from dyncli.suggest.joblist import JobListing, jobs_in_dir
from dyncli.suggest.pgo_files import find_pgo_files, read_pgo_files
from dyncli.suggest.pgo_state import PgoState


def run(*, pgo_dir: str | Path | None = None, from_trace: str | Path | None = None,
        job_id: str | None = None, redis: str | None = None,
        config: SuggestConfig | None = None, **options: Any) -> AllowList:
    """Read PGO state and return the allow-list that makes its dynamic inputs dynamic up front.

    ``pgo_dir``: an inductor cache dir, its ``dynamo/`` dir, or one ``code_state_*.pkl``
    (read with a restricted unpickler: no code from the file ever runs). ``from_trace``: a
    TORCH_TRACE file or dir, or ``"-"`` for stdin. ``redis``: a Redis URL holding torch's
    remote PGO cache (``"env"``: the one ``TORCHINDUCTOR_REDIS_URL``/``_HOST``/``_PORT`` name),
    read-only. ``job_id``: only that job's files or keys. Every source given is merged.
    ``options`` are the ``[suggest]`` config keys (``format``, ``include_params``, ``frame``,
    ``exclude``, ``torch_version``), validated as in ``autodyn.toml``; or pass ``config``.

    Raises ``UsageError`` / ``ConfigError`` for bad options and ``InputError`` when nothing
    usable was read (all subclasses of ``dyncli.errors.DyncliError``).
    """
    cfg: SuggestConfig = config_or_options("suggest", config, options, where="dyncli.suggest.run")
    if pgo_dir is None and from_trace is None and redis is None:
        raise UsageError("nothing to read: give --pgo-dir DIR or --from-trace PATH (or --redis URL)",
                         hint="dyncli suggest --pgo-dir /tmp/torchinductor_$USER")
    if job_id is not None and pgo_dir is None and redis is None:
        raise UsageError("--job-id selects PGO files or keys and needs --pgo-dir or --redis")
    if cfg.torch_version is not None:
        parse_torch_version(cfg.torch_version)
    with gc_paused():
        state = PgoState()
        if pgo_dir is not None:
            read_pgo_files(find_pgo_files(Path(pgo_dir), job_id), state)
        if from_trace is not None:
            # Only this path needs the trace reader (and its imports): keep --pgo-dir start-up lean.
            from dyncli.suggest.pgo_trace import read_trace_files, trace_inputs

            read_trace_files(trace_inputs(from_trace), state)
        if redis is not None:
            from dyncli.suggest.redis import read_redis, resolve_url

            read_redis(resolve_url(redis), job_id, state)
        if not state.inputs:
            detail = "; ".join(f"{f}: {e}" for f, e in state.skipped)
            raise InputError(f"no usable PGO state was read ({detail})")
        return build_allowlist(state, cfg)


def list_jobs(*, pgo_dir: str | Path | None = None, redis: str | None = None) -> JobListing:
    """The job ids that have PGO state, each with the ranks that stored it (``--list-jobs``).

    ``redis`` as in :func:`run` (``SCAN`` only); else ``pgo_dir``'s file names.
    """
    if redis is not None:
        from dyncli.suggest.redis import list_jobs as redis_jobs
        from dyncli.suggest.redis import resolve_url

        url = resolve_url(redis)
        return JobListing(url, redis_jobs(url))
    if pgo_dir is None:
        raise UsageError("--list-jobs needs --pgo-dir DIR or --redis URL")
    return JobListing(str(pgo_dir), jobs_in_dir(Path(pgo_dir)))

"""``dyncli.suggest.run``: PGO state in, an :class:`AllowList` out (the command's one core call)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dyncli.config import SuggestConfig, config_or_options
from dyncli.errors import DyncliError, InputError, UsageError
from dyncli.gcpause import gc_paused
from dyncli.suggest.allowlist import build_allowlist
from dyncli.suggest.pgo_files import find_pgo_files, read_pgo_files
from dyncli.suggest.pgo_state import PgoState
from dyncli.suggest.result import AllowList
from dyncli.suggest.source_lists import parse_entries, resolve_target
from dyncli.suggest.stale import find_stale

if TYPE_CHECKING:  # --list-jobs only: imported there
    from dyncli.suggest.joblist import JobListing


def run(*, pgo_dir: str | Path | None = None, from_trace: str | Path | None = None,
        job_id: str | None = None, redis: str | None = None,
        static: str | Sequence[str] | None = None, unbacked: bool = True,
        source_root: str | Path | None = None, include_stale: bool = False,
        config: SuggestConfig | None = None, **options: Any) -> AllowList:
    """Read PGO state and return the allow-list that makes its dynamic inputs dynamic up front.

    ``pgo_dir``: an inductor cache dir, its ``dynamo/`` dir, or one ``code_state_*.pkl``
    (read with a restricted unpickler: no code from the file ever runs); with no source given
    at all, torch's own cache dir and job id, computed as torch does
    (:mod:`dyncli.suggest.torch_dirs`). ``from_trace``: a
    TORCH_TRACE file or dir, or ``"-"`` for stdin. ``redis``: a Redis URL holding torch's
    remote PGO cache (``"env"``: the one ``TORCHINDUCTOR_REDIS_URL``/``_HOST``/``_PORT`` name),
    read-only. ``job_id``: only that job's files or keys. Every source given is merged.
    ``options`` are the ``[suggest]`` config keys (``format``, ``include_params``, ``frame``,
    ``exclude``, ``torch_version``), validated as in ``autodyn.toml``; or pass ``config``.
    ``torch_version`` unset means the installed torch (read from its ``.dist-info`` folder name, not
    imported), else the newest torch dyncli knows.

    The lists torch reads: ``static`` (``"L['x']:1,L['y']"`` or a list of such entries) is
    TORCH_COMPILE_STATIC_SOURCES, for sources the user or a ``bench`` measurement wants pinned
    (dynamic kernels slower, or a dim that varied only in warm-up); they are kept out of the
    other lists. ``unbacked``: dims seen with size 0 or 1 go to TORCH_COMPILE_UNBACKED_SOURCES
    (``False``: they stay in the dynamic list). Each list is emitted only for a target torch
    that reads it (a note says when one is left out).

    Stale state: frames whose source file no longer hashes as torch recorded it (the file at
    its recorded path, or under ``source_root``) are reported in ``.stale`` and their sources
    are left out unless ``include_stale``.

    Raises ``UsageError`` / ``ConfigError`` for bad options and ``InputError`` when nothing
    usable was read (all subclasses of ``dyncli.errors.DyncliError``).
    """
    cfg: SuggestConfig = config_or_options("suggest", config, options, where="dyncli.suggest.run")
    found: list[str] = []
    if pgo_dir is None and from_trace is None and redis is None:
        pgo_dir, job_id, said = _torch_default(job_id)
        found.append(said)
    if job_id is not None and pgo_dir is None and redis is None:
        raise UsageError("--job-id selects PGO files or keys and needs --pgo-dir or --redis")
    target = resolve_target(cfg.torch_version)
    pinned = parse_entries(static, "--static")
    root = Path(source_root) if source_root is not None else None
    if root is not None and not root.is_dir():
        raise UsageError(f"--source-root {source_root}: not a directory")
    with gc_paused():
        state = PgoState()
        if pgo_dir is not None:
            read_pgo_files(find_pgo_files(Path(pgo_dir), job_id), state)
        no_fix: dict[str, str] = {}
        if from_trace is not None:
            # Only this path needs the trace reader (and its imports): keep --pgo-dir start-up lean.
            from dyncli.suggest.pgo_trace import read_trace_files, seen_small, trace_inputs

            read_trace_files(trace_inputs(from_trace), state)
            no_fix, small = _trace_findings(from_trace)
            seen_small(state, small)
        if redis is not None:
            from dyncli.suggest.redis import read_redis, resolve_url

            read_redis(resolve_url(redis), job_id, state)
        if not state.inputs:
            detail = "; ".join(f"{f}: {e}" for f, e in state.skipped)
            raise InputError(f"no usable PGO state was read ({detail})")
        check = find_stale((key for key, _ in state.frames.values()), root)
        result = build_allowlist(state, cfg, target=target, static=pinned, unbacked=unbacked,
                                 stale=check.stale, include_stale=include_stale, no_fix=no_fix)
        extra = found + check.notes(str(source_root) if source_root is not None else None)
        return replace(result, notes=result.notes + tuple(extra)) if extra else result


def _torch_default(job_id: str | None) -> tuple[Path, str | None, str]:
    """No source given: torch's own PGO directory, and its job id when the environment sets
    one (as torch would read them: :mod:`dyncli.suggest.torch_dirs`)."""
    from dyncli.suggest.torch_dirs import torch_dirs

    dirs = torch_dirs()
    if not dirs.cache_dir.exists():
        raise UsageError(f"nothing to read: no --pgo-dir, --from-trace or --redis, and "
                         f"{dirs.describe()} does not exist",
                         hint="Run the program with TORCH_COMPILE_JOB_ID=NAME set (torch keeps "
                              "PGO state only then), or give --pgo-dir DIR")
    job = job_id if job_id is not None else dirs.job_id
    return dirs.cache_dir, job, f"read {dirs.describe()}: no --pgo-dir given"


def _trace_findings(path: str | Path) -> tuple[dict[str, str], dict[str, set[int]]]:
    """What the trace itself shows beside the PGO state: the entries no list entry helps
    (issue 26: the state records that an input changed, the trace's guards and
    specializations show what pins it), and the dims a size 0 or 1 reached after they turned
    dynamic (issue 33: the state keeps no size of a dynamic dim, the trace's recompile reasons
    do), which go to the unbacked list as a PGO file's 0/1 sizes do."""
    from dyncli.diagnose.advice import no_list_helps
    from dyncli.diagnose.api import run as diagnose
    from dyncli.suggest.pgo_trace import zero_one_dims

    if str(path) == "-":
        return {}, {}  # stdin is read once, by the PGO reader
    try:
        diag = diagnose(str(path))
    except DyncliError:  # the state was read; a trace diagnose cannot read adds nothing
        return {}, {}
    return no_list_helps(diag), zero_one_dims(r for rec in diag.recompiles for r in rec.reasons)


def list_jobs(*, pgo_dir: str | Path | None = None, redis: str | None = None) -> JobListing:
    """The job ids that have PGO state, each with the ranks that stored it (``--list-jobs``).

    ``redis`` as in :func:`run` (``SCAN`` only); else ``pgo_dir``'s file names (without it,
    torch's own cache dir, as :func:`run` finds it).
    """
    from dyncli.suggest.joblist import JobListing, jobs_in_dir

    if redis is not None:
        from dyncli.suggest.redis import list_jobs as redis_jobs
        from dyncli.suggest.redis import resolve_url

        url = resolve_url(redis)
        return JobListing(url, redis_jobs(url))
    if pgo_dir is None:  # torch's own cache dir, as `run` reads it (every job in it)
        pgo_dir = _torch_default(None)[0]
    return JobListing(str(pgo_dir), jobs_in_dir(Path(pgo_dir)))

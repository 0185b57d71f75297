"""Finding torch's PGO files (``code_state_<job>_<rank>_<tag>.pkl``) and reading them.

The file name is torch's cache key with ``:`` and other unsafe characters made ``_``
(``torch/_dynamo/pgo.py`` ``code_state_path``). Each file is read through the restricted
unpickler of :mod:`dyncli.suggest.pgo_pickle`; one that can't be read is skipped with its
reason and the others are merged.
"""

from __future__ import annotations

import fnmatch
import os
import pickle
import re
from collections.abc import Iterable
from pathlib import Path

from dyncli.errors import InputError
from dyncli.logparse.safe import clip
from dyncli.suggest.pgo_pickle import MAX_PGO_BYTES, loads_state
from dyncli.suggest.pgo_scan import one_budget
from dyncli.suggest.pgo_state import PgoState

_NAME_RE = re.compile(r"^code_state_(?P<rest>.+)\.pkl$")


_KEY_RE = re.compile(r"^(?P<job>.*)_(?P<rank>None|\d+)_(?P<tag>.*)$")  # greedy: the last rank


def split_name(filename: str) -> tuple[str, str] | None:
    """``(job, rank)`` of ``code_state_<job>_<rank>_<tag>.pkl`` (rank ``None`` or digits).

    The tag (``TORCH_COMPILE_CACHE_KEY_TAG``, usually empty) is taken ``_``-free when the name
    allows it, so a job may hold ``_<digits>_``; else the last ``_<rank>_`` splits it (a tag
    ``my_tag``: the job was read as ``<job>_None`` before round 26).
    """
    m = _NAME_RE.match(filename)
    if not m:
        return None
    rest = m.group("rest")
    parts = rest.rsplit("_", 2)
    if len(parts) == 3 and re.fullmatch(r"None|\d+", parts[1]):
        return parts[0], parts[1]
    key = _KEY_RE.match(rest)
    return (key.group("job"), key.group("rank")) if key else None


def job_of(filename: str) -> str:
    """The job id part of ``code_state_<job>_<rank>_<tag>.pkl`` (:func:`split_name`)."""
    split = split_name(filename)
    if split is not None:
        return split[0]
    m = _NAME_RE.match(filename)
    return m.group("rest") if m else ""


def matches_job(filename: str, job: str) -> bool:
    """Whether ``code_state_<job>_<rank>_<tag>.pkl`` belongs to ``job`` (tags may hold ``_``)."""
    prefix = f"code_state_{_file_key(job)}_"
    return filename.startswith(prefix) and re.match(r"^(None|\d+)_.*\.pkl$", filename[len(prefix):]) is not None


def _file_key(job: str) -> str:
    # torch: re.sub(r'[<>:"/\\|?*]', "_", f"code_state_{cache_key}.pkl")
    return re.sub(r'[<>:"/\\|?*]', "_", job)


def find_pgo_files(path: Path, job_id: str | None = None) -> list[Path]:
    """PGO pickles under ``path``: a cache dir, its ``dynamo/`` dir, or one file."""
    if not path.exists():
        raise InputError(f"{path}: no such file or directory",
                         hint="Pass the inductor cache dir (torch's: dyncli suggest without --pgo-dir), its dynamo/ dir or a .pkl")
    if path.is_file():
        if job_id is not None and not matches_job(path.name, job_id):
            raise InputError(f"{path}: not a PGO file of job {job_id!r} (its job is {job_of(path.name)!r})")
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: not a directory or a regular file",
                         hint="Pass the inductor cache dir, its dynamo/ dir or a .pkl")
    files: list[Path] = []
    for directory in (path / "dynamo", path):
        if directory.is_dir():
            files = _pgo_files_in(directory)
            if files:
                break
    if not files:
        raise InputError(f"{path}: no code_state_*.pkl files here or in {path / 'dynamo'}",
                         hint="torch writes PGO state only when TORCH_COMPILE_JOB_ID is set")
    if job_id is not None:
        chosen = [p for p in files if matches_job(p.name, job_id)]
        if not chosen:
            jobs = ", ".join(sorted({job_of(p.name) for p in files}))
            raise InputError(f"{path}: no PGO state for job {job_id!r}", hint=f"Jobs found: {jobs}")
        files = chosen
    return files


def _pgo_files_in(directory: Path) -> list[Path]:
    """The ``code_state_*.pkl`` files in ``directory``; one that cannot be listed is an error
    (``Path.glob`` found nothing there, and the user was told to set TORCH_COMPILE_JOB_ID)."""
    try:
        with os.scandir(directory) as entries:
            names = [e.name for e in entries if fnmatch.fnmatchcase(e.name, "code_state_*.pkl")]
    except OSError as e:
        raise InputError(f"{directory}: cannot list this directory: {e.strerror or e}") from None
    return sorted(p for p in (directory / name for name in names) if p.is_file())


def read_pgo_files(files: Iterable[Path], state: PgoState | None = None) -> PgoState:
    """Read and merge PGO pickles; unreadable ones go to ``state.skipped`` with the reason."""
    state = state or PgoState()
    jobs = set(state.jobs)  # (a list lookup per file was quadratic: 8 s for 20,000 jobs)
    with one_budget():  # one bound on the whole directory's scan, not one per file
        for path in files:
            _read_one(path, state, jobs)
    return state


def _read_one(path: Path, state: PgoState, jobs: set[str]) -> None:
    """Read one PGO pickle into ``state``, or note it in ``state.skipped`` with the reason."""
    try:
        size = path.stat().st_size
        if size > MAX_PGO_BYTES:
            raise ValueError(f"{size:,} bytes is more than any PGO state "
                             f"(at most {MAX_PGO_BYTES >> 20} MB are read)")
        data = path.read_bytes()
        frames = loads_state(data)
    except Exception as e:  # the one guard around one untrusted file: skip it, keep the rest
        # an OSError's str() repeats the path the line already names: its reason alone
        text = (e.strerror or str(e)) if isinstance(e, OSError) else \
            str(e) if isinstance(e, (ValueError, pickle.UnpicklingError)) else ""
        text = clip(text)
        state.skipped.append((str(path), text or f"not PGO state ({type(e).__name__})"))
        return
    state.inputs.append(str(path))
    job = job_of(path.name)
    if job and job not in jobs:
        jobs.add(job)
        state.jobs.append(job)
    for key, entries in frames:
        for source, entry in entries.items():
            state.add(key, source, entry)

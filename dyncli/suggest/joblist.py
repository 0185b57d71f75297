"""``dyncli suggest --list-jobs``: which job ids have PGO state, and from which ranks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dyncli.output import envelope
from dyncli.suggest.pgo_files import find_pgo_files, job_of, split_name


@dataclass(frozen=True)
class JobListing:
    """Job id → the ranks that stored state for it, and where it was read."""

    where: str
    jobs: dict[str, list[int | None]]

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document of ``dyncli suggest --list-jobs``."""
        return envelope("suggest", {"where": self.where, "jobs": [
            {"job": job, "ranks": ranks} for job, ranks in self.jobs.items()]})

    def lines(self) -> list[str]:
        """One line per job: ``<job>  ranks 0, 1``."""
        return [f"{job}\tranks {', '.join('None' if r is None else str(r) for r in ranks)}"
                for job, ranks in self.jobs.items()]


def jobs_in_dir(path: Path) -> dict[str, list[int | None]]:
    """Job → ranks of the ``code_state_<job>_<rank>_<tag>.pkl`` files under ``path``."""
    jobs: dict[str, list[int | None]] = {}
    for file in find_pgo_files(path):
        job, token = split_name(file.name) or (job_of(file.name), "None")
        rank = None if token == "None" else int(token)
        ranks = jobs.setdefault(job, [])
        if rank not in ranks:
            ranks.append(rank)
    return jobs

"""Compiles a log proves, when it does not show each of them (issue 33).

torch numbers the compiles of a frame in order (``convert_frame.get_compile_id``: one counter
per frame), so any record at ``[F/N]`` proves the N compiles ``F/0``..``F/N-1`` before it,
whether their own records are in the log or not: a ``recompiles``-only log, torch's default
warnings (a limit warning at ``[1/8]``), or a paste that begins late. ``implied`` gives those
ids for a frame from the ids seen.

Logs older than the compile id in every record (torch 2.0's tuple, torchdynamo's warnings,
2.1-2.4's recompile records outside the compile) name only the function: ``Unnumbered``
counts what they prove of each, a lower bound: a recompile proves one compile before it and
one more for each cache entry whose guard it lists as failed; a limit warning of N proves N
cache entries.
"""

from __future__ import annotations

import re

from dyncli.diagnose.model import FrameReport
from dyncli.logparse import events as ev

MAX_IMPLIED = 4096  # ids implied per frame: a damaged "[0/999999999]" is not a billion compiles
_LAST_NUMBER = re.compile(r"/(\d{1,9})$")


def implied(frame_id: str, keys: set[str]) -> set[str]:
    """The compile keys of ``frame_id`` that its highest seen compile number proves."""
    if frame_id.startswith("!") or not keys:  # compiled autograd numbers its graphs otherwise
        return set()
    top = max((int(m[1]) for k in keys if (m := _LAST_NUMBER.search(k))), default=0)
    return {f"{frame_id}/{i}" for i in range(min(top, MAX_IMPLIED))}


class Unnumbered:
    """What records without a compile id prove, per (rank, function, file)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int | None, str, str], list[int]] = {}  # [recompiles, proven]

    def _add(self, rank: int | None, function: str, file: str, proven: int, recompile: bool) -> None:
        if not function:  # a record the paste began inside: whose function is not known
            return
        got = self._seen.setdefault((rank, function, file), [0, 0])
        got[0] += recompile
        got[1] = max(got[1], proven, got[0] + 1)

    def recompile(self, e: ev.Recompile) -> None:
        """A recompile: one compile before it, and each cache entry it lists as failed."""
        self._add(e.rank, e.function, e.file, (e.entries or len(e.failures)) + 1, True)

    def limit(self, e: ev.RecompileLimit) -> None:
        """A limit warning: as many cache entries as the limit."""
        n = int(e.limit) if e.limit.isdigit() and len(e.limit) < 7 else 1
        self._add(e.rank, e.function, e.file, n, False)

    def frames(self, known: set[tuple[int | None, str]]) -> list[FrameReport]:
        """A frame row (id ``?``) for each function no numbered frame already names."""
        return [FrameReport(rank=rank, frame_id="?", function=fn, file=file, first_line=None,
                            compiles=proven, at_least=True)
                for (rank, fn, file), (_, proven) in self._seen.items() if (rank, fn) not in known]

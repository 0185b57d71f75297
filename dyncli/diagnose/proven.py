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
from dyncli.logparse.guardtext import split_failed
from dyncli.logparse.safe import small_int

MAX_IMPLIED = 4096  # ids implied per frame: a damaged "[0/999999999]" is not a billion compiles
_LAST_NUMBER = re.compile(r"/(\d{1,9})$")


def implied(frame_id: str, keys: set[str]) -> set[str]:
    """The compile keys of ``frame_id`` that its highest seen compile number proves."""
    if frame_id.startswith("!") or not keys:  # compiled autograd numbers its graphs otherwise
        return set()
    top = max((int(m[1]) for k in keys if (m := _LAST_NUMBER.search(k))), default=0)
    return {f"{frame_id}/{i}" for i in range(min(top, MAX_IMPLIED))}


def compiled(frame_id: str, keys: set[str], refused: set[str], limit: str,
             last_reason: str) -> set[str]:
    """The compile keys of ``frame_id`` the log proves, ``refused`` the ids the recompile limit
    refused (each a limit warning at ``[F/N]``; torch numbers an attempt before it checks the
    limit, convert_frame._compile).

    One refusal, as a program's one thread writes it (the frame then runs eagerly): ``[F/N]``
    proves the N compiles before it. Several refusals of one frame are threads that reached the
    limit side by side (pytorch#123177: ``[0/15]`` to ``[0/27]`` in 45 ms, recompile_limit 8,
    last reason ``0/7``): the ids between them, and those before the first the paste shows,
    may be refusals too. Then the proof is the limit itself (the cache held that many
    entries), the entry the last reason names (``0/7``: eight), and the ids of records that
    were not refused.
    """
    if len(refused) < 2:
        return (keys | implied(frame_id, keys)) - refused
    kept = keys - refused
    entries = limit_entries(limit, 0)
    failed = ev.CompileId.parse(split_failed(last_reason)[0]) if last_reason else None
    if failed is not None and failed.frame_key == frame_id and failed.compile is not None:
        entries = max(entries, failed.compile + 1)  # the entry the last reason names
    return kept | implied(frame_id, kept) | {f"{frame_id}/{i}" for i in range(min(entries, MAX_IMPLIED))}


def limit_entries(limit: str, default: int) -> int:
    """The cache entries a limit warning's ``limit`` (its text in parentheses) says the cache
    held, or ``default`` where it is no plain number (ASCII digits: ``str.isdigit`` also takes
    "²", which ``int`` refuses) or too large to be a count of entries."""
    n = small_int(limit)
    return n if n is not None and 0 <= n < 1_000_000 else default


def failed_entry(last_reason: str) -> ev.CompileId | None:
    """The cache entry a limit warning's last reason names (``0/7: tensor 'x' …``), where it
    is a plain frame's: torch writes each guard failure as ``f"{compile_id}: {reasons}"``
    (guards.get_guard_fail_reason, 2.5-2.15), the compile id of the cache entry whose guards
    failed. Every entry of a code object carries the frame id of that code object's compiles
    (convert_frame.get_compile_id: one id per frame state), so ``F`` is the warning's frame,
    and ``M`` its (M+1)-th compile. None for compiled autograd's ids and for reasons without one
    (torch before 2.5, and 2.1's reasons-off line)."""
    head = split_failed(last_reason)[0] if last_reason else ""
    failed = ev.CompileId.parse(head) if head else None
    if failed is None or failed.frame is None or failed.compile is None \
            or failed.autograd is not None:
        return None
    return failed


def entries(failed: ev.CompileId, limit: str) -> set[str]:
    """The compile keys a bare limit warning proves of the frame its last reason names: the
    entry named and those before it (``F/0``..``F/M``), and as many as the limit (the cache
    held that many entries when torch refused: 2.5/2.6 name the oldest entry, ``F/0``)."""
    n = limit_entries(limit, 0)
    n = max(n, (failed.compile or 0) + 1)
    return {f"{failed.frame_key}/{i}" for i in range(min(n, MAX_IMPLIED))}


class Unnumbered:
    """What records without a compile id prove, per (rank, function, file, first line): two
    functions of one name in one file are two code objects (pytorch#97330: torch 2.0's limit
    warnings for ``<resume in paste_mask_in_image>`` at lines 406 and 407)."""

    def __init__(self) -> None:
        # [recompiles, proven] per (rank, function, file, first line or None)
        self._seen: dict[tuple[int | None, str, str, int | None], list[int]] = {}

    def _add(self, rank: int | None, function: str, file: str, first: int | None, proven: int,
             recompile: bool) -> None:
        if not function:  # a record the paste began inside: whose function is not known
            return
        got = self._seen.setdefault((rank, function, file, first), [0, 0])
        got[0] += recompile
        got[1] = max(got[1], proven, got[0] + 1)

    def recompile(self, e: ev.Recompile) -> None:
        """A recompile: one compile before it, and each cache entry it lists as failed; one that
        torch refused (fail_on_recompile, error_on_recompile) compiled nothing of its own."""
        failed = e.entries or len(e.failures)
        if e.refused:
            self._add(e.rank, e.function, e.file, e.first_line, max(failed, 1), False)
        else:
            self._add(e.rank, e.function, e.file, e.first_line, failed + 1, True)

    def limit(self, e: ev.RecompileLimit) -> None:
        """A limit warning: as many cache entries as the limit."""
        n = limit_entries(e.limit, 1)
        self._add(e.rank, e.function, e.file, e.first_line, n, False)

    def frames(self, known: set[tuple[int | None, str]]) -> list[FrameReport]:
        """A frame row (id ``?``) for each function no numbered frame already names. A record
        without the first line counts toward the one function of its name and file that has
        one, when there is exactly one."""
        lines: dict[tuple[int | None, str, str], list[int]] = {}  # the first lines of each name
        for rank, fn, file, first in self._seen:
            if first is not None:
                lines.setdefault((rank, fn, file), []).append(first)
        seen: dict[tuple[int | None, str, str, int | None], int] = {}
        for (rank, fn, file, first), (_, proven) in self._seen.items():
            at = lines.get((rank, fn, file), [])
            key = (rank, fn, file, at[0] if first is None and len(at) == 1 else first)
            seen[key] = max(seen.get(key, 0), proven)
        return [FrameReport(rank=rank, frame_id="?", function=fn, file=file, first_line=first,
                            compiles=proven, at_least=True)
                for (rank, fn, file, first), proven in seen.items() if (rank, fn) not in known]

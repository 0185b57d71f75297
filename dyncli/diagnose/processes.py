"""Which trace files are read, and which process (rank) each one is.

torch writes one TORCH_TRACE file per process (``LazyTraceHandler`` in
torch/_logging/_internal.py, 2.3-2.15): ``dedicated_log_torch_trace_[rank_N_]XXXX.log``.
Every file is therefore its own process with its own compile ids. Its rank is, in order:

1. the ``rank`` of its envelopes (torch writes it once torch.distributed is initialized);
2. the file name: ``rank_N`` followed by ``_``, ``.`` or the end (copies get renamed);
3. unknown (None).

When two files claim one rank (two runs of a job written into one directory, or a rank field
that repeats), or several files have no rank, each of them gets a ``label`` made from its file
name; the label goes in front of its compile ids (``CompileId.process``), so they never merge,
and a warning names the files.

In a directory, a file that is empty, unreadable or not a trace is skipped with one warning;
it is an error only when no trace file is left. A file named explicitly is read as given
(and fails as before when it is not a trace).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dyncli.errors import InputError
from dyncli.inputs import SeenFiles, Source, open_input, rank_in_name, trace_dir_files
from dyncli.logparse import safe
from dyncli.logparse.trace_format import is_trace_line, peek_kind

# Envelopes looked at for a rank before giving up (the first dynamo_start carries it when
# torch.distributed was initialized before compiling, the usual order).
_RANK_SCAN_ENVELOPES = 200
_RANK_SCAN_LINES = 200_000
_LABEL_CHARS = re.compile(r"[^A-Za-z0-9.-]+")


@dataclass(frozen=True)
class Process:
    """One trace input: a file (``path``) or a stream, its rank and where the rank came from."""

    name: str
    path: Path | None = None
    rank: int | None = None
    rank_from: str | None = None  # "envelope" | "file name" | None (unknown)
    label: str = ""  # set when another input claims the same rank

    @property
    def file(self) -> Path:
        """The path of a file input (not for streams)."""
        if self.path is None:
            raise ValueError(f"{self.name} is a stream, not a file")
        return self.path


def check_trace(source: Source) -> None:
    """Refuse a file whose first line is not a trace envelope (one ``InputError`` line)."""
    if not is_trace_line(source.first):
        raise InputError(f"{source.name}: not a TORCH_TRACE file (no JSON envelope on its "
                         "first line)")


def envelope_rank(source: Source) -> int | None:
    """The ``rank`` of the first envelope that has one (scanning a bounded head), else None."""
    envelopes = 0
    for n, line in enumerate(source.lines()):
        if n >= _RANK_SCAN_LINES or envelopes >= _RANK_SCAN_ENVELOPES:
            break
        if line[:1] == b"\t" or b'"rank": ' not in line:
            envelopes += line[:1] != b"\t"
            continue
        envelopes += 1
        kind = peek_kind(line.rstrip(b"\r\n"))
        if kind is None or kind == "str":
            continue
        try:
            env = safe.loads(line[line.find(b"] {") + 2:])
        except ValueError:
            continue
        rank = safe.json_int(env.get("rank")) if isinstance(env, dict) else None
        if rank is not None and rank >= 0:
            return rank
    return None


def _label(path: Path) -> str:
    stem = path.name.removesuffix(".gz").removesuffix(".log").removeprefix("dedicated_log_torch_trace_")
    return _LABEL_CHARS.sub("-", stem).strip("-") or "trace"


def _probe(path: Path, in_dir: bool) -> tuple[Process | None, str | None]:
    """(process, None), or (None, warning) for a directory's file that cannot be read."""
    try:
        with open_input(path) as source:
            if not is_trace_line(source.first):
                if in_dir:
                    return None, f"{path}: skipped: not a TORCH_TRACE file (no JSON envelope " \
                                 "on its first line)"
                return Process(str(path), path, rank_in_name(path),
                               "file name" if rank_in_name(path) is not None else None), None
            rank = envelope_rank(source)
    except InputError as exc:
        if not in_dir:
            raise
        return None, f"{exc.message.rstrip('.')}; skipped"
    if rank is not None:
        return Process(str(path), path, rank, "envelope"), None
    named = rank_in_name(path)
    return Process(str(path), path, named, "file name" if named is not None else None), None


def find_processes(paths: Sequence[Path], streams: Sequence[Source] = ()
                   ) -> tuple[list[Process], list[str]]:
    """The processes of ``streams`` (first, in order) and ``paths``, and the warnings for
    files skipped. Raises ``InputError`` when a directory has no trace file, or when every
    file found was skipped."""
    procs = [Process(s.name) for s in streams]
    warnings: list[str] = []
    tried: list[str] = []
    seen = SeenFiles()
    for path in map(Path, paths):
        if path.is_dir():
            files = trace_dir_files(path)
            if not files:
                raise InputError(f"{path}: directory has no TORCH_TRACE files "
                                 "(dedicated_log_torch_trace*.log)",
                                 hint="Pass the directory given to TORCH_TRACE, or one trace file.")
        elif path.exists():
            files = [path]
        else:
            raise InputError(f"{path}: no such file or directory")
        for file in files:
            if (twice := seen.again(file)) is not None:  # its compiles would count twice
                warnings.append(twice)
                continue
            tried.append(str(file))
            if not file.is_file():  # a pipe given as a path: read as one stream, rank unknown
                procs.append(Process(str(file), file))
                continue
            proc, why = _probe(file, path.is_dir())
            if proc is None:
                warnings.append(why or f"{file}: skipped")
            else:
                procs.append(proc)
    if not procs:
        raise InputError(f"{', '.join(map(str, paths))}: no readable TORCH_TRACE file "
                         f"({len(tried)} skipped: {'; '.join(warnings)[:400]})")
    return _label_shared(procs, warnings), warnings


def _label_shared(procs: list[Process], warnings: list[str]) -> list[Process]:
    """Label the inputs that share a rank (or share not having one)."""
    by_rank: dict[int | None, list[int]] = defaultdict(list)
    for i, p in enumerate(procs):
        by_rank[p.rank].append(i)
    used: set[str] = set()
    out = list(procs)
    for rank, members in by_rank.items():
        if len(members) < 2:
            continue
        for i in members:
            path = procs[i].path
            label = base = _label(path) if path is not None else "stdin"
            n = 2
            while label in used:
                label, n = f"{base}-{n}", n + 1
            used.add(label)
            out[i] = replace(procs[i], label=label)
        who = "no rank" if rank is None else f"rank {rank}"
        names = ", ".join(f"{Path(out[i].name).name} ({out[i].label})" for i in members)
        warnings.append(f"{len(members)} trace files have {who}: {names}; each is read as its "
                        "own process, its compile ids prefixed with its label (label:0/0)")
    return out

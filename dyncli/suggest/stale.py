"""Stale PGO state: frames whose source file changed since torch recorded them.

torch keys PGO state by ``CodeId`` (``torch/_dynamo/pgo.py``, the same in 2.14.1 and 2.15.0),
whose equality is ``(file_hash, firstlineno, name, closure_hash)``, the path left out. Its
``file_hash`` is ``_hash_containing_file(co_filename)``: the CRC-32 of the file's bytes as 8
lower-case hex digits, or the path itself when the file did not exist. So once the file is
edited, torch computes another ``CodeId`` for the same function and the recorded state no
longer applies to it: suggesting from it describes code that is gone.

dyncli hashes the file the same way, at its recorded path or, with ``--source-root DIR``
(state copied off another machine), at the longest tail of that path found under ``DIR``
(``/job/src/pkg/train.py`` → ``DIR/job/src/pkg/train.py``, ``DIR/src/pkg/train.py``,
``DIR/pkg/train.py``, ``DIR/train.py``: the first that exists). A frame whose file is found
nowhere is not checked (a note says how many).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from dyncli.suggest.pgo_state import FrameKey

# Big source files are rare; a path that names a huge or special file is not read past this.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class StaleFrame:
    """A recorded frame whose source file no longer hashes as torch recorded it."""

    function: str
    file: str
    line: int
    recorded_hash: str
    checked: str  # the file that was hashed
    current_hash: str


@dataclass(frozen=True)
class StaleCheck:
    """What the check found: the stale frames, and how many frames could not be checked."""

    stale: tuple[StaleFrame, ...]
    checked: int
    unchecked: int

    def notes(self, source_root: str | None) -> list[str]:
        """One line for the report when some frames could not be checked."""
        if not self.unchecked:
            return []
        where = f"under --source-root {source_root}" if source_root else "at their recorded paths"
        return [f"{self.unchecked} frame(s) not checked for staleness: their files are not found "
                f"{where}" + ("" if source_root else " (state from another machine? --source-root DIR)")]


def file_hash(path: Path) -> str | None:
    """torch's ``_hash_containing_file``: CRC-32 of the bytes, ``%08x``; None if unreadable."""
    try:
        with path.open("rb") as f:
            crc = 0
            read = 0
            while chunk := f.read(1 << 20):
                read += len(chunk)
                if read > MAX_SOURCE_BYTES:
                    return None
                crc = zlib.crc32(chunk, crc)
    except OSError:
        return None
    return format(crc & 0xFFFFFFFF, "08x")


def _candidates(recorded: str, root: Path | None) -> Iterable[Path]:
    if root is None:
        yield Path(recorded)
        return
    pure = PureWindowsPath(recorded) if "\\" in recorded and "/" not in recorded else PurePosixPath(recorded)
    parts = [p for p in pure.parts if p not in (pure.anchor, "", ".", "..")]
    for i in range(len(parts)):
        yield root.joinpath(*parts[i:])


def _locate(recorded: str, root: Path | None) -> Path | None:
    for candidate in _candidates(recorded, root):
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def find_stale(keys: Iterable[FrameKey], source_root: Path | None = None) -> StaleCheck:
    """Hash each frame's file as torch does and report those whose hash changed.

    Frames without a recorded hash, or whose recorded "hash" is the path itself (torch found
    no file: ``<string>``, generated code), cannot be checked and are not counted.
    """
    stale: list[StaleFrame] = []
    checked = unchecked = 0
    hashes: dict[Path, str | None] = {}
    located: dict[str, Path | None] = {}  # thousands of frames share a few files
    for key in keys:
        if not key.file_hash or key.file_hash == key.filename:
            continue
        if key.filename not in located:
            located[key.filename] = _locate(key.filename, source_root)
        path = located[key.filename]
        if path is None:
            unchecked += 1
            continue
        if path not in hashes:
            hashes[path] = file_hash(path)
        current = hashes[path]
        if current is None:
            unchecked += 1
            continue
        checked += 1
        if current != key.file_hash:
            stale.append(StaleFrame(key.name, key.filename, key.line, key.file_hash, str(path), current))
    return StaleCheck(tuple(stale), checked, unchecked)

"""Result files written atomically, and output paths checked before any work.

A result file is written to a temp file beside it and renamed over it, so a reader never sees
half a file and an interrupted run keeps the previous one; a temp file left by a killed
writer is swept on the next write. :mod:`dyncli.output` re-exports these for the commands.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dyncli.errors import OutputError, UsageError


def check_target(path: str | Path | None, option: str = "--json") -> None:
    """Refuse, before any work is done, an output path that cannot be written.

    ``-`` (stdout) and ``None`` pass. Refused: an empty path, a directory, a path whose
    directory is absent or not writable, a name too long for the file system, an existing
    file that is not writable. An existing device or FIFO passes: it is written directly.
    """
    if path is None or str(path) == "-":
        return
    text = str(path)
    if not text:
        raise UsageError(f"{option}: empty path", hint="Give a file name, or - for stdout.")
    target = Path(text)
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a name too long, a parent without search permission, a loop
        raise OutputError(f"{option} {text}: cannot write: {exc.strerror or exc}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{option} {text}: is a directory",
                          hint=f"Give a file name, e.g. {target / ('result' + (target.suffix or '.json'))}")
    if st is not None and not os.access(target, os.W_OK):
        raise OutputError(f"{option} {text}: is not writable")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return  # a device or FIFO: written directly, never replaced
    directory = target.parent
    if not directory.is_dir():
        raise OutputError(f"{option} {text}: cannot write: directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {text}: cannot write in directory {directory}")
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    # the temp file beside it adds ~14 characters to the name
    if len(os.fsencode(target.name)) + 14 > name_max:
        raise OutputError(f"{option} {text}: file name too long ({len(target.name)} characters)")


def check_outputs(targets: dict[str, str | Path | None]) -> None:
    """``check_target`` for each ``{option: path}``; at most one of them may be ``-`` (stdout)."""
    dashes = [option for option, path in targets.items() if path is not None and str(path) == "-"]
    if len(dashes) > 1:
        raise UsageError(f"{' and '.join(dashes)} cannot both write to stdout (-)",
                         hint="Write one of them to a file.")
    for option, path in targets.items():
        check_target(path, option)


def _special(path: Path) -> bool:
    """Whether ``path`` exists and is not a regular file (a device such as /dev/null, a FIFO)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


# Temp files being written: removed if a signal ends the process before they are renamed.
_PENDING: set[Path] = set()


def remove_pending() -> None:
    """Remove the temp files of writes still in progress (called on SIGTERM, SIGINT)."""
    for tmp in list(_PENDING):
        with suppress(OSError):
            os.unlink(tmp)
        _PENDING.discard(tmp)


def _temp_head(path: Path) -> str:
    """``.NAME.HOST-``: the start of every temp file name of ``path`` written on this host.

    A temp file is ``.NAME.HOST-PID.XXXXXXXX.tmp``, so a later write can tell a stale one. The
    name is cut to 100 characters so that a long (but legal) target name still leaves room for
    the rest within the 255-byte limit of a file name.
    """
    host = "".join(c if c.isalnum() else "_" for c in os.uname().nodename)[:40] or "host"
    return f".{path.name[:100]}.{host}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or not a pid we can ask about: leave it
    return True


def sweep_stale(path: Path) -> int:
    """Remove temp files that an earlier write of ``path`` on this host left when killed.

    SIGKILL (the OOM killer, ``kill -9``, a CI timeout) cannot be caught, so the temp file of
    a write in progress stays behind. Its name carries the host and pid of the writer; one
    whose writer is no longer running on this host is removed. Temp files of other hosts (a
    shared file system) and of live processes are left alone. Returns how many were removed.
    """
    head = _temp_head(path)
    directory = path.parent if str(path.parent) else Path(".")
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not (name.startswith(head) and name.endswith(".tmp")):
            continue
        pid_text = name[len(head):].split(".", 1)[0]
        if not pid_text.isdigit() or len(pid_text) > 10:
            continue
        pid = int(pid_text)
        if pid == os.getpid() or _pid_alive(pid):
            continue
        with suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed += 1
    return removed


@contextmanager
def atomic_target(path: str | Path) -> Iterator[Path]:
    """A temp file beside ``path`` to write; renamed over ``path`` when the block succeeds.

    A reader never sees a half-written file, an interrupted write leaves the old one, and the
    result gets the mode an ordinary ``open()`` would give it (``mkstemp`` makes 0600). An
    existing device or FIFO (``/dev/null``, ``/dev/stdout``) is written directly: replacing it
    with a regular file would break it for everyone. A temp file that an earlier, killed
    writer of the same target left behind is removed first (:func:`sweep_stale`). An
    ``OSError`` (full disk, no permission) becomes one ``OutputError`` naming the file.
    """
    path = Path(path)
    if _special(path):
        try:
            yield path
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        return
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise OutputError(f"{path}: cannot write: directory {directory} does not exist")
    sweep_stale(path)
    try:
        import tempfile  # here: its import (random, hashlib) is start-up time of every command

        fd, name = tempfile.mkstemp(prefix=f"{_temp_head(path)}{os.getpid()}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    _PENDING.add(tmp)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _PENDING.discard(tmp)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_target`), fsync'd."""
    # backslashreplace: a lone surrogate (from a non-UTF-8 file name or log) cannot be
    # encoded; it is written as \udcff rather than failing the whole write.
    with atomic_target(path) as tmp, tmp.open("w", encoding="utf-8", errors="backslashreplace",
                                              newline="\n") as fh:
        fh.write(text)
        fh.flush()
        with suppress(OSError):  # a device or FIFO cannot be fsync'd
            os.fsync(fh.fileno())

"""What the command line needs before anything else is imported: Ctrl-C and SIGTERM as one line.

Importing the app (typer, rich) takes a noticeable moment; a Ctrl-C then would print a
traceback from whatever module was being imported, and a SIGTERM would kill the process
before ``dyncli.cli`` installs its handler (exit -15). Imported first thing by the console
script and ``python -m dyncli`` (never by ``import dyncli`` in a user's program): SIGTERM
raises ``KeyboardInterrupt`` as it does once the app runs, and a ``KeyboardInterrupt`` that
escapes prints "Interrupted" instead of a traceback (Python then exits as killed by SIGINT:
status 130 in the shell). Only the interpreter's own start-up, before this runs, is left.
"""

from __future__ import annotations

import signal
import sys
from types import TracebackType

_previous_hook = sys.excepthook


def _interrupted_hook(kind: type[BaseException], value: BaseException,
                      tb: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.stderr.write("\nInterrupted\n")
        return
    _previous_hook(kind, value, tb)


def _sigterm(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def install() -> None:
    """Install the hook and the SIGTERM handler (once; a handler someone set is kept)."""
    if sys.excepthook is not _interrupted_hook:
        sys.excepthook = _interrupted_hook
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _sigterm)


def is_cli_start() -> bool:
    """Whether this process is starting the dyncli command (console script or ``-m dyncli``)."""
    argv0 = sys.argv[0] if sys.argv else ""
    name = argv0.replace("\\", "/").rsplit("/", 1)[-1]
    return argv0 == "-m" or name in ("dyncli", "dyncli.exe", "dyncli-script.py")


# Set by a command once everything it writes is written (``diagnose``): the process then
# ends without tearing the interpreter down (see :func:`exit_now`).
fast_exit = False


def exit_interrupted() -> None:
    """End an interrupted run with status 130, as documented, however Python was started.

    CPython (3.11-3.13) sets its "unhandled KeyboardInterrupt" flag whenever a
    KeyboardInterrupt leaves an ``exec()`` of a string, even one caught further up;
    ``dataclasses`` build every class's methods that way, so a Ctrl-C while a module with a
    dataclass is imported sets it. ``python -m dyncli`` then ends the process by SIGINT
    (status -2 to a parent that waits for it) instead of the 130 the command returned.
    Leaving through :func:`exit_now`'s path (streams flushed, exit handlers run) keeps 130.
    """
    global fast_exit
    fast_exit = True
    exit_now(130)


def exit_now(code: object) -> None:
    """End the process at once with ``code`` when a command asked for it (``fast_exit``):
    the streams flushed and the exit handlers run (multiprocessing's, finalizers of temp
    files) as at a normal exit, but not the interpreter's teardown, which frees every object
    one by one (~0.03 s after a 100 MB trace's diagnosis). Returns, for the normal exit,
    when not asked, or when the code is not a number or a stream cannot be flushed."""
    if not fast_exit or not (code is None or isinstance(code, int)):
        return
    import atexit
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe, a closed stream: the normal way handles it
        return
    atexit._run_exitfuncs()
    os._exit(code or 0)


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

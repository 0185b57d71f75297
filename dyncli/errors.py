"""The one exception hierarchy of dyncli, and its exit codes.

Core code raises these; ``dyncli.cli`` turns them into ``Error: …`` / ``Hint: …`` on stderr
and an exit code, in one place; Python callers of ``dyncli.bench.run`` & co. catch them.
Anything else that escapes is a bug and keeps its traceback.

Exit codes, the same for every command:

- 0: ran; nothing to report against a gate;
- 1: ran, and a gate tripped (``--fail-on``, ``--strict``) or a measured failure
  (``GateError`` and its subclasses, and a bare ``DyncliError``);
- 2: could not run: usage, configuration, an input that is absent, unreadable or not a
  log/trace/PGO state, a model that cannot be built (``CouldNotRun`` and its subclasses).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE = 1
EXIT_COULD_NOT_RUN = 2
EXIT_INTERRUPTED = 130


class DyncliError(Exception):
    """A failure the user can act on. ``hint`` names the next step."""

    exit_code = EXIT_GATE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class GateError(DyncliError):
    """The run finished, and what it found trips a gate (``--fail-on``) or failed when measured."""

    exit_code = EXIT_GATE


class CouldNotRun(DyncliError):
    """dyncli could not do what was asked: nothing was measured or analysed."""

    exit_code = EXIT_COULD_NOT_RUN


class UsageError(CouldNotRun):
    """Options that contradict each other or name something that does not exist."""


class ConfigError(CouldNotRun):
    """An autodyn.toml / pyproject.toml / DYNCLI_* / API option that is unknown or of the wrong type."""


class InputError(CouldNotRun):
    """A file given to dyncli that is absent or cannot be read as what it should be (log, trace, PGO state)."""


class StrictError(InputError):
    """``--strict``: the input was read, and a line dyncli did not understand trips the gate."""

    exit_code = EXIT_GATE


class ModelError(CouldNotRun):
    """A model that cannot be found or built."""

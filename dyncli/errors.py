"""The one exception hierarchy of dyncli.

Core code raises these; `dyncli.cli` turns them into ``Error: …`` / ``Hint: …`` on stderr
and an exit code, in one place. Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class DyncliError(Exception):
    """A failure the user can act on. ``hint`` names the next step."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(DyncliError):
    """Options that contradict each other or name something that does not exist."""

    exit_code = 2


class ConfigError(DyncliError):
    """An autodyn.toml / pyproject.toml / DYNCLI_* value that is unknown or of the wrong type."""

    exit_code = 2


class InputError(DyncliError):
    """A file given to dyncli that cannot be read as what it should be (log, trace, PGO state)."""


class ModelError(DyncliError):
    """A model that cannot be found or built."""


class NotImplementedYet(DyncliError):
    """A command whose implementation has not landed."""

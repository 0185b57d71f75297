"""The engine's callbacks to the front end (:class:`Hooks`) and one model call as the harness
made it (:class:`Call`). No torch; :mod:`dyncli.bench.core.result` re-exports both."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dyncli.bench.core.result import BenchResult


@dataclass
class Hooks:
    """Callbacks from the engine to the front end; all optional.

    ``progress(strategy, done, total)`` after each variation; ``warning(text)`` once per
    warning; ``run_done(result)`` after each strategy (the command writes partial files here);
    ``tap(call)`` sees every model call the harness makes (tests prove eager and compiled get
    the same inputs with it); ``started()`` once the settings are checked, as the model's
    building begins (the first seconds without progress). ``origins``: where each setting
    came from (the command's resolved config: ``command line``, ``autodyn.toml``, …), so a
    warning about a value can say it came from a file; None from the Python API. ``said``:
    warnings the front end has already shown (the notes on its own options, ``--emit-file``
    without ``--emit``, ``--resume`` without ``--suite``): kept first in the result's
    ``warnings``, so the JSON holds every warning the user saw, each once, and not shown again.
    """

    progress: Callable[[str, int, int], None] | None = None
    started: Callable[[], None] | None = None
    warning: Callable[[str], None] | None = None
    run_done: Callable[[BenchResult], None] | None = None
    tap: Callable[[Call], None] | None = None
    origins: Mapping[str, str] | None = None
    said: tuple[str, ...] = ()

    def warner(self, warnings: list[str]) -> Callable[[str], None]:
        """``warn(text)``: the text kept in ``warnings`` (the result's) and passed to
        ``warning``."""
        def warn(text: str) -> None:
            warnings.append(text)
            if self.warning:
                self.warning(text)
        return warn


@dataclass(frozen=True)
class Call:
    """One model call as the harness made it (for ``Hooks.tap``)."""

    strategy: str
    variation: int
    phase: str  # first | warmup | timed
    side: str   # eager | compiled
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

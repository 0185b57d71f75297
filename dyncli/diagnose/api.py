"""``dyncli.diagnose.run``: logs or traces in, a :class:`Diagnosis` out (the command's one core call).

The whole pipeline behind one call: the child processes (``children``: the parsing child of
one big trace is forked first, before the analysis is imported), the reading and analysis
(``read``, ``read_trace``), and the conclusions (``conclude``), given the installed torch's
graph-break registry. Importing this module imports none of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dyncli.config import DiagnoseConfig, config_or_options
from dyncli.errors import UsageError

if TYPE_CHECKING:
    from dyncli.diagnose.model import Diagnosis


def run(paths: str | Path | Sequence[str | Path], *, config: DiagnoseConfig | None = None,
        **options: Any) -> Diagnosis:
    """Read TORCH_LOGS text logs or TORCH_TRACE traces and explain what recompiled and why.

    ``paths``: one path or several: text logs (``.gz`` too), TORCH_TRACE dirs or trace
    files, or ``"-"`` for stdin (a trace there is recognised by its content). Several text
    logs are read as parts of one log (e.g. one per rank). ``options`` are the
    ``[diagnose]`` config keys (``strict``, ``fail_on``, ``limit``, ``jobs``), validated as in
    ``autodyn.toml``; or pass ``config``. ``fail_on`` does not raise here: the result's
    ``tripped`` lists what it found of them (the command exits 1 on that); ``limit`` only
    shortens the terminal view.

    Raises ``InputError`` for an absent or unreadable input, ``StrictError`` (with
    ``strict=True``) for a line the parser did not understand, ``UsageError`` for inputs that
    cannot be read together.
    """
    cfg: DiagnoseConfig = config_or_options("diagnose", config, options,
                                            where="dyncli.diagnose.run")
    if cfg.jobs is not None and cfg.jobs < 1:
        raise UsageError("--jobs must be >= 1", hint="--jobs 1 reads the files one by one")
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    from dyncli.diagnose import children

    # One big trace file: its parsing child starts now, before the analysis is imported (the
    # reading takes it over; it reads the same file either way)
    children.prestart([str(p) for p in items], cfg.jobs, cfg.strict)
    try:
        from dyncli.diagnose.graph_breaks import installed_registry
        from dyncli.diagnose.read import diagnose_inputs

        diag = diagnose_inputs(items, strict=cfg.strict, jobs=cfg.jobs,
                               registry=installed_registry)
    finally:
        children.discard_early()  # not taken over (an error, another decision): stopped
    return dataclasses.replace(diag, fail_on=tuple(cfg.fail_on))

"""Option aliases shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dyncli.config import Resolved, resolve
from dyncli.output import stderr_console

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", metavar="PATH",
                 help="Config file (autodyn.toml, or a pyproject.toml with [tool.dyncli]). "
                      "Default: the nearest one from the working directory upward."),
]
JsonOpt = Annotated[
    str | None,
    typer.Option("--json", metavar="PATH", help="Write the result as JSON to PATH ('-' for stdout)."),
]
MaxExpansionOpt = Annotated[
    float | None,
    typer.Option("--max-expansion", metavar="RATIO",
                 help="Refuse a .gz input that expands past RATIO times its size (a "
                      "decompression bomb). 0 = no bound. [default: 100]"),
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Show where each effective setting came from."),
]


def resolve_config(table: str, config: Path | None, verbose: bool, **flags: Any) -> Resolved:
    """Resolve ``[table]`` from file, environment and flags; with ``verbose`` list the origins."""
    resolved = resolve(table, flags, config_path=config)
    if verbose:
        err = stderr_console()
        where = str(resolved.file) if resolved.file else "none found"
        err.print(f"config file: {where}", markup=False, highlight=False)
        for key, value, origin in resolved.describe():
            err.print(f"  {table}.{key} = {value!r}  ({origin})", markup=False, highlight=False)
    return resolved

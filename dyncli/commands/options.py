"""Option aliases shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:  # imported when a command runs: `dyncli --help` needs neither (start-up)
    from dyncli.config import Resolved

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
    from dyncli.config import resolve, spelled

    resolved = resolve(table, flags, config_path=config)
    if verbose:
        from dyncli.output import stderr_console

        err = stderr_console()
        where = str(resolved.file) if resolved.file else "none found"
        err.print(f"config file: {where}", markup=False, highlight=False)
        for key, value, origin in resolved.describe():
            name = spelled(table, key, resolved.origins[key])
            err.print(f"  {name} = {value!r}  ({origin})", markup=False, highlight=False)
    return resolved


class PanelCommand(TyperCommand):
    """A command whose plain-text ``--help`` groups options under their ``rich_help_panel``.

    The app prints plain help (``rich_markup_mode=None``), where typer ignores panels; a
    command with 30 options reads better in groups. Options without a panel come last,
    under "Options". ``panel_order`` puts panels in that order (others follow as declared).
    """

    panel_order: tuple[str, ...] = ()

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """Arguments, then one section per panel in the order the options declare them."""
        args: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append(record)
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None) or "Options",
                                  []).append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        rest = panels.pop("Options", [])
        ordered = sorted(panels.items(), key=lambda kv: self.panel_order.index(kv[0])
                         if kv[0] in self.panel_order else len(self.panel_order))
        for title, records in [*ordered, ("Options", rest)]:
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)

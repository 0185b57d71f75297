"""The dyncli Typer app: the one registry of commands and the one place errors become exit codes.

Importing this module must not import torch: ``dyncli --help``, ``diagnose`` and ``suggest``
run on machines without it (a test asserts this).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from dyncli import __version__
from dyncli.commands import bench, compare, diagnose, suggest
from dyncli.errors import DyncliError


def report_error(err: DyncliError) -> None:
    """Print ``Error: …`` and ``Hint: …`` to stderr; the traceback too when DYNCLI_DEBUG=1."""
    if os.environ.get("DYNCLI_DEBUG", "") not in ("", "0"):
        traceback.print_exception(err, file=sys.stderr)
    sys.stderr.write(f"Error: {err.message}\n")
    if err.hint:
        sys.stderr.write(f"Hint: {err.hint}\n")
    sys.stderr.flush()


class DyncliGroup(TyperGroup):
    """Turns every DyncliError raised by a command into a message and an exit code."""

    # Any: typer >= 0.2x vendors click as typer._click; its Context type is private.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except DyncliError as err:
            report_error(err)
            raise typer.Exit(err.exit_code) from None


app = typer.Typer(
    name="dyncli",
    cls=DyncliGroup,
    help="Toolkit for PyTorch 2 dynamic shapes: measure, diagnose and fix recompilation.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dyncli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Toolkit for PyTorch 2 dynamic shapes: measure, diagnose and fix recompilation."""


app.command("bench", help=bench.HELP, epilog=bench.EPILOG, no_args_is_help=False)(bench.bench)
app.command("diagnose", help=diagnose.HELP, epilog=diagnose.EPILOG)(diagnose.diagnose)
app.command("suggest", help=suggest.HELP, epilog=suggest.EPILOG)(suggest.suggest)
app.command("compare", help=compare.HELP, epilog=compare.EPILOG)(compare.compare)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="dyncli")

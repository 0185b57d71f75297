"""The dyncli Typer app: the one registry of commands and the one place errors become exit codes.

Importing this module must not import torch: ``dyncli --help``, ``diagnose`` and ``suggest``
run on machines without it (a test asserts this).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import signal
import sys
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup
from typer.models import CommandInfo

from dyncli import __version__, completion
from dyncli.commands import bench, compare, diagnose, suggest
from dyncli.errors import EXIT_COULD_NOT_RUN, EXIT_INTERRUPTED, DyncliError


def report_error(err: DyncliError) -> None:
    """Print ``Error: …`` and ``Hint: …`` to stderr; the traceback too when DYNCLI_DEBUG=1."""
    from dyncli.output import Output

    Output.error(err)  # Error:/Hint: with control characters escaped (dyncli.textsafe)


class DyncliGroup(TyperGroup):
    """Turns every DyncliError raised by a command into a message and an exit code."""

    # Any: typer >= 0.2x vendors click as typer._click; its Context type is private.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except DyncliError as err:
            report_error(err)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            # Before click turns it into "Aborted!" and exit 1: one line, the shell's 130.
            interrupted()
        except BrokenPipeError:
            # The reader of stdout went away (`dyncli … | head`): nothing more can be said.
            _quiet_stdout()
            raise typer.Exit(EXIT_COULD_NOT_RUN) from None
        except OSError as err:
            # The environment, not a bug: a full disk or an unreadable file met mid-run.
            what = f"{err.filename}: " if err.filename else ""
            report_error(DyncliError(f"{what}{err.strerror or err}"))
            raise typer.Exit(EXIT_COULD_NOT_RUN) from None


_SAID_INTERRUPTED = False


def interrupted() -> NoReturn:
    """Ctrl-C (or SIGTERM): remove temp files, one line on stderr, exit 130."""
    from dyncli.output import remove_pending

    global _SAID_INTERRUPTED
    remove_pending()
    _SAID_INTERRUPTED = True
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write("\nInterrupted\n")
        sys.stderr.flush()
    raise typer.Exit(EXIT_INTERRUPTED)


def _quiet_stdout() -> None:
    # Python would report the broken pipe again when it flushes stdout at exit.
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _on_sigterm(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt  # unwinds like Ctrl-C: temp files removed, exit 130


def _interrupted_at_exit(_signum: int, _frame: Any) -> None:
    """Ctrl-C (or SIGTERM) once the command is done, while Python runs its exit handlers
    (torch's compile workers shut down for seconds after bench printed its results): what
    was to be written is written, so leave at once with one line and 130, instead of
    "Exception ignored in atexit callback", a traceback and exit 0."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    if not _SAID_INTERRUPTED:  # one line, also when Ctrl-C already ended the command
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("\nInterrupted\n")
            sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _quiet_exit() -> None:
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, _interrupted_at_exit)
        signal.signal(signal.SIGTERM, _interrupted_at_exit)


app = typer.Typer(
    name="dyncli",
    cls=DyncliGroup,
    help="Toolkit for PyTorch 2 dynamic shapes: measure, diagnose and fix recompilation.",
    no_args_is_help=True,
    add_completion=False,  # ours below: they take the shell as a value
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
    install_completion: Annotated[
        str | None,
        typer.Option("--install-completion", metavar="[SHELL]", callback=completion.install, is_eager=True, expose_value=False,
                     autocompletion=completion.one_of(completion.SHELLS),
                     help="Install completion for SHELL (bash, zsh, fish, powershell; "
                          "default: the current shell)."),
    ] = None,
    show_completion: Annotated[
        str | None,
        typer.Option("--show-completion", metavar="[SHELL]", callback=completion.show, is_eager=True, expose_value=False,
                     autocompletion=completion.one_of(completion.SHELLS),
                     help="Print the completion script for SHELL (default: the current shell)."),
    ] = None,
) -> None:
    """Toolkit for PyTorch 2 dynamic shapes: measure, diagnose and fix recompilation."""


app.command("bench", help=bench.HELP, epilog=bench.EPILOG, no_args_is_help=False,
            cls=bench.Command)(bench.bench)
app.command("diagnose", help=diagnose.HELP, epilog=diagnose.EPILOG)(diagnose.diagnose)
app.command("suggest", help=suggest.HELP, epilog=suggest.EPILOG)(suggest.suggest)
app.command("compare", help=compare.HELP, epilog=compare.EPILOG)(compare.compare)


_COMPLETE_VAR = "_DYNCLI_COMPLETE"  # click's shell completion: set by the completion scripts


def _app_for(argv: list[str]) -> typer.Typer:
    """The app to run for ``argv``, built only as far as this run can reach.

    typer turns every command's signature into click options before it parses anything
    (bench's 40 options and their completion callbacks were ~20 ms of every start-up). A run
    that names its command first reaches that command alone (root options come before the
    command's name: such a run keeps the whole app). ``--help``, ``-h``, ``--version`` and no
    arguments reach none: the app's help lists each command by its name and help text only.
    Anything else (an unknown command, shell completion) gets the whole app.
    """
    if os.environ.get(_COMPLETE_VAR):  # completing: the words are in the environment
        return app
    one = copy.copy(app)
    if argv[1:] in ([], ["--help"], ["-h"], ["--version"]):
        one.registered_commands = [_listed(info) for info in app.registered_commands]
        return one
    chosen = [info for info in app.registered_commands if len(argv) > 1 and info.name == argv[1]]
    if not chosen:
        return app
    one.registered_commands = chosen
    return one


def _listed(info: CommandInfo) -> CommandInfo:
    """``info`` as the app's help lists it: its name and help text, no options."""
    listed = copy.copy(info)
    listed.callback = _not_run
    listed.cls = None
    return listed


def _not_run() -> None:  # pragma: no cover - stands for a command only in the app's help
    raise AssertionError("a command listed in the app's help was run")


def main() -> None:
    """Console-script entry point."""
    # A name or line holding a lone surrogate (a non-UTF-8 file name, a damaged log) must not
    # make the terminal view fail: such characters are shown escaped.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGTERM, _on_sigterm)
    completion.init()
    completion.default_shell(sys.argv)
    try:
        _app_for(sys.argv)(prog_name="dyncli")
    except KeyboardInterrupt:  # between start-up and a command (option parsing)
        try:
            interrupted()
        except typer.Exit as exc:
            raise SystemExit(exc.exit_code) from None
    finally:
        _quiet_exit()

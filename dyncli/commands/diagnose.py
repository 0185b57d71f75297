"""dyncli diagnose: TORCH_LOGS text and TORCH_TRACE traces → what recompiled, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dyncli import completion
from dyncli.commands.options import ConfigOpt, JsonOpt, MaxExpansionOpt, VerboseOpt, resolve_config

HELP = "Explain recompiles and specializations from torch logs and traces."
EPILOG = """\b
Examples:
  TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" \\
      python train.py 2> run.log
  dyncli diagnose run.log
  dyncli diagnose /tmp/trace --json diagnosis.json --fail-on recompiles
  TORCH_TRACE=/tmp/trace python train.py
  dyncli diagnose /tmp/trace --html report.html
  dyncli diagnose /tmp/trace --perfetto timeline.json   # ui.perfetto.dev
\b
Exit codes: 0 read; 1 a --fail-on item was found, or --strict met a line
it did not understand; 2 an input is absent or not a log/trace.
"""


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def diagnose(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH...", help="One or more: log files, .gz logs, TORCH_TRACE dirs or trace files, or - for stdin.", show_default=False)],
    fail_on: Annotated[list[str] | None, typer.Option("--fail-on", metavar="WHAT", help="Exit 1 when found: recompiles, specializations, graph-breaks (repeatable or comma list).", autocompletion=completion.diagnose_fail_on)] = None,
    strict: Annotated[bool | None, typer.Option("--strict/--no-strict", help="Exit 1 on unrecognized or malformed log lines.", show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", metavar="N", help="Rows per section on the terminal (JSON has all). [default: 20]")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", metavar="N", help="Processes reading trace rank files in parallel, or one big trace file beside the analysis (default: the core count; 1 = serial).")] = None,
    html_path: Annotated[str | None, typer.Option("--html", metavar="PATH", help="Also write a self-contained HTML report (one file, no external resources) to PATH ('-' for stdout).")] = None,
    perfetto_path: Annotated[str | None, typer.Option("--perfetto", metavar="PATH", help="Also write the compile timeline (each compile and its phases, a process per rank) as Chrome trace-event JSON for Perfetto to PATH ('-' for stdout); TORCH_TRACE inputs.")] = None,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
    max_expansion: MaxExpansionOpt = None,
) -> None:
    """Explain recompiles, specializations and graph breaks; exit 0 whenever the input was read."""
    from dyncli.inputs import set_max_expansion

    set_max_expansion(max_expansion)
    resolved = resolve_config("diagnose", config, verbose, fail_on=_split(fail_on), strict=strict,
                              limit=limit, jobs=jobs)
    # Imported here so that `dyncli --help` and the other commands do not pay for them.
    from dyncli.diagnose.api import run  # imports no analysis: run() forks a big trace's
    from dyncli.errors import GateError, UsageError  # parsing child before it does
    from dyncli.output import BackgroundWrite, Output, check_outputs

    check_outputs({"--json": json_path, "--html": html_path, "--perfetto": perfetto_path})

    # With --json -, --html - or --perfetto - stdout holds the document alone; the human view
    # goes to stderr.
    out = Output.for_targets(json_path, html_path, perfetto_path)
    diag = run([str(p) for p in paths], config=resolved.config)
    # the views (rich) imported once the reading is done: a big trace's parsing child, forked
    # while reading, starts that much sooner
    from dyncli.diagnose import render

    if verbose:
        render.render_parse_notes(diag)
    # the JSON file is built and written by a child while this process draws the view
    json_file = BackgroundWrite(json_path, diag.to_dict) if json_path is not None else None
    if html_path is not None:
        from dyncli.diagnose.html import write_html

        write_html(html_path, diag)
    if perfetto_path is not None:
        from dyncli.diagnose.perfetto import write_perfetto

        if diag.trace is None:
            raise UsageError("--perfetto needs a TORCH_TRACE input: a text log has no compile "
                             "times", hint="TORCH_TRACE=/tmp/trace python train.py && "
                             "dyncli diagnose /tmp/trace --perfetto timeline.json")
        write_perfetto(perfetto_path, diag)
    render.render_terminal(diag, limit=resolved.config.limit, console=out.view)
    if json_file is not None:
        json_file.join()
    from dyncli import startup

    startup.fast_exit = True  # all written: the process may end without its teardown
    if diag.tripped:
        raise GateError(f"found {', '.join(diag.tripped)} "
                        f"({resolved.given_as('fail_on', '--fail-on')})")

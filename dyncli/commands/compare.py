"""dyncli compare: two benchmark runs joined by (model, strategy); regressions gate CI."""

from __future__ import annotations

from typing import Annotated

import typer

from dyncli import completion
from dyncli.commands.options import ConfigOpt, JsonOpt, VerboseOpt, resolve_config

HELP = "Compare two benchmark runs: speedup, latency (with p-values), compiles; gate CI."
EPILOG = """\b
Examples:
  dyncli compare main.json pr.json
  dyncli compare main.json pr.json --fail-on regression -f markdown > pr.md
  dyncli compare harness_output.csv dyncli.json --plot changes.png
Exit codes: 0 compared, 1 a --fail-on gate tripped, 2 a file could not be
read.
"""


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def compare(
    base: Annotated[str, typer.Argument(metavar="BASE", help="The reference run: dyncli bench JSON, dyncli bench CSV or PyTorch harness CSV.", show_default=False)],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The run to check against BASE (same forms).", show_default=False)],
    threshold: Annotated[float | None, typer.Option("--threshold", metavar="FRACTION", help="Smallest change that counts: 0.05 = 5%. [default: 0.05]")] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", metavar="P", help="A change counts when its p-value is below this. [default: 0.01]")] = None,
    fail_on: Annotated[list[str] | None, typer.Option("--fail-on", metavar="WHAT", help="Exit 1 when found: regression, recompiles (repeatable or comma list).", autocompletion=completion.compare_fail_on)] = None,
    fmt: Annotated[str | None, typer.Option("--format", "-f", metavar="FORMAT", help="table, markdown (a PR comment) or json. [default: table]", autocompletion=completion.compare_formats)] = None,
    plot_path: Annotated[str | None, typer.Option("--plot", metavar="PATH", help="Write a PNG bar chart of the changes per model.")] = None,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Compare BASE and NEW; exit 1 when a --fail-on gate trips, 2 when a file can't be read."""
    resolved = resolve_config("compare", config, verbose, threshold=threshold, alpha=alpha,
                              fail_on=_split(fail_on), format=fmt)
    cfg = resolved.config
    from dyncli.compare import api, render
    from dyncli.output import check_outputs

    if plot_path == "-":
        from dyncli.errors import UsageError

        raise UsageError("--plot -: stdout holds the comparison; give the PNG a file name")
    check_outputs({"--json": json_path, "--plot": plot_path})
    result = api.run(base, new, config=cfg)
    render.write_output(result, cfg.format, json_path)
    if plot_path:
        render.write_plot(result, plot_path)
    result.check(resolved.given_as("fail_on", f"--fail-on {','.join(cfg.fail_on)}"))

"""dyncli suggest: PGO state → TORCH_COMPILE_DYNAMIC_SOURCES and the same fix in other forms."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dyncli import completion
from dyncli.commands.options import ConfigOpt, JsonOpt, MaxExpansionOpt, VerboseOpt, resolve_config

HELP = "Turn PGO state into TORCH_COMPILE_DYNAMIC_SOURCES (and the unbacked and static lists)."
EPILOG = """\b
Examples:
  dyncli suggest                     (torch's own cache dir and job id)
  dyncli suggest --pgo-dir cache/ --format python
  dyncli suggest --from-trace /tmp/trace_dir --json -
  dyncli suggest --redis redis://127.0.0.1:6379 --job-id train
  dyncli suggest --redis env --list-jobs
  dyncli suggest --pgo-dir cache/ --static "L['x']:1" --torch-version 2.15
  dyncli suggest --pgo-dir copied/ --source-root ~/src/project
  eval "$(dyncli suggest --pgo-dir cache/ --job-id train -f shell -q)"
\b
Exit codes: 0 suggested; 2 no usable PGO state, or bad options.
"""


def suggest(
    pgo_dir: Annotated[Path | None, typer.Option("--pgo-dir", metavar="DIR", help="Inductor cache dir, its dynamo/ dir, or one .pkl. [default: torch's own, as torch finds it]")] = None,
    from_trace: Annotated[str | None, typer.Option("--from-trace", metavar="PATH", help="A TORCH_TRACE file or dir (- for stdin): read the PGO state torch logged there.")] = None,
    redis: Annotated[str | None, typer.Option("--redis", metavar="URL", help="Read torch's Redis remote PGO cache (read-only); 'env' = TORCHINDUCTOR_REDIS_URL or _HOST/_PORT.")] = None,
    job_id: Annotated[str | None, typer.Option("--job-id", metavar="JOB", help="Only the files or keys of this TORCH_COMPILE_JOB_ID (default: merge all).")] = None,
    list_jobs: Annotated[bool, typer.Option("--list-jobs", help="List the job ids with PGO state and their ranks, then exit.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", "-f", metavar="FORM", help="env, shell, toml, python or json. [default: env]", autocompletion=completion.suggest_formats)] = None,
    include_params: Annotated[bool | None, typer.Option("--include-params/--no-include-params", help="Keep parameters and module attributes (left out by default).", show_default=False)] = None,
    frame: Annotated[str | None, typer.Option("--frame", metavar="REGEX", help="Only frames whose file:line:function matches.")] = None,
    exclude: Annotated[str | None, typer.Option("--exclude", metavar="REGEX", help="Drop sources whose name matches.")] = None,
    torch_version: Annotated[str | None, typer.Option("--torch-version", metavar="X.Y", help="Target torch (default: the installed one, else the newest known): which lists it reads; before 2.14 whole-source entries (no ':N').")] = None,
    static: Annotated[list[str] | None, typer.Option("--static", metavar="SOURCE,…", help="Keep these sources (or 'SOURCE:N' dims) static: TORCH_COMPILE_STATIC_SOURCES (torch >= 2.15), and out of the other lists.")] = None,
    unbacked: Annotated[bool, typer.Option("--unbacked/--no-unbacked", help="Dims seen with size 0 or 1 go to TORCH_COMPILE_UNBACKED_SOURCES (no 0/1 specialization); --no-unbacked keeps them dynamic.")] = True,
    source_root: Annotated[Path | None, typer.Option("--source-root", metavar="DIR", help="Where the recorded source files are now (state from another machine): check for stale frames there.")] = None,
    include_stale: Annotated[bool, typer.Option("--include-stale", help="Keep the sources of frames whose file changed since torch recorded them.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No per-frame report on stderr; warnings only.")] = False,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
    max_expansion: MaxExpansionOpt = None,
) -> None:
    """Turn PGO state into a TORCH_COMPILE_DYNAMIC_SOURCES list (the fix on stdout, the report on stderr)."""
    if from_trace is not None or max_expansion is not None:  # only a trace is read through it
        from dyncli.inputs import set_max_expansion

        set_max_expansion(max_expansion)
    resolved = resolve_config("suggest", config, verbose, format=fmt, include_params=include_params,
                              frame=frame, exclude=exclude, torch_version=torch_version)
    # Imported here so that `dyncli --help` and the other commands do not pay for them.
    from dyncli.output import check_target
    from dyncli.suggest.api import run
    from dyncli.suggest.render import print_allowlist

    check_target(json_path, "--json")
    if list_jobs:
        from dyncli.suggest.api import list_jobs as jobs
        from dyncli.suggest.render import print_jobs

        print_jobs(jobs(pgo_dir=pgo_dir, redis=redis), json_path)
        return
    result = run(pgo_dir=pgo_dir, from_trace=from_trace, job_id=job_id, redis=redis,
                 static=static, unbacked=unbacked, source_root=source_root,
                 include_stale=include_stale, config=resolved.config)
    print_allowlist(result, resolved.config.format, json_path, quiet)

"""dyncli suggest: PGO state → TORCH_COMPILE_DYNAMIC_SOURCES and the same fix in other forms."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dyncli.commands.options import ConfigOpt, JsonOpt, VerboseOpt, resolve_config
from dyncli.errors import NotImplementedYet

HELP = "Turn PGO state into a TORCH_COMPILE_DYNAMIC_SOURCES list."
EPILOG = """\b
Examples:
  dyncli suggest --pgo-dir /tmp/torchinductor_$USER
  dyncli suggest --pgo-dir cache/ --format python
"""


def suggest(
    pgo_dir: Annotated[Path | None, typer.Option("--pgo-dir", metavar="DIR", help="Inductor cache dir, its dynamo/ dir, or one .pkl.")] = None,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    resolve_config("suggest", config, verbose)
    raise NotImplementedYet("dyncli suggest is not implemented yet")

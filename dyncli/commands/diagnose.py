"""dyncli diagnose: TORCH_LOGS text and TORCH_TRACE traces → what recompiled, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dyncli.commands.options import ConfigOpt, JsonOpt, VerboseOpt, resolve_config
from dyncli.errors import NotImplementedYet

HELP = "Explain recompiles and specializations from torch logs and traces."
EPILOG = """\b
Examples:
  TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" python train.py 2> run.log
  dyncli diagnose run.log
  dyncli diagnose /tmp/trace --json diagnosis.json --fail-on recompiles
"""


def diagnose(
    paths: Annotated[list[Path], typer.Argument(help="Log files, .gz logs, TORCH_TRACE dirs, or - for stdin.")],
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    resolve_config("diagnose", config, verbose)
    raise NotImplementedYet("dyncli diagnose is not implemented yet")

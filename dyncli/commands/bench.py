"""dyncli bench: eager vs inductor on actually varied shapes, strategies side by side."""

from __future__ import annotations

from typing import Annotated

import typer

from dyncli.commands.options import ConfigOpt, JsonOpt, VerboseOpt, resolve_config
from dyncli.errors import NotImplementedYet

HELP = "Benchmark eager vs compiled on actually varied input shapes."
EPILOG = """\b
Examples:
  dyncli bench resnet50
  dyncli bench hf:BertModel --vary batch,seq --strategy static,automatic,dynamic
  dyncli bench model.py:build --variations 5 --device cpu --json out.json
"""


def bench(
    model: Annotated[str | None, typer.Argument(help="Model name, timm:NAME, hf:CLASS or FILE.py:FUNCTION.")] = None,
    variations: Annotated[int | None, typer.Option(help="Number of shapes to run (base included).")] = None,
    spread: Annotated[float | None, typer.Option(help="Vary sizes within base*(1±spread).")] = None,
    repeat: Annotated[int | None, typer.Option(help="Timed interleaved reps per variation.")] = None,
    warmup: Annotated[int | None, typer.Option(help="Untimed calls per variation.")] = None,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    resolve_config("bench", config, verbose, variations=variations, spread=spread,
                   repeat=repeat, warmup=warmup)
    raise NotImplementedYet("dyncli bench is not implemented yet")

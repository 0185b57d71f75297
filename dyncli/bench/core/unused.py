"""Options given where they do not apply: one row per option, said once as a warning. No torch.

A value can come from a flag, a ``DYNCLI_BENCH_*`` variable or ``autodyn.toml`` (set there for
the project's hf models, or its pad runs), so an option that does not apply is a warning, never
an error; before round 27 ``--buckets``, ``--max-buckets``, ``--resume`` and ``--emit-file`` were
dropped without a word. Each :class:`Use` says when its option applies and why it does not
otherwise; a row is judged at one of two moments:

- ``COMMAND``: the invocation's own options (``--resume``, ``--timeout``, ``--emit-file``),
  once, by the command that read them (never in a child process);
- ``RUN``: what one model's measurement uses (its strategies, its dims), after the model is
  built, once per model (a suite's entries may set their own strategies); a process measuring
  one strategy of the run gets them :func:`settled`.

A value equal to its default changes nothing and is never said (the repository's own
autodyn.toml spells every default out); where the settings' origins are known (the command's
resolved config) the warning names a value from a config file or the environment,
``(from autodyn.toml)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dyncli.bench.core import strategy as table
from dyncli.config import BenchConfig, spelled

COMMAND = "command"
RUN = "run"


@dataclass(frozen=True)
class Model:
    """What the rows need of a built model."""

    name: str
    source: str  # file, timm, hf, bare
    seq_len: int | None


@dataclass(frozen=True)
class Use:
    """One option: when it applies (for people, and ``applies``), and why not otherwise."""

    key: str
    stage: str
    when: str
    why_not: str  # may name {model} and {strategies}
    applies: Callable[[BenchConfig, Model | None], bool]


def _pads(cfg: BenchConfig) -> bool:
    return any(table.find(s).pads for s in cfg.strategy)


def _auto(cfg: BenchConfig) -> bool:
    return cfg.buckets.strip().lower() == "auto"


TABLE: tuple[Use, ...] = (
    Use("hf_config", RUN, "hf: models", "{model} is not one",
        lambda _c, m: m is not None and m.source == "hf"),
    Use("seq_len", RUN, "models with a sequence dim", "{model} has none (only hf: text and audio models do)",
        lambda _c, m: m is not None and m.seq_len is not None),
    Use("buckets", RUN, "the pad strategy", "no strategy run here pads ({strategies})",
        lambda c, _m: _pads(c)),
    Use("max_buckets", RUN, "--buckets auto with the pad strategy",
        "nothing chooses buckets here (buckets {buckets}; {strategies})",
        lambda c, _m: _pads(c) and _auto(c)),
    Use("resume", COMMAND, "--suite", "one model has no earlier models to keep",
        lambda c, _m: bool(c.suite)),
    Use("timeout", COMMAND, "--suite (each model) and --nproc runs (the collective wait)",
        "one in-process run has no child to stop", lambda c, _m: bool(c.suite) or c.nproc > 1),
    Use("emit_file", COMMAND, "--emit", "no plan is written without it",
        lambda c, _m: bool(c.emit)),
)

_DEFAULTS = BenchConfig()


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _named(key: str, value: Any, origin: str | None) -> str:
    """The option as the user set it: ``--buckets 8,16``, ``--resume``, or ``bench.buckets =
    8,16 (from autodyn.toml)`` from a file (``tool.dyncli.bench.buckets`` from a
    pyproject.toml) or the environment (no origin: the Python API)."""
    if origin == "command line":
        name = "--" + key.replace("_", "-")
        return name if value is True else f"{name} {_value(value)}"
    where = f" (from {origin.removeprefix('environment ')})" if origin else ""
    return f"{spelled('bench', key, origin)} = {_value(value)}{where}"


def _unused(cfg: BenchConfig, stage: str, model: Model | None,
            origins: Mapping[str, str] | None) -> list[tuple[Use, Any, str | None]]:
    """The rows of ``stage`` given and not applying, with their value and origin."""
    out = []
    for row in TABLE:
        value = getattr(cfg, row.key)
        if row.stage == stage and value != getattr(_DEFAULTS, row.key) \
                and not row.applies(cfg, model):
            out.append((row, value, origins.get(row.key) if origins is not None else None))
    return out


def notes(cfg: BenchConfig, stage: str, model: Model | None = None,
          origins: Mapping[str, str] | None = None) -> list[str]:
    """One warning per option of ``stage`` that was given and does not apply, in table order.

    A value equal to the default changes nothing, applying or not: never said (the
    repository's own autodyn.toml spells every default out). ``origins``: where each value came
    from (``Resolved.origins``), for the wording; None from the Python API or a suite's child."""
    out: list[str] = []
    for row, value, origin in _unused(cfg, stage, model, origins):
        why = row.why_not.format(model=model.name if model else "the model",
                                 strategies=", ".join(cfg.strategy), buckets=cfg.buckets)
        out.append(f"{_named(row.key, value, origin)}: for {row.when}; {why}, so it was not used")
    return out


def settled(cfg: BenchConfig, model: Model) -> dict[str, Any]:
    """The ``RUN`` options :func:`notes` said unused, at their defaults: what a child process
    measuring one strategy of this run gets, so that it does not say them again (it has
    neither the origins nor the whole strategy list, so it would word them otherwise)."""
    return {row.key: getattr(_DEFAULTS, row.key) for row, _v, _o in _unused(cfg, RUN, model, None)}

"""A :class:`~dyncli.bench.core.apply.Plan` written in three forms: ``bench --emit FORM``. No torch.

* ``python``: a standalone module (it imports only torch) defining
  ``compile_for_traffic(model)``: the code of :mod:`dyncli.bench.served` — the same code bench's
  runner measures every strategy through — below the plan as one literal, ``PLAN``;
* ``env``: ``export`` lines for what environment variables can say, and a comment naming
  what only code can do;
* ``toml``: the ``[bench]`` table that measures the same plan again with ``dyncli bench``,
  on the same traffic when the run's settings are given (the stream, mode, dtype, seed): the
  one form that re-measures, so the one that needs more than the plan.

Every value from the run (input names, sources, job ids, buckets) reaches generated text only
through the target language's quoting (:mod:`dyncli.quoting`): ``repr`` for Python (the plan is
a literal of reprs), TOML strings, shell words. A comment never holds input text.
"""

from __future__ import annotations

import ast
import functools
import pprint
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dyncli
from dyncli.bench.core import strategy as table
from dyncli.bench.core.apply import Plan
from dyncli.quoting import shell_quote, toml_comment, toml_str

EMIT_FORMS = ("python", "env", "toml")
# The runtime's source: read as text (the core never imports it; it imports torch).
RUNTIME = Path(__file__).resolve().parents[1] / "served.py"


def emit(plan: Plan, form: str, settings: Mapping[str, Any] | None = None) -> str:
    """The plan as ``python``, ``env`` or ``toml`` text (``ValueError``: a plan that cannot be
    emitted, or an unknown form). ``settings``: the run's ``[bench]`` settings as resolved
    (``BenchResult.settings``), which ``toml`` carries to measure the same traffic again."""
    if not plan.row.recommendable:
        raise ValueError(f"no plan to emit for strategy {plan.strategy!r}; one of "
                         f"{', '.join(table.recommendable())}")
    if form == "python":
        return python_module(plan)
    if form == "env":
        return env_lines(plan)
    if form == "toml":
        return toml_table(plan, settings)
    raise ValueError(f"unknown form {form!r}; one of {', '.join(EMIT_FORMS)}")


@functools.lru_cache(maxsize=1)
def runtime_code() -> str:
    """:mod:`dyncli.bench.served` without its module docstring."""
    text = RUNTIME.read_text(encoding="utf-8")
    first = ast.parse(text).body[0]
    lines = text.splitlines(keepends=True)
    return "".join(lines[first.end_lineno or 0:]).lstrip("\n")


def python_module(plan: Plan) -> str:
    """A standalone module defining ``compile_for_traffic(model)``."""
    head = [
        f'"""Serve a model as dyncli {dyncli.__version__} bench measured it (the recommendation).',
        "",
        "    from this_module import compile_for_traffic",
        "    serve = compile_for_traffic(model)",
        "    out = serve(*inputs)",
        "",
        "PLAN['requires'] lists what must be done before serving. PLAN['env'] is what torch",
        "reads from the environment instead (set before torch is imported): not needed with",
        "this module, which applies the same config around each call unless it is in effect.",
        "The code below PLAN is dyncli's own serving code, the code bench measured with.",
        '"""',
        "",
    ]
    literal = pprint.pformat(plan.as_dict(), indent=1, width=96, sort_dicts=False)
    tail = ["", "", "", f"PLAN = {literal}", "", "",
            "def compile_for_traffic(model):",
            '    """The callable to serve ``model`` with, as dyncli bench measured this plan."""',
            "    return serve(model, PLAN)", ""]
    return "\n".join(head) + runtime_code().rstrip("\n") + "\n".join(tail)


def env_lines(plan: Plan) -> str:
    """``export`` lines, shell-quoted; what only code can do named in a comment."""
    lines = [f"# dyncli {dyncli.__version__}: the environment for strategy "
             f"{plan.strategy} (set before the process imports torch)"]
    for step in plan.requires():
        lines.append(toml_comment("first: " + step))
    env = plan.env()
    for name, value in env.items():
        lines.append(f"export {name}={shell_quote(value)}")
    code_only = plan.code_only()
    if code_only:
        lines.append("# the environment cannot say: " + "; ".join(code_only)
                     + " -- use --emit python for the whole plan")
    elif not env:
        lines.append("# nothing to set: plain torch.compile(model)"
                     if plan.row.compiles else "# nothing to set: serve the model eager")
    return "\n".join(lines) + "\n"


# The [bench] keys that make the measured traffic and how it ran, written when set: the stream
# (a --shapes file, --sizes, --requests), else the seeded plan --requests cycles; then the run.
STREAM_KEYS = ("shapes", "sizes", "requests")
SEEDED_KEYS = ("variations", "spread", "seed", "vary")
RUN_KEYS = ("mode", "dtype", "device", "batch_size", "batch_dim", "seq_len", "hf_config",
            "matmul_precision", "start", "requests_per_start", "warmup", "repeat")
# A key TOML takes unquoted; any other is written as a basic string.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# With eager recommended, the strategies it was chosen over are measured again as they were.
STRATEGY_KEYS = ("compile_mode", "dynamic_sources", "buckets", "max_buckets", "capture_sizes",
                 "rerecord_limit", "memory_budget")


def toml_table(plan: Plan, settings: Mapping[str, Any] | None = None) -> str:
    """The ``[bench]`` table that measures this plan again (``dyncli bench --config``);
    with the run's ``settings``, on the same traffic, mode and dtype."""
    row = plan.row
    lines = [f"# dyncli {dyncli.__version__}: measure the plan again with "
             "dyncli bench MODEL --config THIS_FILE"]
    if row.compiles:
        strategies = [plan.strategy]
        lines.append(toml_comment(f"recommended: {plan.strategy}; bench measures eager beside "
                                  "it"))
    else:  # eager is measured beside every strategy, never as one
        recommendable = set(table.recommendable())
        measured = [s for s in (settings or {}).get("strategy") or []
                    if isinstance(s, str) and s in table.NAMES and s in recommendable]
        strategies = measured or ["automatic"]
        lines.append(toml_comment("recommended: eager (serve the model without "
                                  "torch.compile)"))
        lines.append(toml_comment(
            "eager is measured beside every strategy, never as one: the strategy line is "
            + ("what it was chosen over" if measured else "automatic, torch.compile's default")))
    lines += ["[bench]", "strategy = [" + ", ".join(toml_str(s) for s in strategies) + "]"]
    if not row.compiles and settings:  # the strategies' own settings, as they were measured
        lines += _settings(settings, STRATEGY_KEYS, {"compile_mode": ["default"],
                                                     "buckets": "pow2"})
    if plan.compile_mode != "default":
        lines.append(f"compile_mode = [{toml_str(plan.compile_mode)}]")
    if plan.capture_sizes:
        lines.append(f"capture_sizes = [{', '.join(map(str, plan.capture_sizes))}]")
    if plan.rerecord_limit is not None:
        lines.append(f"rerecord_limit = {plan.rerecord_limit}")
    if row.pads:
        lines.append("buckets = " + toml_str(",".join(map(str, plan.buckets))
                                              if plan.buckets else "pow2"))
    if table.SOURCES in row.params:
        lines.append("dynamic_sources = [" + ", ".join(toml_str(s) for s in plan.sources)
                     + "]")
    if settings:
        keys = STREAM_KEYS if settings.get("shapes") or settings.get("sizes") \
            else STREAM_KEYS + SEEDED_KEYS
        lines += _settings(settings, keys + RUN_KEYS, {"device": "auto"})
    for step in plan.requires():
        lines.append(toml_comment("first: " + step))
    return "\n".join(lines) + "\n"


def _settings(settings: Mapping[str, Any], keys: tuple[str, ...],
              defaults: Mapping[str, Any]) -> list[str]:
    """``key = value`` lines for ``keys`` the run set (not unset, empty or the default given),
    TOML-quoted; a --shapes path made absolute (bench reads it from the working directory)."""
    out = []
    for key in keys:
        value = settings.get(key)
        if value is None or value in ([], {}) or defaults.get(key, object()) == value:
            continue
        if key == "shapes" and isinstance(value, str):
            value = str(Path(value).expanduser().resolve())
        try:
            text = _toml_value(value)
        except ValueError:  # a lone surrogate: a file name that is not UTF-8
            out.append(toml_comment(f"{key}: not written (TOML cannot hold it: a name that is "
                                    f"not UTF-8); give --{key.replace('_', '-')} again"))
            continue
        if text is None:  # a null in --hf-config, a NaN: said, never dropped without a word
            out.append(toml_comment(f"{key}: not written (TOML cannot hold one of its "
                                    f"values); give --{key.replace('_', '-')} again"))
        else:
            out.append(f"{key} = {text}")
    return out


def _toml_value(value: Any) -> str | None:
    """A TOML value for a setting (str, bool, int, float, a list of them, or a table of them
    written inline: ``hf_config``); None when TOML cannot hold it (a null, a NaN)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if value == value and abs(value) != float("inf") else None
    if isinstance(value, str):
        return toml_str(value)
    if isinstance(value, list | tuple):
        items = [_toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(
            i for i in items if i is not None) + "]"
    if isinstance(value, Mapping):
        pairs = [(str(k), _toml_value(v)) for k, v in value.items()]
        if any(v is None for _, v in pairs):
            return None
        return "{" + ", ".join(f"{k if _BARE_KEY.fullmatch(k) else toml_str(k)} = {v}"
                               for k, v in pairs) + "}"
    return None

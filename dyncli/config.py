"""Configuration: one frozen dataclass per TOML table and one ``resolve()``.

Layering, lowest first: built-in defaults < ``autodyn.toml`` (found from the working
directory upward, or ``[tool.dyncli]`` in a pyproject.toml, or ``--config PATH``) <
environment ``DYNCLI_<TABLE>_<KEY>`` < command-line flags (``None`` means "not given").

Every field carries its documentation in ``metadata["doc"]``; ``autodyn.toml`` at the repo
root repeats them, and a test keeps the two in step. Unknown keys and wrong types are errors
that name the file and key, raised before any work starts.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench.core import strategy as strategy_table
from dyncli.errors import ConfigError, DyncliError
from dyncli.typecheck import check_value, parse_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILENAME = "autodyn.toml"
PYPROJECT = "pyproject.toml"  # its settings live under [tool.dyncli]


def _opt(default: Any, doc: str, choices: tuple[str, ...] | None = None,
         minimum: int | None = None, unset: tuple[str, Callable[[], Any]] | None = None) -> Any:
    # unset: for a None default, (its meaning in words, the value used then) for --verbose
    meta: dict[str, Any] = {"doc": doc}
    if unset is not None:
        meta["unset"] = unset
    if choices is not None:
        meta["choices"] = choices
    if minimum is not None:
        meta["minimum"] = minimum
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def usable_cores() -> int:
    """The cores this process may use: what ``diagnose.jobs`` unset means (diagnose's
    ``children.default_jobs``), shown by ``--verbose``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


STRATEGIES = strategy_table.NAMES  # one row each in dyncli/bench/core/strategy.py
MODES = strategy_table.MODE_NAMES  # the compile modes: strategy.MODES
RANK_SHAPES = ("same", "skewed", "independent")


@dataclass(frozen=True)
class BenchConfig:
    """The ``[bench]`` table: how ``dyncli bench`` varies shapes, times and compiles."""

    variations: int = _opt(8, "Number of input shapes to run, the base shape included.")
    spread: float = _opt(0.2, "Varied sizes are drawn uniformly within base*(1±spread).")
    seed: int = _opt(0, "Seed of the RNG that picks the varied sizes and makes inputs.")
    vary: list[str] = _opt(["batch"], "Which dims to vary: batch, seq (HF models), or both.", ("batch", "seq"))
    batch_size: int | None = _opt(None, "Base batch size; unset = the model's default for the device.")
    batch_dim: int | None = _opt(None, "Input dim that is the batch; unset = every dim equal to the batch size.")
    seq_len: int | None = _opt(None, "Base sequence length for HF models; unset = the model's default.")
    strategy: list[str] = _opt(["automatic"], "How to compile: static, automatic, mark-dynamic, dynamic, sources, collectives (--nproc >= 2), pad, unbacked, eager-then-compile, pgo.", STRATEGIES)
    compile_mode: list[str] = _opt(["default"], "torch.compile modes, each measured with every strategy: default, reduce-overhead (CUDA graphs), max-autotune-no-cudagraphs, max-autotune (autotuning and CUDA graphs); CUDA-graph modes need CUDA.", MODES)
    capture_sizes: list[int] = _opt([], "With a CUDA-graph mode: the sizes to capture, inputs padded up to them (torch's triton.cudagraph_capture_sizes, torch >= 2.8; a dynamic graph only); empty = every size records its own graph.")
    rerecord_limit: int | None = _opt(None, "With a CUDA-graph mode: distinct sizes recorded per graph before new ones run without graphs (torch's cudagraph_dynamic_shape_rerecord_limit, torch >= 2.15); unset = no limit.", minimum=1)
    memory_budget: str | None = _opt(None, "Most memory the CUDA graphs' pool may take in a recommended plan, e.g. \"2GiB\", \"512MiB\" or bytes; plans over it are left out; unset = no limit.")
    dynamic_sources: list[str] = _opt([], "Allow-list for the sources strategy (TORCH_COMPILE_DYNAMIC_SOURCES entries, e.g. from dyncli suggest -f toml).")
    warmup: int = _opt(2, "Untimed calls per variation after the first (compiling) call.")
    repeat: int = _opt(10, "Timed interleaved eager/compiled repetitions per variation.")
    mode: str = _opt("inference", "inference (eval, no_grad) or training (forward+loss+backward).", ("inference", "training"))
    device: str = _opt("auto", "auto (CUDA if available, else CPU), cpu or cuda.", ("auto", "cpu", "cuda"))
    dtype: str = _opt("float32", "float32, bfloat16, float16 or amp (autocast).", ("float32", "bfloat16", "float16", "amp"))
    hf_config: dict[str, Any] = _opt({}, "Overrides for HF model configs, e.g. {num_hidden_layers = 2}.")
    matmul_precision: str | None = _opt(None, "torch.set_float32_matmul_precision for the run: highest, high (TF32 on CUDA) or medium; unset = torch's own (recorded in the result's environment).", ("highest", "high", "medium"))
    fail_on: list[str] = _opt([], "Exit 1 when any of these happened: failures (a strategy or variation did not pass). Exit 1 also when nothing ran at all.", ("failures",))
    nproc: int = _opt(1, "Ranks to run under torch.distributed's launcher (gloo on CPU, NCCL on CUDA); 1 = one process.")
    rank_shapes: str = _opt("same", "With nproc > 1: same plan on every rank, skewed (rank 0 varies, the others keep the base), or independent (a seeded plan per rank).", RANK_SHAPES)
    shapes: str | None = _opt(None, "Request stream file (CSV with a header, or JSONL): batch and/or seq, optional count; unset = the seeded plan.")
    sizes: list[int] = _opt([], "Inline request stream of batch sizes, e.g. [1, 3, 8, 8, 16] (0 and 1 allowed); empty = unset.")
    requests: int | None = _opt(None, "Requests in the costed stream (the stream is cycled or cut); unset = the stream's own length.")
    buckets: str = _opt("pow2", "Bucket sizes for the pad strategy: a comma list like \"8,16,32\", pow2, or auto (the set that costs the stream least, then measured).")
    max_buckets: int | None = _opt(None, "With buckets = auto: at most this many buckets; unset = no limit.")
    replay: bool = _opt(False, "Also run the whole stream for real per strategy and record measured vs predicted seconds.")
    start: str = _opt("cold", "How each serving process starts: cold (empty caches) or warm (torch's caches from an earlier process kept); warm also measures each strategy in two fresh processes.", ("cold", "warm"))
    requests_per_start: int | None = _opt(None, "Cost a service that restarts every N requests (restarts find the caches the first process left); unset = one process.")
    emit: str | None = _opt(None, "Write the recommendation as a plan to apply: python (a module defining compile_for_traffic(model)), env or toml; needs a request stream.", ("python", "env", "toml"))
    emit_file: str | None = _opt(None, "Where --emit writes (- = stdout); unset = dyncli_plan.py, dyncli_plan.env or dyncli_plan.toml.")
    fresh_cache: bool | None = _opt(None, "Give every strategy empty compile caches of its own (inductor's FX graph, AOTAutograd, kernels and autotuning; Triton's) for its measurement and its replay: cold compiles; false = the user's caches as found (hits labelled); unset = on.")
    suite: str | None = _opt(None, "Run a suite instead of one model: a built-in name (dyncli bench --list-suites) or a suite TOML file.")
    resume: bool = _opt(False, "With suite and --json: skip the models already complete in that JSON file.")
    timeout: float | None = _opt(None, "Seconds before a run counts as hung (status timeout): each model of a suite (its process is killed; unset = no limit); with nproc > 1 the process-group timeout of a collective wait (unset = 300).")


@dataclass(frozen=True)
class DiagnoseConfig:
    """The ``[diagnose]`` table: how ``dyncli diagnose`` reads logs and when it fails."""

    fail_on: list[str] = _opt([], "Exit 1 when any of these is found: recompiles, specializations, graph-breaks.",
                              ("recompiles", "specializations", "graph-breaks"))
    strict: bool = _opt(False, "Exit 1 on unrecognized or malformed log lines (tests use it to keep the parser complete).")
    limit: int = _opt(20, "Rows shown per section on the terminal (the JSON always has every row).",
                      minimum=0)
    jobs: int | None = _opt(None, "Processes that read TORCH_TRACE rank files in parallel; unset = the core count, 1 = serial (same output either way).",
                            unset=("the core count", usable_cores))


@dataclass(frozen=True)
class SuggestConfig:
    """The ``[suggest]`` table: how ``dyncli suggest`` turns PGO state into a fix."""

    format: str = _opt("env", "Output form: env, shell, toml, python or json.", ("env", "shell", "toml", "python", "json"))
    include_params: bool = _opt(False, "Keep parameters and module attributes (forced static by default).")
    frame: str | None = _opt(None, "Only frames whose file:line:function matches this regex (re.search).")
    exclude: str | None = _opt(None, "Drop sources whose name matches this regex (re.search).")
    torch_version: str | None = _opt(None, "Target torch version; before 2.14 whole-source entries (no :N dim suffix) are emitted.")


@dataclass(frozen=True)
class CompareConfig:
    """The ``[compare]`` table: when ``dyncli compare`` calls a change a regression."""

    threshold: float = _opt(0.05, "A latency rise or speedup drop larger than this fraction (0.05 = 5%) is a regression when significant.")
    alpha: float = _opt(0.01, "Significance level: a change counts only when its Mann-Whitney U p-value is below this.")
    fail_on: list[str] = _opt([], "Exit 1 when any of these is found: regression, recompiles.", ("regression", "recompiles"))
    format: str = _opt("table", "Output form: table, markdown (for a PR comment) or json.", ("table", "markdown", "json"))


TABLES: dict[str, type] = {"bench": BenchConfig, "diagnose": DiagnoseConfig, "suggest": SuggestConfig,
                           "compare": CompareConfig}


def spelled(table: str, key: str | None = None, source: str | Path | None = None, *,
            header: bool = False) -> str:
    """A setting as the user writes it where it came from, for messages: from a pyproject.toml
    (``source``, the file or a ``Resolved.origins`` value, names one), under ``tool.dyncli``:
    ``tool.dyncli.bench.repeat``; elsewhere (autodyn.toml, the environment, a flag, the Python
    API) ``bench.repeat``. With ``header``, the table's header then the key: ``[tool.dyncli.
    diagnose] fail_on``, ``[diagnose] fail_on``. Without ``key``, the table alone
    (``[tool.dyncli.bench]`` with ``header``). Every message that names a setting of a config
    file spells it here."""
    name = ("tool.dyncli." if source is not None and Path(source).name == PYPROJECT else "") + table
    if header:
        return f"[{name}]" + (f" {key}" if key else "")
    return f"{name}.{key}" if key else name


@dataclass(frozen=True)
class Resolved:
    """A resolved table and where each value came from (for ``--verbose``)."""

    table: str
    config: Any
    origins: dict[str, str]
    file: Path | None

    def describe(self) -> list[tuple[str, Any, str]]:
        """(key, value, origin) for every field, in declaration order; a field left unset whose
        meaning is a value worked out at run time (``diagnose.jobs``: the core count) shows
        that value, and the origin says what it is."""
        out = []
        for f in dataclasses.fields(self.config):
            value, origin = getattr(self.config, f.name), self.origins[f.name]
            if value is None and "unset" in f.metadata:
                words, used = f.metadata["unset"]
                value, origin = used(), f"{origin}: {words}"
            out.append((f.name, value, origin))
        return out

    def given_as(self, key: str, flag: str) -> str:
        """How the user set ``key``: ``flag`` on the command line, the environment variable's
        name, or the config file's key (``[diagnose] fail_on in autodyn.toml``,
        ``[tool.dyncli.diagnose] fail_on in pyproject.toml``)."""
        return self.named(key, flag, where=True)

    def named(self, key: str, flag: str, *, where: bool = False) -> str:
        """``key`` named for a message about its value: ``flag`` when the command line gave it
        or nobody did, the environment variable, or the file's spelling (``bench.repeat``,
        ``tool.dyncli.bench.repeat`` in a pyproject.toml); with ``where``, the file's table
        header, its key and the file (``given_as``)."""
        origin = self.origins[key]
        if origin == "command line" or origin == "default":
            return flag
        if origin.startswith("environment "):
            return origin.removeprefix("environment ")
        if where:
            return f"{spelled(self.table, key, origin, header=True)} in {origin}"
        return spelled(self.table, key, origin)


_FIELDS: dict[type, tuple[dict[str, dataclasses.Field[Any]], dict[str, Any]]] = {}


def _fields_and_hints(cls: type) -> tuple[dict[str, dataclasses.Field[Any]], dict[str, Any]]:
    """A table's fields by name and their resolved types, worked out once per class
    (``get_type_hints`` evaluates every annotation: once per key, it was most of the time a
    command spent reading the repository's full ``autodyn.toml``)."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = ({f.name: f for f in dataclasses.fields(cls)},
                                typing.get_type_hints(cls))
    return known


def _validate(table: str, cls: type, key: str, value: Any, where: str, from_env: bool = False,
              file: Path | None = None) -> Any:
    # file: the config file the value came from (how it spells the key: ``spelled``)
    fields, hints = _fields_and_hints(cls)
    name = spelled(table, key, file)
    if key not in fields:
        known = ", ".join(sorted(fields))
        raise ConfigError(f"{where}: {name}: unknown key",
                          hint=f"Known keys in {spelled(table, source=file, header=True)}: {known}")
    tp = hints[key]
    try:
        out = parse_env(value, tp) if from_env else check_value(value, tp)
    except ValueError as e:
        raise ConfigError(f"{where}: {name}: expected {e}, got {value!r}") from None
    choices = fields[key].metadata.get("choices")
    if choices:
        for v in out if isinstance(out, list) else [out]:
            if v is not None and v not in choices:
                raise ConfigError(f"{where}: {name}: expected one of {', '.join(choices)}, got {v!r}")
    minimum = fields[key].metadata.get("minimum")
    if minimum is not None and isinstance(out, int) and out < minimum:
        raise ConfigError(f"{where}: {name}: expected {minimum} or more, got {out!r}")
    return out


# ---------------------------------------------------------------- finding the file


def _display(path: Path) -> str:
    """A path as the user would type it: relative to the working dir when that is short."""
    rel = os.path.relpath(path.resolve(), Path.cwd().resolve())
    return rel if rel.count("..") <= 3 else str(path.resolve())


MAX_TOML_BYTES = 16 << 20


def read_toml(path: Path, what: str, error: type[DyncliError] = ConfigError,
              shown: str | None = None) -> dict[str, Any]:
    """A TOML file's table; a missing, unreadable or invalid file is one ``error`` naming it.

    ``what`` names the kind of file in the message ("config file", "suite file"); ``shown``
    is how to name the file (default: relative to the working directory when that is short).
    """
    shown = shown or _display(path)
    try:
        data = _read_regular(path)
        if data is None:
            raise error(f"{shown}: not a regular file (a FIFO or device), not a {what}")
        if len(data) > MAX_TOML_BYTES:
            raise error(f"{shown}: over {MAX_TOML_BYTES >> 20} MB, not a {what}")
        return tomllib.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise error(f"{shown}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{shown}: is a directory, not a {what}") from None
    except OSError as e:
        raise error(f"{shown}: cannot read: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:
        # TOMLDecodeError and UnicodeDecodeError are ValueErrors; so is an integer of more than
        # 4,300 digits, which tomllib hands to int() as it is (Python's str-to-int limit).
        raise error(f"{shown}: not valid TOML: {str(e)[:300]}") from None


def _read_regular(path: Path) -> bytes | None:
    """At most ``MAX_TOML_BYTES + 1`` bytes of ``path``; None when it is not a regular file.

    Opened without blocking and checked before reading: ``open()`` of a FIFO with no writer
    waits forever, and ``/dev/zero`` never ends.
    """
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(mode):
            return None
        return fh.read(MAX_TOML_BYTES + 1)


def _load_toml(path: Path) -> dict[str, Any]:
    data = read_toml(path, "config file")
    if path.name == PYPROJECT:
        tool = data.get("tool", {})
        ours = tool.get("dyncli", {}) if isinstance(tool, dict) else {}
        if not isinstance(ours, dict):  # (`[tool]` then `dyncli = 1`)
            raise ConfigError(f"{_display(path)}: tool.dyncli: expected a table, got {ours!r}",
                              hint="Put each setting under its command's table: "
                                   "[tool.dyncli.bench], [tool.dyncli.diagnose] …")
        return ours
    return data


def find_config(start: Path) -> Path | None:
    """The nearest ``autodyn.toml``, or pyproject.toml with ``[tool.dyncli]``, from ``start`` up."""
    for directory in [start, *start.parents]:
        candidate = directory / CONFIG_FILENAME
        if candidate.is_file():
            return candidate
        pyproject = directory / PYPROJECT
        if pyproject.is_file():
            try:
                raw = _read_regular(pyproject)
                if raw is None or len(raw) > MAX_TOML_BYTES:
                    continue
                data = tomllib.loads(raw.decode("utf-8"))
            except (OSError, ValueError, RecursionError):  # not ours to judge: not a dyncli config
                continue
            if isinstance(data.get("tool"), dict) and "dyncli" in data["tool"]:
                return pyproject
    return None


def load_file(path: Path) -> dict[str, dict[str, Any]]:
    """Read and validate every table of a config file; unknown tables or keys are errors."""
    raw = _load_toml(path)
    where = _display(path)
    out: dict[str, dict[str, Any]] = {}
    for table, values in raw.items():
        if table not in TABLES:
            known = ", ".join(spelled(t, source=path, header=True) for t in TABLES)
            raise ConfigError(f"{where}: {spelled(table, source=path, header=True)}: unknown table",
                              hint=f"Known tables: {known}")
        if not isinstance(values, dict):
            raise ConfigError(f"{where}: {spelled(table, source=path)}: expected a table, "
                              f"got {values!r}")
        out[table] = {k: _validate(table, TABLES[table], k, v, where, file=path)
                      for k, v in values.items()}
    return out


# ---------------------------------------------------------------- resolve


def resolve(
    table: str,
    flags: Mapping[str, Any] | None = None,
    *,
    config_path: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Resolved:
    """Resolve one table: defaults < config file < ``DYNCLI_<TABLE>_<KEY>`` < flags.

    ``flags`` maps field names to values; ``None`` means "not given". Flag names that are not
    fields of the table are a programming error.
    """
    cls = TABLES[table]
    environ = os.environ if environ is None else environ
    path = config_path if config_path is not None else find_config(cwd or Path.cwd())
    values: dict[str, Any] = {}
    origins: dict[str, str] = {f.name: "default" for f in dataclasses.fields(cls)}

    if path is not None:
        file_values = load_file(path).get(table, {})
        for key, value in file_values.items():
            values[key] = value
            origins[key] = f"{_display(path)}"

    prefix = f"DYNCLI_{table.upper()}_"
    for name, text in environ.items():
        if not name.startswith(prefix):
            continue
        key = name[len(prefix):].lower()
        values[key] = _validate(table, cls, key, text, f"environment {name}", from_env=True)
        origins[key] = f"environment {name}"

    field_names = {f.name for f in dataclasses.fields(cls)}
    for key, value in (flags or {}).items():
        if key not in field_names:
            raise KeyError(f"flag {key!r} is not a field of [{table}]")
        if value is None:
            continue
        values[key] = _validate(table, cls, key, value, "command line")
        origins[key] = "command line"

    return Resolved(table=table, config=cls(**values), origins=origins, file=path)


def validate_value(table: str, key: str, value: Any, where: str) -> Any:
    """Check one ``table.key`` value as a config file's would be (unknown key, type, choices)."""
    return _validate(table, TABLES[table], key, value, where)


def documented_fields(table: str) -> list[tuple[str, Any, str]]:
    """(key, default, doc) for every field of a table, for docs and the autodyn.toml check."""
    cls = TABLES[table]
    out = []
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out.append((f.name, default, f.metadata.get("doc", "")))
    return out


def from_options(table: str, options: Mapping[str, Any], *, where: str) -> Any:
    """The ``[table]`` dataclass from Python keyword options, validated as config keys are.

    This is how the Python API (``dyncli.bench.run(model, repeat=5)``) takes its options: the
    same names, defaults, types and choices as the config file, and the same errors
    (``ConfigError`` naming ``where`` and the key). ``None`` means "not given". No file or
    environment is read: a script gets exactly what it asks for.
    """
    cls = TABLES[table]
    values = {key: _validate(table, cls, key, value, where)
              for key, value in options.items() if value is not None}
    return cls(**values)


def config_or_options(table: str, config: Any, options: Mapping[str, Any], *, where: str) -> Any:
    """``config`` when given (the CLI resolves its own), else :func:`from_options`; not both."""
    cls = TABLES[table]
    if config is None:
        return from_options(table, options, where=where)
    if not isinstance(config, cls):
        raise ConfigError(f"{where}: config: expected {cls.__name__}, got {type(config).__name__}")
    given = sorted(k for k, v in options.items() if v is not None)
    if given:
        raise ConfigError(f"{where}: give either config= or keyword options, not both "
                          f"(got {', '.join(given)})")
    return config

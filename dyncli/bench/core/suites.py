"""Suites as data: the built-in model lists and the TOML suite file format.

A suite is a list of models, each with optional ``[bench]`` overrides, plus optional
suite-wide ``[bench]`` defaults. A suite file::

    description = "what this suite is for"     # optional
    [bench]                                     # optional, applies to every model
    variations = 4
    [[models]]
    model = "resnet18"
    batch_size = 8                              # any [bench] key overrides for this model
    [[models]]
    model = "models.py:build"                   # relative to the suite file's directory
    name = "my-mlp"                             # optional label (default: the model string)

Precedence per model, lowest first: defaults < autodyn.toml < suite ``[bench]`` < the
model's own keys < ``DYNCLI_BENCH_*`` environment < command-line flags (what a user typed
wins over what a suite file says).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.config import read_toml, validate_value
from dyncli.errors import ConfigError, InputError, UsageError

# Keys that make no sense per model: they describe the suite run itself.
SUITE_ONLY = ("suite", "resume")

_TINY_BERT = {"num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 2,
              "intermediate_size": 256, "vocab_size": 2048}
_TINY_GPT2 = {"n_layer": 2, "n_embd": 128, "n_head": 2, "vocab_size": 2048, "n_positions": 256}

BUILTIN: dict[str, dict[str, Any]] = {
    "cpu-small": {
        "description": "Six small models for a 2-core CPU: about 10 minutes with "
                       "--strategy static,automatic (see docs/compare.md).",
        "bench": {"variations": 4, "repeat": 10, "warmup": 1, "timeout": 600.0},
        "models": [
            {"model": "resnet18", "batch_size": 8},
            {"model": "timm:mobilenetv3_small_100", "batch_size": 8},
            {"model": "timm:vit_tiny_patch16_224", "batch_size": 4},
            {"model": "hf:BertModel", "name": "bert-tiny", "hf_config": _TINY_BERT},
            {"model": "hf:GPT2LMHeadModel", "name": "gpt2-tiny", "hf_config": _TINY_GPT2},
            {"model": "examples/model.py:build", "name": "examples/model.py"},
        ],
    },
    "torchvision": {
        "description": "Torchvision classifiers for a GPU (random weights).",
        "bench": {"timeout": 1800.0},
        "models": [{"model": m} for m in (
            "resnet18", "resnet50", "mobilenet_v3_large", "efficientnet_b0", "densenet121",
            "regnet_y_1_6gf", "shufflenet_v2_x1_0", "convnext_tiny", "swin_t", "vit_b_16")],
    },
    "timm": {
        "description": "timm image models for a GPU (random weights).",
        "bench": {"timeout": 1800.0},
        "models": [{"model": "timm:" + m} for m in (
            "resnet50d", "mobilenetv3_large_100", "efficientnet_b0", "regnety_016",
            "convnext_tiny", "deit_small_patch16_224", "vit_base_patch16_224",
            "swin_tiny_patch4_window7_224", "mixer_b16_224", "beit_base_patch16_224")],
    },
    "hf": {
        "description": "HuggingFace transformers for a GPU, batch and sequence varied "
                       "(random weights; Llama cut to 4 layers).",
        "bench": {"vary": ["batch", "seq"], "timeout": 1800.0},
        "models": [
            {"model": "hf:BertModel"}, {"model": "hf:BertForSequenceClassification"},
            {"model": "hf:DistilBertModel"}, {"model": "hf:RobertaModel"},
            {"model": "hf:GPT2LMHeadModel"}, {"model": "hf:T5Model"},
            {"model": "hf:LlamaForCausalLM", "name": "llama-4l",
             "hf_config": {"num_hidden_layers": 4, "hidden_size": 1024,
                           "intermediate_size": 2816, "num_attention_heads": 16,
                           "num_key_value_heads": 16}},
        ],
    },
}


@dataclass(frozen=True)
class SuiteEntry:
    """One model of a suite: what to build, its label in results, its own settings."""

    model: str
    name: str
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Suite:
    """A named list of models with suite-wide ``[bench]`` defaults."""

    name: str
    source: str  # "built-in" or the file's path
    description: str
    defaults: dict[str, Any]
    entries: list[SuiteEntry]


def repo_root() -> Path:
    """The checkout dyncli runs from: built-in suites find ``examples/`` there."""
    return Path(__file__).resolve().parents[2]


def listing() -> list[Suite]:
    """Every built-in suite, in a stable order."""
    return [load(name) for name in BUILTIN]


def load(name_or_path: str) -> Suite:
    """A built-in suite by name, else a suite TOML file. Unknown names are a UsageError."""
    if name_or_path in BUILTIN:
        return _parse(BUILTIN[name_or_path], name_or_path, "built-in", repo_root())
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        raise UsageError(f"--suite: no built-in suite '{name_or_path}'",
                         hint=f"Built-in suites: {', '.join(BUILTIN)} (or give a suite .toml file)")
    data = read_toml(path, "suite file", InputError, shown=str(path))
    return _parse(data, path.stem, str(path), path.parent)


def _parse(data: dict[str, Any], name: str, source: str, base_dir: Path) -> Suite:
    where = "built-in suite " + name if source == "built-in" else source
    unknown = set(data) - {"description", "bench", "models"}
    if unknown:
        raise ConfigError(f"{where}: unknown top-level key(s) {', '.join(sorted(unknown))}",
                          hint="A suite file has [[models]] tables, an optional [bench] table "
                               "and an optional description")
    defaults = _settings(data.get("bench", {}), f"{where}: [bench]")
    models = data.get("models")
    if not isinstance(models, list) or not models:
        raise ConfigError(f"{where}: no [[models]] tables",
                          hint='Add one per model: [[models]]\\nmodel = "resnet18"')
    entries: list[SuiteEntry] = []
    for i, raw in enumerate(models, 1):
        here = f"{where}: models[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("model"), str) or not raw["model"]:
            raise ConfigError(f"{here}: needs model = \"NAME\"")
        rest = {k: v for k, v in raw.items() if k not in ("model", "name")}
        label = raw.get("name", raw["model"])
        if not isinstance(label, str) or not label:
            raise ConfigError(f"{here}: name: expected a non-empty string, got {label!r}")
        entries.append(SuiteEntry(_model_path(raw["model"], base_dir), label,
                                  _settings(rest, here)))
    labels = [e.name for e in entries]
    twice = sorted({n for n in labels if labels.count(n) > 1})
    if twice:
        raise ConfigError(f"{where}: {', '.join(twice)} listed twice",
                          hint="Give each a different name = \"…\" to tell their results apart")
    return Suite(name, source, str(data.get("description", "")), defaults, entries)


def _settings(values: Any, where: str) -> dict[str, Any]:
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a table, got {values!r}")
    out = {}
    for key, value in values.items():
        if key in SUITE_ONLY:
            raise ConfigError(f"{where}: {key}: describes the whole run; set it on the command line")
        out[key] = validate_value("bench", key, value, where)
    return out


def _model_path(model: str, base_dir: Path) -> str:
    """``FILE.py:FUNC`` relative to the suite file's directory when the file is there."""
    if ".py:" not in model:
        return model
    path, _, func = model.rpartition(":")
    candidate = base_dir / path
    if not Path(path).is_absolute() and candidate.is_file():
        return f"{candidate}:{func}"
    return model


def effective_settings(base: dict[str, Any], explicit: set[str], suite: Suite,
                       entry: SuiteEntry) -> dict[str, Any]:
    """One model's settings: ``base`` (defaults < file), then suite and model keys, except
    the keys in ``explicit`` (given by environment or flag), which keep ``base``'s value."""
    settings = dict(base)
    for layer in (suite.defaults, entry.overrides):
        settings.update({k: v for k, v in layer.items() if k not in explicit})
    settings.update(suite=None, resume=False)
    return settings

"""The model zoo: names to models with random weights and example inputs. Never downloads.

Name forms, resolved in this order:

1. ``FILE.py:FUNCTION`` — a user file; ``FUNCTION()`` returns ``(model, example_inputs)`` where
   ``example_inputs`` is a tuple of positional inputs or a dict of keyword inputs.
2. ``timm:NAME`` — ``timm.create_model(NAME, pretrained=False)``.
3. ``hf:CLASS`` — ``transformers.CLASS`` built from its config class (``CLASS.config_class``)
   with the ``hf_config`` overrides, random weights.
4. a bare name — a torchvision classification model (``weights=None``), else a timm model.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench.core.status import short_error
from dyncli.errors import ModelError
from dyncli.quoting import shell_word

# Base batch size per device; a model's own entry in BATCH_OVERRIDES wins.
# CPU: 6 keeps one resnet50 call near 0.2 s on 2 quiet cores while ±20% still gives five
# distinct batch sizes (4..8).
DEFAULT_BATCH = {"cpu": 6, "cuda": 32}
HF_DEFAULT_BATCH = {"cpu": 4, "cuda": 16}
HF_DEFAULT_SEQ = {"cpu": 32, "cuda": 128}
BATCH_OVERRIDES: dict[str, dict[str, int]] = {
    "vit_b_16": {"cpu": 4, "cuda": 32}, "vit_b_32": {"cpu": 8, "cuda": 64},
    "vit_l_16": {"cpu": 2, "cuda": 8}, "vit_l_32": {"cpu": 4, "cuda": 16},
    "vit_h_14": {"cpu": 2, "cuda": 4}, "regnet_y_128gf": {"cpu": 2, "cuda": 8},
    "resnet18": {"cpu": 16, "cuda": 64}, "mobilenet_v3_small": {"cpu": 16, "cuda": 128},
    "mobilenet_v2": {"cpu": 16, "cuda": 96}, "squeezenet1_1": {"cpu": 16, "cuda": 128},
}
IMAGE_SIZE = {"inception_v3": 299}
HF_EXAMPLES = ("BertModel", "BertForSequenceClassification", "GPT2LMHeadModel",
               "DistilBertModel", "T5Model", "LlamaForCausalLM")
LM_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForMaskedLM")
# The hf main inputs bench builds (a class's ``main_input_name``): token ids, images, and two
# kinds of audio, a waveform (Wav2Vec2, HuBERT, WavLM) and Whisper's log-mel frames.
AUDIO_INPUTS = ("input_values", "input_features")
HF_INPUTS = ("input_ids", "pixel_values", *AUDIO_INPUTS)


@dataclass
class InputKind:
    """How to make fresh data for one input: float (randn), ids in [low, high), mask, zeros."""

    kind: str
    low: int = 0
    high: int = 2


@dataclass
class Built:
    """A built model, its example inputs and what the benchmark needs to vary them."""

    name: str
    source: str
    model: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    batch_size: int
    seq_len: int | None = None
    kinds: dict[str, InputKind] = field(default_factory=dict)
    loss: str = "sum"          # sum | cross_entropy | model (HF labels)
    num_classes: int | None = None


def resolve_source(name: str) -> str:
    """Which loader a name goes to: file, timm, hf or bare."""
    if ".py:" in name or name.endswith(".py"):
        return "file"
    if name.startswith("timm:"):
        return "timm"
    if name.startswith("hf:"):
        return "hf"
    return "bare"


def torchvision_names() -> list[str]:
    """Torchvision classification model names."""
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models))


def timm_names() -> list[str]:
    """All timm model names (no weights involved)."""
    import timm

    return list(timm.list_models())


def hf_names() -> list[str]:
    """transformers classes that look like models (for close-match suggestions)."""
    import transformers

    return [n for n in dir(transformers) if n[:1].isupper() and ("Model" in n or "For" in n)
            and not n.endswith(("Config", "Output", "Tokenizer", "PreTrainedModel"))]


def _unknown(name: str, candidates: list[str], what: str) -> ModelError:
    close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.6)
    hint = ("Close matches: " + ", ".join(close) + ". " if close else "") + \
        "See the built-in names with: dyncli bench --list"
    return ModelError(f"Unknown {what} '{name}'", hint=hint)


def _file_hint(path: str, func: str) -> str:
    """Where a model file of that name is (examples/model.py from a checkout's root), or what
    the file must hold."""
    here = sorted(str(p) for p in Path(".").glob(f"*/{Path(path).name}") if p.is_file())[:3]
    if here:
        return "Did you mean " + " or ".join(f"{p}:{func}" for p in here) + "?"
    return (f"Give the path of a Python file whose {func}() returns (model, example_inputs); "
            "the repository's example is examples/model.py:build")


def check_name(name: str) -> str:
    """Validate a model name without building it; returns its source. Unknown → ModelError."""
    source = resolve_source(name)
    if source == "file":
        path, _, func = name.rpartition(":") if not name.endswith(".py") else (name, "", "")
        if not func:
            raise ModelError(f"{name}: give the function too, as FILE.py:FUNCTION")
        if not Path(path).is_file():
            raise ModelError(f"{path}: no such model file", hint=_file_hint(path, func))
    elif source == "timm":
        timm_name = name.removeprefix("timm:")
        if timm_name not in set(timm_names()):
            raise _unknown(timm_name, timm_names(), "timm model")
    elif source == "hf":
        import transformers

        from dyncli.bench import torch_compat

        refused = torch_compat.transformers_refuses_torch()
        if refused:
            raise ModelError(refused, hint=torch_compat.TRANSFORMERS_HINT)
        cls_name = name.removeprefix("hf:")
        if not hasattr(transformers, cls_name):
            raise _unknown(cls_name, hf_names(), "transformers model class")
        if not isinstance(getattr(getattr(transformers, cls_name), "config_class", None), type):
            # AutoModel* pick a class from a downloaded config; PreTrainedModel is a base class
            raise ModelError(f"transformers.{cls_name} is not a model class bench can build: "
                             "it has no config class of its own",
                             hint="Give a concrete class, e.g. hf:BertModel or "
                             "hf:BertForSequenceClassification (Auto classes choose one from a "
                             "downloaded checkpoint, and bench never downloads)")
    else:
        if name not in torchvision_names() and name not in set(timm_names()):
            cands = torchvision_names() + ["timm:" + n for n in timm_names()]
            raise _unknown(name, cands, "model")
    return source


def default_batch(name: str, source: str, device: str) -> int:
    """The base batch size for a model on a device (``--batch-size`` overrides)."""
    dev = "cuda" if device.startswith("cuda") else "cpu"
    if source == "hf":
        return HF_DEFAULT_BATCH[dev]
    key = name.removeprefix("timm:")
    return BATCH_OVERRIDES.get(key, DEFAULT_BATCH)[dev]


def build(name: str, *, device: str, batch_size: int | None, seq_len: int | None,
          hf_config: dict[str, Any], training: bool) -> Built:
    """Build the named model on CPU with random weights and example inputs at the base size."""
    source = check_name(name)
    builders: dict[str, Callable[..., Built]] = {
        "file": _build_file, "timm": _build_timm, "hf": _build_hf, "bare": _build_bare}
    return builders[source](name, device=device, batch_size=batch_size, seq_len=seq_len,
                            hf_config=hf_config, training=training)


def _image_model(name: str, source: str, model: Any, batch: int, size: tuple[int, int, int],
                 num_classes: int | None) -> Built:
    import torch

    x = torch.randn(batch, *size)
    loss = "cross_entropy" if num_classes else "sum"
    return Built(name, source, model, (x,), {}, batch, None, {"0": InputKind("float")},
                 loss, num_classes)


def _build_bare(name: str, *, device: str, batch_size: int | None, **_kw: Any) -> Built:
    if name not in torchvision_names():
        return _build_timm("timm:" + name, device=device, batch_size=batch_size)
    import torchvision

    model = torchvision.models.get_model(name, weights=None)
    if name == "inception_v3":
        model.aux_logits, model.AuxLogits = False, None  # tuple outputs in train mode otherwise
    side = IMAGE_SIZE.get(name, 224)
    batch = batch_size or default_batch(name, "bare", device)
    return _image_model(name, "torchvision", model, batch, (3, side, side), 1000)


def _build_timm(name: str, *, device: str, batch_size: int | None, **_: Any) -> Built:
    import timm

    timm_name = name.removeprefix("timm:")
    model = timm.create_model(timm_name, pretrained=False)
    cfg = getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", {}) or {}
    size = tuple(cfg.get("input_size", (3, 224, 224)))
    batch = batch_size or default_batch(name, "timm", device)
    classes = getattr(model, "num_classes", None) or None
    return _image_model(name, "timm", model, batch, size, classes)


def _build_hf(name: str, *, device: str, batch_size: int | None, seq_len: int | None,
              hf_config: dict[str, Any], training: bool, **_: Any) -> Built:
    import torch
    import transformers

    cls_name = name.removeprefix("hf:")
    cls = getattr(transformers, cls_name)
    # No KV cache unless asked: a benchmark step is one full forward, and a cache object in
    # the output is neither timed work worth measuring nor comparable between eager/compiled.
    overrides = {"use_cache": False, **hf_config}
    try:
        config = cls.config_class(**overrides)
        if training:  # eager and compiled would draw different dropout masks (and audio
            # models' layer drop and SpecAugment masks, mask_time_prob, mask_feature_prob)
            for key, value in list(vars(config).items()):
                if _random_in_training(key) and isinstance(value, float) and key not in hf_config:
                    setattr(config, key, 0.0)
        model = cls(config)
    except (TypeError, ValueError) as e:  # transformers validates configs with ValueError
        raise ModelError(f"hf_config for {cls_name}: {e}".splitlines()[0]) from None
    dev = "cuda" if device.startswith("cuda") else "cpu"
    batch = batch_size or HF_DEFAULT_BATCH[dev]
    seq = seq_len or HF_DEFAULT_SEQ[dev]
    vocab = int(getattr(config, "vocab_size", 1000) or 1000)
    params = inspect.signature(model.forward).parameters
    main = _main_input(cls, cls_name, params)
    if main == "pixel_values":
        # transformers 5's forward takes **kwargs, so a ViT given input_ids raised inside it
        # ("'NoneType' object has no attribute 'dtype'", round 34): image models get pixels
        return _hf_pixels(name, cls_name, model, config, batch)
    if main in AUDIO_INPUTS:
        return _hf_audio(name, cls_name, main, model, config, params, batch,
                         seq_len, HF_DEFAULT_SEQ[dev], vocab)
    kwargs: dict[str, Any] = {"input_ids": torch.randint(0, vocab, (batch, seq))}
    kinds = {"input_ids": InputKind("ids", 0, vocab)}
    if "attention_mask" in params:
        kwargs["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
        kinds["attention_mask"] = InputKind("mask")
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        kwargs["decoder_input_ids"] = torch.randint(0, vocab, (batch, seq))
        kinds["decoder_input_ids"] = InputKind("ids", 0, vocab)
    loss = "sum"
    if training and "labels" in params:
        if cls_name.endswith(LM_SUFFIXES):
            kwargs["labels"] = torch.randint(0, vocab, (batch, seq))
            kinds["labels"] = InputKind("ids", 0, vocab)
            loss = "model"
        elif cls_name.endswith("ForSequenceClassification"):
            labels = int(getattr(config, "num_labels", 2))
            kwargs["labels"] = torch.randint(0, labels, (batch,))
            kinds["labels"] = InputKind("ids", 0, labels)
            loss = "model"
    return Built(name, "hf", model, (), kwargs, batch, seq, kinds, loss)


def _random_in_training(key: str) -> bool:
    """Whether an hf config key is a probability of something random in training."""
    return "dropout" in key or key == "layerdrop" or (key.startswith("mask_")
                                                      and key.endswith("_prob"))


def _main_input(cls: Any, cls_name: str, params: Mapping[str, inspect.Parameter]) -> str:
    """The input bench builds for an hf model: its class's ``main_input_name`` (what
    transformers' own pipelines feed it) where its forward takes that by name or through
    ``**kwargs`` with nothing else required (a class that does not set it inherits
    ``input_ids``, which a vision tower's ``forward(hidden_states, grid_thw, **kwargs)`` would
    swallow), else ``input_ids`` or ``pixel_values`` where it names one of those. One error
    otherwise."""
    main = getattr(cls, "main_input_name", None)
    kwargs = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
    required = [n for n, p in params.items() if n != "self" and p.default is p.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                   inspect.Parameter.VAR_KEYWORD)]
    if isinstance(main, str) and (main in params or (kwargs and not required)):
        if main in HF_INPUTS:
            return main
        raise _cannot(cls_name, main, "bench builds " + ", ".join(HF_INPUTS) + " only")
    for known in ("input_ids", "pixel_values"):
        if known in params:
            return known
    first = next((p for p in params if p not in ("self", "args", "kwargs")), None)
    said = main if isinstance(main, str) else first or "?"
    why = (f"its forward takes {first}, not its main input {said}"
           if first and first != said else "its forward names no input bench can build")
    raise _cannot(cls_name, said, why)


def _cannot(cls_name: str, what: str, why: str) -> ModelError:
    """The one error for an hf model whose input bench cannot build."""
    return ModelError(f"hf:{cls_name}: bench cannot build its input {what}: {why}",
                      hint="Give the model as FILE.py:FUNCTION returning (model, inputs); "
                      "see examples/model.py")


def _hf_pixels(name: str, cls_name: str, model: Any, config: Any, batch: int) -> Built:
    """An hf image model (main input ``pixel_values``: ViT, DeiT, Swin, ConvNeXt …): a batch
    of images of the config's ``image_size`` and ``num_channels``, no sequence dim."""
    import torch

    size = getattr(config, "image_size", None)
    hw = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
    if len(hw) != 2 or _ints(hw) is None:
        raise _cannot(cls_name, "pixel_values", f"its config's image_size is {size!r}, not a "
                      "size or a (height, width)")
    channels = int(getattr(config, "num_channels", 3) or 3)
    kwargs = {"pixel_values": torch.randn(batch, channels, *hw)}
    return Built(name, "hf", model, (), kwargs, batch, None,
                 {"pixel_values": InputKind("float")})


def _ints(value: Any) -> tuple[int, ...] | None:
    """A config's list of positive ints, None when it is not one."""
    if not isinstance(value, (list, tuple)) or not value \
            or not all(isinstance(x, int) and x > 0 for x in value):
        return None
    return tuple(value)


def _hf_audio(name: str, cls_name: str, main: str, model: Any, config: Any,
              params: Mapping[str, inspect.Parameter], batch: int, seq_len: int | None,
              default_seq: int, vocab: int) -> Built:
    """An hf audio model, from its config: a waveform ``(batch, samples)`` for a convolutional
    feature encoder's ``input_values`` (the sequence dim counts samples; by default enough for
    ``default_seq`` frames), or Whisper's ``input_features`` ``(batch, num_mel_bins,
    2 * max_source_positions)`` (a length its encoder requires: no sequence dim there; an
    encoder-decoder's ``decoder_input_ids`` carry it). One error for any other config."""
    import torch

    if main == "input_values":
        kernels, strides = _ints(getattr(config, "conv_kernel", None)), \
            _ints(getattr(config, "conv_stride", None))
        if kernels is None or strides is None or len(kernels) != len(strides):
            raise _cannot(cls_name, main, "bench builds it only as a waveform for a "
                          "convolutional feature encoder (conv_kernel and conv_stride in the "
                          "config: Wav2Vec2, HuBERT, WavLM), and this config has neither")
        receptive, hop = 1, 1
        for k, s in zip(kernels, strides, strict=True):
            receptive, hop = receptive + (k - 1) * hop, hop * s
        samples = seq_len or receptive + (default_seq - 1) * hop
        if samples < receptive:
            raise _cannot(cls_name, main, f"--seq-len {samples} samples is shorter than its "
                          f"feature encoder's receptive field, {receptive} samples")
        return Built(name, "hf", model, (), {main: torch.randn(batch, samples)}, batch, samples,
                     {main: InputKind("float")})
    mels, positions = getattr(config, "num_mel_bins", None), \
        getattr(config, "max_source_positions", None)
    if not (isinstance(mels, int) and isinstance(positions, int) and mels > 0 and positions > 0):
        raise _cannot(cls_name, main, "bench builds it only as Whisper's log-mel frames "
                      "(num_mel_bins and max_source_positions in the config), and this config "
                      "has neither")
    frames = 2 * positions  # two convolutions, the second of stride 2
    kwargs: dict[str, Any] = {main: torch.randn(batch, mels, frames)}
    kinds = {main: InputKind("float")}
    seq = None
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        seq = seq_len or min(default_seq, int(getattr(config, "max_target_positions", 0) or
                                              default_seq))
        if seq in (mels, frames):  # bench varies every dim of the sequence's size
            raise _cannot(cls_name, "decoder_input_ids", f"--seq-len {seq} is also a fixed "
                          f"size of {main} {(batch, mels, frames)}; give another --seq-len")
        kwargs["decoder_input_ids"] = torch.randint(0, vocab, (batch, seq))
        kinds["decoder_input_ids"] = InputKind("ids", 0, vocab)
    return Built(name, "hf", model, (), kwargs, batch, seq, kinds)


def _load_function(path: str, func: str) -> Callable[..., Any]:
    file = Path(path).resolve()
    mod_name = f"dyncli_user_model_{abs(hash(str(file)))}"
    spec = importlib.util.spec_from_file_location(mod_name, file)
    if spec is None or spec.loader is None:
        raise ModelError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses & pickling inside the file need it
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # the file named is wrong: the user's input, exit 2
        # (the file may have removed itself from sys.modules: `del sys.modules[__name__]`)
        sys.modules.pop(mod_name, None)
        raise ModelError(f"{path}: importing it raised {short_error(e)}{_where(e, file)}",
                         hint=f"python {shell_word(path)} shows the whole error "
                              "(DYNCLI_DEBUG=1 adds dyncli's traceback)") from e
    fn = getattr(module, func, None)
    if not callable(fn):
        names = [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]
        close = difflib.get_close_matches(func, names, n=3)
        raise ModelError(f"{path}: no function '{func}'",
                         hint=("Close matches: " + ", ".join(close)) if close else None)
    return fn


def _where(err: BaseException, file: Path) -> str:
    """`` (line N)``: the last line of the user's file on ``err``'s traceback; nothing when
    none is, or for a SyntaxError (its message names the line)."""
    if isinstance(err, SyntaxError):
        return ""
    lines = [lineno for frame, lineno in traceback.walk_tb(err.__traceback__)
             if Path(frame.f_code.co_filename) == file]
    return f" (line {lines[-1]})" if lines else ""


def infer_kind(name: str, tensor: Any) -> InputKind:
    """The kind of data an example input holds, so a fresh one of another shape can be made."""
    import torch

    if tensor.is_floating_point() or tensor.is_complex():
        return InputKind("float")
    if tensor.dtype == torch.bool or "mask" in name:
        return InputKind("mask")
    if "token_type" in name:
        return InputKind("zeros")
    if tensor.numel() == 0:
        return InputKind("zeros")
    return InputKind("ids", min(0, int(tensor.min())), int(tensor.max()) + 1)


def _build_file(name: str, **_kw: Any) -> Built:
    import torch

    path, _, func = name.rpartition(":")
    out = _load_function(path, func)()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ModelError(f"{name}: must return (model, example_inputs), got {type(out).__name__}")
    model, inputs = out
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    if isinstance(inputs, dict):
        args, kwargs = (), dict(inputs)
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    elif isinstance(inputs, torch.Tensor):
        args, kwargs = (inputs,), {}
    else:
        raise ModelError(f"{name}: example_inputs must be a tuple or a dict, "
                         f"got {type(inputs).__name__}")
    named = {str(i): a for i, a in enumerate(args)} | kwargs
    tensors = {k: v for k, v in named.items() if isinstance(v, torch.Tensor)}
    if not tensors:
        raise ModelError(f"{name}: example_inputs hold no tensor")
    first = next((t for t in tensors.values() if t.dim() > 0), None)
    if first is None:  # nothing to vary: every tensor is a scalar
        raise ModelError(f"{name}: example_inputs hold only 0-d tensors; bench varies the batch "
                         "dim, so give at least one input with a dim")
    example_batch = int(first.shape[0])
    kinds = {k: infer_kind(k, t) for k, t in tensors.items()}
    return Built(name, "file", model, args, kwargs, example_batch, None, kinds, "sum")


def parse_overrides(text: str) -> dict[str, Any]:
    """``--hf-config "num_hidden_layers=2,hidden_size=128"`` → a dict (values as JSON if they parse)."""
    import json

    from dyncli.errors import UsageError

    out: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--hf-config: expected KEY=VALUE, got {part!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key.strip()] = value
    return out


@dataclass(frozen=True)
class Listing:
    """What ``dyncli bench --list`` shows."""

    torchvision: list[str]
    timm_count: int
    hf_examples: tuple[str, ...]


def listing() -> Listing:
    """The built-in model names (torchvision), and how many timm models there are."""
    return Listing(torchvision_names(), len(timm_names()), HF_EXAMPLES)

"""The output comparison (like the harness's ``same``) and the model zoo, with real torch but
no compile (fast), plus one timm classifier trained under compile."""

from __future__ import annotations

import pytest
import torch

from dyncli.bench.accuracy import compare, compare_tensors, flatten
from dyncli.bench.harness import loss_of
from dyncli.bench.models import build, default_batch, infer_kind, parse_overrides
from dyncli.bench.runner import run_bench
from dyncli.config import BenchConfig
from dyncli.errors import ModelError, UsageError


def test_allclose_within_dtype_tolerance() -> None:
    x = torch.randn(4, 8)
    assert compare_tensors(x, x + 5e-4).ok
    assert not compare_tensors(x, x + 1.0).ok
    half = x.to(torch.bfloat16)
    assert compare_tensors(half, half + 0.01).ok  # bf16 tolerance is looser


def test_cosine_fallback_for_large_values() -> None:
    x = torch.randn(1000) * 1e4
    noisy = x * (1 + 1e-3 * torch.randn(1000))
    verdict = compare_tensors(x, noisy)
    assert verdict.ok and "cosine similarity" in verdict.detail
    assert not compare_tensors(x, torch.randn(1000) * 1e4).ok


def test_shapes_ints_nans_and_structure() -> None:
    assert not compare_tensors(torch.zeros(2, 3), torch.zeros(3, 2)).ok
    assert compare_tensors(torch.tensor([1, 2]), torch.tensor([1, 2])).ok
    assert not compare_tensors(torch.tensor([1, 2]), torch.tensor([1, 3])).ok
    nan = torch.tensor([1.0, float("nan")])
    assert compare_tensors(nan, nan.clone()).ok
    assert not compare_tensors(nan, torch.tensor([1.0, 2.0])).ok
    a = {"logits": torch.ones(2), "hidden": (torch.zeros(1), torch.ones(1))}
    assert flatten(a)[0] is a["logits"] and len(flatten(a)) == 3
    assert compare(a, {"logits": torch.ones(2), "hidden": (torch.zeros(1), torch.ones(1))}).ok
    verdict = compare(a, {"logits": torch.ones(2)})
    assert not verdict.ok and "1 outputs, eager gave 3" in verdict.detail


def test_zoo_builds_torchvision_timm_and_hf_without_downloading() -> None:
    tv = build("squeezenet1_1", device="cpu", batch_size=None, seq_len=None, hf_config={},
               training=False)
    assert tv.source == "torchvision" and tv.args[0].shape == (16, 3, 224, 224)
    assert tv.loss == "cross_entropy" and tv.num_classes == 1000
    tm = build("timm:test_resnet", device="cpu", batch_size=5, seq_len=None, hf_config={},
               training=False)
    assert tm.source == "timm" and tm.args[0].shape == (5, 3, 160, 160)
    hf = build("hf:BertForSequenceClassification", device="cpu", batch_size=2, seq_len=7,
               hf_config={"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
                          "intermediate_size": 32, "num_labels": 3}, training=True)
    assert hf.kwargs["input_ids"].shape == (2, 7) and hf.kwargs["labels"].shape == (2,)
    assert hf.kinds["labels"].high == 3 and hf.loss == "model"
    assert default_batch("resnet50", "bare", "cuda") == 32


def test_hf_image_models_get_pixels_and_other_inputs_one_error() -> None:
    """Round 34: hf:ViTModel was given input_ids, which transformers 5's forward(**kwargs)
    swallowed, and every shape failed eager with "'NoneType' object has no attribute 'dtype'"."""
    vit = build("hf:ViTModel", device="cpu", batch_size=2, seq_len=None,
                hf_config={"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
                           "intermediate_size": 32, "image_size": 16, "patch_size": 8},
                training=False)
    assert set(vit.kwargs) == {"pixel_values"} and vit.seq_len is None
    assert vit.kwargs["pixel_values"].shape == (2, 3, 16, 16)
    assert vit.kinds["pixel_values"].kind == "float"
    out = vit.model(**vit.kwargs)
    assert out.last_hidden_state.shape[0] == 2


# tiny audio configs (lists given as build's hf_config; --hf-config takes scalars)
WAV2VEC2 = {"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
            "intermediate_size": 32, "conv_dim": [8, 8], "conv_kernel": [10, 3],
            "conv_stride": [5, 2], "num_feat_extract_layers": 2, "num_conv_pos_embeddings": 4,
            "num_conv_pos_embedding_groups": 2}
WHISPER = {"encoder_layers": 1, "decoder_layers": 1, "d_model": 16,
           "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 32,
           "decoder_ffn_dim": 32, "num_mel_bins": 8, "max_source_positions": 24,
           "max_target_positions": 64}


def test_hf_audio_models_get_their_main_input_from_the_config() -> None:
    """Round 35: a model whose main input is neither input_ids nor pixel_values (Wav2Vec2's
    input_values, Whisper's input_features) was refused; bench now builds it from the class's
    main_input_name and the config, and the model runs on it."""
    from dyncli.bench.core.shapes import detect_dims
    from dyncli.bench.tensors import named_shapes

    w2v = build("hf:Wav2Vec2Model", device="cpu", batch_size=2, seq_len=None,
                hf_config=WAV2VEC2, training=True)
    # a waveform: (batch, samples), the sequence dim counting samples; by default enough for
    # the CPU's 32 frames: receptive field 10 + 5*2 = 20 samples, hop 10
    assert set(w2v.kwargs) == {"input_values"} and w2v.seq_len == 20 + 31 * 10
    assert w2v.kwargs["input_values"].shape == (2, 330) and w2v.kinds["input_values"].kind == "float"
    assert w2v.model.config.mask_time_prob == 0.0 and w2v.model.config.layerdrop == 0.0  # training
    dims = detect_dims(named_shapes(w2v), w2v.batch_size, None, w2v.seq_len)
    assert (dims.batch, dims.seq) == ({"input_values": (0,)}, {"input_values": (1,)})
    assert w2v.model(**w2v.kwargs).last_hidden_state.shape[:2] == (2, 32)
    shorter = build("hf:Wav2Vec2Model", device="cpu", batch_size=2, seq_len=150,
                    hf_config=WAV2VEC2, training=False)
    assert shorter.kwargs["input_values"].shape == (2, 150)
    with pytest.raises(ModelError, match=r"^hf:Wav2Vec2Model: bench cannot build its input "
                       r"input_values: --seq-len 19 samples is shorter than its feature "
                       r"encoder's receptive field, 20 samples$"):
        build("hf:Wav2Vec2Model", device="cpu", batch_size=2, seq_len=19, hf_config=WAV2VEC2,
              training=False)

    whisper = build("hf:WhisperModel", device="cpu", batch_size=2, seq_len=None,
                    hf_config=WHISPER, training=False)
    # the encoder requires 2 * max_source_positions frames: the decoder's ids carry the sequence
    assert whisper.kwargs["input_features"].shape == (2, 8, 48)
    assert whisper.kwargs["decoder_input_ids"].shape == (2, 32) and whisper.seq_len == 32
    dims = detect_dims(named_shapes(whisper), whisper.batch_size, None, whisper.seq_len)
    assert dims.seq == {"decoder_input_ids": (1,)}
    assert whisper.model(**whisper.kwargs).last_hidden_state.shape == (2, 32, 16)
    with pytest.raises(ModelError, match=r"^hf:WhisperModel: bench cannot build its input "
                       r"decoder_input_ids: --seq-len 48 is also a fixed size of input_features "
                       r"\(2, 8, 48\); give another --seq-len$"):
        build("hf:WhisperModel", device="cpu", batch_size=2, seq_len=48, hf_config=WHISPER,
              training=False)


@pytest.mark.parametrize(("cls", "config", "said"), [
    # main input input_values, but a spectrogram (batch, frames, mel bins): no conv encoder
    ("ASTModel", {"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
                  "intermediate_size": 32},
     "input_values: bench builds it only as a waveform for a convolutional feature encoder "
     "(conv_kernel and conv_stride in the config: Wav2Vec2, HuBERT, WavLM), and this config "
     "has neither"),
    # main input input_features, but Speech2Text's (batch, frames, features)
    ("Speech2TextModel", {"encoder_layers": 1, "decoder_layers": 1, "d_model": 16,
                          "encoder_attention_heads": 2, "decoder_attention_heads": 2,
                          "encoder_ffn_dim": 32, "decoder_ffn_dim": 32},
     "input_features: bench builds it only as Whisper's log-mel frames (num_mel_bins and "
     "max_source_positions in the config), and this config has neither"),
    # main input input_ids, which its forward does not take
    ("Blip2QFormerModel", {"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2,
                           "intermediate_size": 32, "encoder_hidden_size": 16},
     "input_ids: its forward takes query_embeds, not its main input input_ids"),
])
def test_an_hf_input_bench_cannot_build_is_one_error_naming_model_and_input(
        cls: str, config: dict, said: str) -> None:
    with pytest.raises(ModelError) as e:
        build(f"hf:{cls}", device="cpu", batch_size=2, seq_len=None, hf_config=config,
              training=False)
    assert str(e.value) == f"hf:{cls}: bench cannot build its input {said}"
    assert "\n" not in str(e.value) and e.value.hint and "FILE.py:FUNCTION" in e.value.hint


def test_zoo_errors() -> None:
    with pytest.raises(ModelError, match="hf_config for BertModel"):
        build("hf:BertModel", device="cpu", batch_size=None, seq_len=None,
              hf_config={"hidden_size": 30, "num_attention_heads": 4, "num_hidden_layers": 1},
              training=False)
    with pytest.raises(UsageError):
        parse_overrides("a=1,b")
    assert parse_overrides("a=1, b=true,c=x") == {"a": 1, "b": True, "c": "x"}


def test_infer_kind() -> None:
    assert infer_kind("x", torch.randn(2)).kind == "float"
    assert infer_kind("attention_mask", torch.ones(2, dtype=torch.long)).kind == "mask"
    assert infer_kind("valid", torch.ones(2, dtype=torch.bool)).kind == "mask"
    assert infer_kind("token_type_ids", torch.zeros(2, dtype=torch.long)).kind == "zeros"
    ids = infer_kind("ids", torch.tensor([3, 9, 4]))
    assert (ids.kind, ids.low, ids.high) == ("ids", 0, 10)


def test_training_loss_kinds() -> None:
    logits = torch.randn(5, 3)
    expected = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 0, 1]))
    assert torch.allclose(loss_of(logits, "cross_entropy", 3), expected)
    out = (torch.ones(2, 2), {"aux": torch.full((3,), 2.0), "ids": torch.tensor([1])})
    assert float(loss_of(out, "sum", None)) == 3.0  # mean of each float output, summed
    assert float(loss_of({"loss": torch.tensor(0.5), "logits": logits}, "model", None)) == 0.5


@pytest.mark.slow
@pytest.mark.long  # builds a timm classifier: a minute on 2 cores
def test_timm_classifier_compiles_once_dynamic() -> None:
    # inference: a timm training compile (forward + backward) costs ~1 min of CPU here
    cfg = BenchConfig(variations=2, strategy=["dynamic"], batch_size=4,
                      device="cpu", repeat=2, warmup=0, fresh_cache=False)
    result = run_bench("timm:test_resnet", cfg)
    run = result.runs[0]
    assert run.status == "pass", [v.detail for v in run.variations]
    assert run.variations[0].batch_size == 4 and run.variations[1].batch_size in (3, 5)
    assert run.compiles == 1


def test_the_cosine_fallback_needs_the_norms_to_agree() -> None:
    # a 1-element tensor's cosine similarity is its sign: the batch mean of a model served
    # padded (3 rows padded to 4, the padded row zero) was 0.0777 against eager's 0.1036 and
    # passed; any tensor scaled by 2 passed too
    verdict = compare_tensors(torch.tensor(0.1036), torch.tensor(0.0777))
    assert not verdict.ok and "norm ratio 0.75" in verdict.detail
    x = torch.randn(1000) * 1e4
    assert not compare_tensors(x, 2 * x).ok
    assert compare_tensors(x, x * (1 + 1e-3 * torch.randn(1000))).ok


def test_hf_config_and_seq_len_a_model_cannot_use_are_said_unused(tmp_path) -> None:
    # `um.py:build --hf-config num_layers=1 --seq-len 8` ran as if neither had been given
    from dyncli.bench.core.result import BenchResult, Environment, Hooks
    from dyncli.bench.runner import _load

    (tmp_path / "m.py").write_text(
        "import torch\ndef build():\n    return torch.nn.Linear(4, 4), (torch.randn(3, 4),)\n")
    name = f"{tmp_path / 'm.py'}:build"
    # round 27: so for --buckets (here from autodyn.toml: the command's origins reach the run)
    cfg = BenchConfig(hf_config={"num_layers": 1}, seq_len=8, buckets="8,16")
    said: list[str] = []
    env = Environment("0", "0", "0", "cpu", "cpu", "float32", 1)
    hooks = Hooks(origins={"hf_config": "command line", "seq_len": "command line",
                           "buckets": "autodyn.toml"})
    assert _load(name, cfg, "cpu", BenchResult(name, env, {}), hooks, None, said.append)
    assert said == [
        f"--hf-config num_layers=1: for hf: models; {name} is not one, so it was not used",
        f"--seq-len 8: for models with a sequence dim; {name} has none (only hf: text and audio models do), "
        "so it was not used",
        "bench.buckets = 8,16 (from autodyn.toml): for the pad strategy; no strategy run here "
        "pads (automatic), so it was not used"]

"""dyncli bench through the CLI: bad input, exit codes, the files and the terminal output.

The core call is replaced by a synthetic result where compiling is not the point, so these
tests are fast; the real compile path is covered in tests/integration/test_bench_*.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import dyncli.bench.runner as core_bench
from dyncli.bench.core.result import BenchResult, Hooks
from dyncli.cli import app

ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}
ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "bench_sample_result", Path(__file__).resolve().parents[1] / "unit" / "conftest_bench.py")
assert _spec and _spec.loader
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
sample_result = _fixtures.sample_result


def fake_core(monkeypatch: pytest.MonkeyPatch, result: BenchResult) -> list[Any]:
    """Make run_bench return ``result`` after calling run_done (as after each strategy)."""
    seen: list[Any] = []

    def run_bench(model: str, cfg: Any, hooks: Hooks | None = None,
                  process_each: bool | None = None) -> BenchResult:
        seen.append((model, cfg))
        result.settings = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}  # as run_bench does
        if hooks and hooks.run_done:
            hooks.run_done(result)
        return result

    monkeypatch.setattr(core_bench, "run_bench", run_bench)
    return seen


def test_unknown_model_suggests_close_matches(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench", "resnet5"], env=ENV)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Error: Unknown model 'resnet5'"
    assert lines[1].startswith("Hint: Close matches: resnet50")
    assert "dyncli bench --list" in lines[1]
    assert result.stdout == ""


def test_unknown_timm_and_hf_names(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench", "timm:resnet5O"], env=ENV)
    assert result.exit_code == 2
    assert "Unknown timm model 'resnet5O'" in result.stderr and "resnet50" in result.stderr
    result = runner.invoke(app, ["bench", "hf:BertModle"], env=ENV)
    assert result.exit_code == 2
    assert "Unknown transformers model class 'BertModle'" in result.stderr
    assert "BertModel" in result.stderr


def test_missing_model_file_and_function(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "nope.py:build"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "Error: nope.py: no such model file"
    (tmp_path / "m.py").write_text("def buidl():\n    pass\n")
    result = runner.invoke(app, ["bench", "m.py:build", "--device", "cpu"], env=ENV)
    assert result.exit_code == 2
    assert "m.py: no function 'build'" in result.stderr and "buidl" in result.stderr


def test_a_model_file_that_raises_at_import_is_bad_input_like_a_missing_function(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # round 26: the file raising at import exited 1 (model_fail_to_load, "nothing ran") where
    # a missing function exited 2; both are the FILE:FUNCTION given being wrong
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("x = 1\nraise RuntimeError('weights missing\\nmore')\n")
    (tmp_path / "s.py").write_text("def build(:\n")
    result = runner.invoke(app, ["bench", "m.py:build", "--device", "cpu", "--json", "o.json"],
                           env=ENV)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-2:] == [
        "Error: m.py: importing it raised RuntimeError: weights missing (line 2)",
        "Hint: python m.py shows the whole error (DYNCLI_DEBUG=1 adds dyncli's traceback)"]
    assert "model_fail_to_load" not in result.output and not (tmp_path / "o.json").exists()
    result = runner.invoke(app, ["bench", "s.py:build", "--device", "cpu"], env=ENV)
    assert result.exit_code == 2
    assert "Error: s.py: importing it raised SyntaxError: " in result.stderr


def test_a_model_file_with_only_scalar_inputs_is_one_error_line(runner: CliRunner,
                                                                 tmp_path: Path) -> None:
    # it was `model_fail_to_load: StopIteration` (looking for a tensor with a batch dim)
    (tmp_path / "m.py").write_text(
        "import torch\ndef build():\n    return torch.nn.Identity(), (torch.tensor(3.0),)\n")
    result = runner.invoke(app, ["bench", "m.py:build", "--device", "cpu"], env=ENV)
    assert result.exit_code == 2
    assert "StopIteration" not in result.output
    assert result.stderr.splitlines()[-1] == (
        "Error: m.py:build: example_inputs hold only 0-d tensors; bench varies the batch dim, "
        "so give at least one input with a dim")


@pytest.mark.parametrize("cls", ["AutoModel", "AutoModelForCausalLM", "PreTrainedModel"])
def test_an_hf_class_that_is_no_concrete_model_says_so(runner: CliRunner, cls: str) -> None:
    # AutoModel was "Unknown transformers model class 'AutoModel'" with AutoModel its own
    # close match; PreTrainedModel reached `None(**config)` and said "'NoneType' object ..."
    pytest.importorskip("transformers")
    result = runner.invoke(app, ["bench", f"hf:{cls}", "--device", "cpu"], env=ENV)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == (f"Error: transformers.{cls} is not a model class bench can build: "
                        "it has no config class of its own")
    assert lines[1].startswith("Hint: Give a concrete class, e.g. hf:BertModel")
    assert "Unknown" not in result.stderr and result.stdout == ""


def test_bad_config_key_and_type_fail_before_any_work(runner: CliRunner, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fake_core(monkeypatch, sample_result())
    (tmp_path / "autodyn.toml").write_text("[bench]\nstrategies = ['static']\n")
    result = runner.invoke(app, ["bench", "resnet50"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: autodyn.toml: bench.strategies: unknown key")
    (tmp_path / "autodyn.toml").write_text("[bench]\nstrategy = ['fast']\n")
    result = runner.invoke(app, ["bench", "resnet50"], env=ENV)
    assert result.exit_code == 2
    assert "bench.strategy: expected one of static, automatic, mark-dynamic, dynamic" in result.stderr
    assert seen == []


@pytest.mark.parametrize(("args", "message"), [
    (["--strategy", "static,fast"], "Error: command line: bench.strategy: expected one of "
                                    "static, automatic, mark-dynamic, dynamic, sources, collectives, "
                                    "pad, unbacked, eager-then-compile, pgo, got 'fast'"),
    (["--vary", "time"], "Error: command line: bench.vary: expected one of batch, seq"),
    (["--strategy", ","], "Error: --strategy: give at least one strategy"),
    (["--repeat", "1"], "Error: --repeat must be >= 2"),
    (["--spread", "1.5"], "Error: --spread must be in [0, 1)"),
    (["--hf-config", "layers"], "Error: --hf-config: expected KEY=VALUE"),
    (["--mode", "train"], "Error: command line: bench.mode: expected one of inference, training"),
    (["--strategy", "automatic,sources"], "Error: --strategy sources: no dynamic sources given\n"
                                          "Hint: Pass --dynamic-sources"),
    (["--strategy", "collectives"], "Error: --strategy collectives: needs ranks "
                                    "(torch.distributed)\nHint: Add --nproc 2"),
    (["--nproc", "0"], "Error: --nproc must be in [1, 1024]"),
    (["--nproc", "2", "--timeout", "0"], "Error: --timeout must be > 0 seconds"),
    (["--nproc", "2", "--rank-shapes", "odd"], "Error: command line: bench.rank_shapes: expected "
                                               "one of same, skewed, independent"),
    (["--sizes", "1,x"], "Error: --sizes: expected a comma list of integers, got '1,x'"),
    (["--sizes", "4,-1"], "Error: --sizes: size must be >= 0, got -1"),
    (["--buckets", "8,x"], "Error: --buckets: expected pow2 or a comma list of sizes"),
    (["--requests", "0"], "Error: --requests must be >= 1"),
    (["--seed", "-1"], "Error: --seed must be in [0, 2^63)"),
    (["--variations", "1000000"], "Error: --variations must be at most 100,000"),
    (["--batch-size", "99999999999"], "Error: --batch-size must be in [1, 2,147,483,647]"),
    (["--buckets", "9" * 30], "Error: --buckets: at most 1000 sizes of at most 2,147,483,647"),
    (["--nproc", "2", "--sizes", "1,2", "--strategy", "pad"],
     "Error: --nproc 2: --sizes, pad run in one process only"),
    (["--shapes", "examples/traffic.csv", "--sizes", "1"], "Error: --shapes and --sizes: give one"),
    (["--emit", "python"], "Error: --emit: a plan is for a request stream, and none was given\n"
                           "Hint: Give your traffic with --shapes FILE, --sizes or --requests N"),
    (["--emit", "yaml"], "Error: command line: bench.emit: expected one of python, env, toml"),
    (["--buckets", "auto", "--max-buckets", "0"], "Error: --max-buckets must be in [1, 256]"),
    (["--start", "tepid"], "Error: command line: bench.start: expected one of cold, warm"),
    (["--requests-per-start", "0"], "Error: --requests-per-start must be >= 1"),
    (["--nproc", "2", "--start", "warm"], "Error: --start warm and --requests-per-start run in "
                                          "one process only"),
    (["--compile-mode", "fast"], "Error: command line: bench.compile_mode: expected one of "
                                 "default, reduce-overhead, max-autotune-no-cudagraphs, "
                                 "max-autotune, got 'fast'"),
    (["--capture-sizes", "8"], "Error: --capture-sizes: only a mode that records CUDA graphs uses "
                               "it\nHint: Add --compile-mode reduce-overhead"),
    (["--compile-mode", "reduce-overhead", "--capture-sizes", "8,x"],
     "Error: --capture-sizes: expected a comma list of integers, got '8,x'"),
    (["--memory-budget", "lots"], "Error: --memory-budget: expected a size like 2GiB"),
    (["--compile-mode", "default,reduce-overhead", "--nproc", "2"],
     "Error: --nproc 2: ranks run one compile mode"),
])
def test_bad_flags_are_usage_errors(runner: CliRunner, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["bench", "resnet50", *args], env=ENV)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(message)


def test_bad_shapes_file_names_the_file_and_line(runner: CliRunner, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["bench", "resnet50", "--shapes", "no-such-traffic.csv"], env=ENV)
    assert missing.exit_code != 0  # InputError's code (unreadable input)
    assert missing.stderr.startswith("Error: no-such-traffic.csv: no such shapes file")
    bad = tmp_path / "t.csv"
    bad.write_text("batch,count\n8,1\n4,none\n")
    result = runner.invoke(app, ["bench", "resnet50", "--shapes", str(bad)], env=ENV)
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"Error: {bad}: line 3: count must be an integer, got 'none'")
    assert "Hint: CSV with a header row" in result.stderr


def test_no_model_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench"], env=ENV)
    assert result.exit_code == 2
    assert "Error: Give a model to benchmark" in result.stderr


@pytest.mark.torch
def test_cuda_without_gpu_is_an_error(runner: CliRunner) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    result = runner.invoke(app, ["bench", "examples/model.py:build", "--device", "cuda"], env=ENV)
    assert "no such model file" in result.stderr  # file checked first, relative to cwd
    model = Path(__file__).resolve().parents[2] / "examples" / "model.py"
    result = runner.invoke(app, ["bench", f"{model}:build", "--device", "cuda"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --device cuda: no CUDA device is available")


def test_list(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench", "--list"], env=ENV)
    assert result.exit_code == 0
    assert "resnet50" in result.stdout and "mobilenet_v3_small" in result.stdout
    assert "timm:NAME" in result.stdout and "hf:BertModel" in result.stdout


def test_json_csv_and_tables(runner: CliRunner, monkeypatch: pytest.MonkeyPatch,
                             tmp_path: Path) -> None:
    seen = fake_core(monkeypatch, sample_result())
    result = runner.invoke(app, [
        "bench", "resnet50", "--strategy", "static,dynamic", "--variations", "2",
        "--hf-config", "num_hidden_layers=2,act=gelu", "--json", "r.json", "--csv", "r.csv",
        "--plot", "r.png"], env=ENV)
    assert result.exit_code == 0, result.stderr
    _, cfg = seen[0]
    assert cfg.strategy == ["static", "dynamic"] and cfg.variations == 2
    assert cfg.hf_config == {"num_hidden_layers": 2, "act": "gelu"}
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schema_version"] == 1 and [r["strategy"] for r in doc["runs"]] == ["static", "dynamic"]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text())))
    assert [r["batch_size"] for r in rows] == ["8", "10", "8", "10"]
    assert (tmp_path / "r.png").exists()
    out = result.stdout
    assert "static · inference · 2 compiles" in out
    assert "dynamic · inference · 1 compile" in [line.strip() for line in out.splitlines()]
    assert "strategies side by side" in out
    assert "Mann-Whitney U" in out
    rows = {line.split("  ")[1].strip(): line.split()[-2:] for line in out.splitlines()
            if line.startswith("  ") and len(line.split("  ")) > 2}
    assert rows["compiles"] == ["2", "1"]
    assert rows["speedup median"] == ["2.25", "2.25"]
    assert rows["status"] == ["pass", "pass"]
    assert "yes 0.50 s" in out


def test_compile_modes_and_cuda_graph_options_reach_bench(runner: CliRunner,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fake_core(monkeypatch, sample_result())
    result = runner.invoke(app, [
        "bench", "resnet50", "--strategy", "static", "--compile-mode",
        "default,max-autotune-no-cudagraphs,reduce-overhead", "--capture-sizes", "16,8",
        "--rerecord-limit", "3", "--memory-budget", "2GiB", "--sizes", "8,16"], env=ENV)
    assert result.exit_code == 0, result.stderr
    _, cfg = seen[0]
    assert cfg.compile_mode == ["default", "max-autotune-no-cudagraphs", "reduce-overhead"]
    assert (cfg.capture_sizes, cfg.rerecord_limit, cfg.memory_budget) == ([16, 8], 3, "2GiB")


def test_json_to_stdout_moves_tables_to_stderr(runner: CliRunner,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake_core(monkeypatch, sample_result())
    result = runner.invoke(app, ["bench", "resnet50", "--json", "-"], env=ENV)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["command"] == "bench"
    assert "strategies side by side" in result.stderr


def test_what_a_model_prints_leaves_json_alone_on_stdout(runner: CliRunner,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # a user's forward with a debug print() made `--json -` unparseable
    fake_core(monkeypatch, sample_result())
    real = core_bench.run_bench

    def printing(*args: Any, **kwargs: Any) -> BenchResult:
        print("forward: x.shape = (4, 16)")  # the model's own print, mid-run
        return real(*args, **kwargs)

    monkeypatch.setattr(core_bench, "run_bench", printing)
    result = runner.invoke(app, ["bench", "resnet50", "--json", "-"], env=ENV)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["command"] == "bench"
    assert "forward: x.shape = (4, 16)" in result.stderr
    result = runner.invoke(app, ["bench", "resnet50"], env=ENV)  # no document: as printed
    assert "forward: x.shape = (4, 16)" in result.stdout


def test_failures_exit_zero_unless_fail_on_failures(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_core(monkeypatch, sample_result(accuracy="fail_accuracy"))
    result = runner.invoke(app, ["bench", "resnet50"], env=ENV)
    assert result.exit_code == 0
    assert "fail_accuracy" in result.stdout
    result = runner.invoke(app, ["bench", "resnet50", "--fail-on", "failures"], env=ENV)
    assert result.exit_code == 1
    assert "Error: resnet50: failures with --fail-on failures (static: fail_accuracy" in result.stderr


def test_nothing_ran_exits_one(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = sample_result()
    for run in empty.runs:
        run.variations, run.status, run.error = [], "model_fail_to_load", "boom"
    fake_core(monkeypatch, empty)
    result = runner.invoke(app, ["bench", "resnet50", "--json", "out.json"], env=ENV)
    assert result.exit_code == 1
    assert "nothing ran (static: model_fail_to_load" in result.stderr
    assert "static: model_fail_to_load: boom" in result.stdout
    assert json.loads(Path("out.json").read_text())["runs"][0]["status"] == "model_fail_to_load"


def test_interrupted_exits_130(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    partial = sample_result()
    partial.interrupted = True
    fake_core(monkeypatch, partial)
    result = runner.invoke(app, ["bench", "resnet50", "--json", "out.json"], env=ENV)
    assert result.exit_code == 130
    # round 35: `timeout 900 dyncli bench …` (a SIGTERM) read "… before Ctrl-C"
    assert "Warning: interrupted (Ctrl-C or SIGTERM): the results above are what was measured " \
        "before it\n" in result.stderr
    assert json.loads(Path("out.json").read_text())["interrupted"] is True


def test_help_groups_the_options_in_panels(runner: CliRunner) -> None:
    result = runner.invoke(app, ["bench", "--help"], env=ENV)
    assert result.exit_code == 0
    heads = [ln for ln in result.stdout.splitlines() if ln.endswith(":") and not ln.startswith(" ")]
    assert heads == ["Arguments:", "Model and shapes:", "Strategies and timing:", "Your traffic:",
                     "Scale-out: ranks and suites:", "Output:", "Options:"]
    panel = result.stdout.split("Your traffic:")[1].split("Scale-out")[0]
    assert "--shapes" in panel and "--replay" in panel and "--nproc" not in panel


def test_api_errors_name_the_option_and_cli_errors_the_flag(runner: CliRunner) -> None:
    import dyncli.bench
    from dyncli.errors import UsageError

    with pytest.raises(UsageError, match=r"^bench\.repeat must be >= 2"):
        dyncli.bench.run("resnet50", repeat=1)
    with pytest.raises(UsageError, match=r"^bench\.strategy collectives: .*\n?") as err:
        dyncli.bench.run("resnet50", strategy=["collectives"])
    assert err.value.hint == "Add bench.nproc 2 (or more)"
    cli = runner.invoke(app, ["bench", "resnet50", "--repeat", "1"], env=ENV)
    assert cli.exit_code == 2 and cli.stderr.startswith("Error: --repeat must be >= 2")


@pytest.mark.torch
@pytest.mark.parametrize("logs", ["", "bogus"])
def test_a_torch_logs_torch_refuses_is_one_line_not_its_traceback(logs: str) -> None:
    """torch parses TORCH_LOGS as it is imported and raises for a value it refuses, and (torch
    2.11, 2.15) for one set but empty: bench printed torch's traceback."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TORCH_LOGS": logs}
    if subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True,
                      timeout=300).returncode == 0:
        pytest.skip(f"this torch imports with TORCH_LOGS={logs!r}")
    model = Path(__file__).resolve().parents[2] / "examples" / "model.py"
    proc = subprocess.run([sys.executable, "-m", "dyncli", "bench", f"{model}:build", "--device",
                           "cpu", "--variations", "2"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f'Error: torch failed to import with TORCH_LOGS="{logs}": ')
    assert ("set but empty" in proc.stderr) == (logs == "")


def test_pad_in_training_says_why_once_and_exits_1_as_nothing_ran(runner: CliRunner,
                                                                   tmp_path: Path) -> None:
    """Round 26: ``pad: not_applicable: pad: padded rows …`` (its name twice), and the exit
    line said only ``nothing ran (pad: not_applicable)``. Real torch, no compile: pad is
    refused in training before it compiles."""
    (tmp_path / "m.py").write_text((ROOT / "examples" / "model.py").read_text())
    r = runner.invoke(app, ["bench", "m.py:build", "--device", "cpu", "--strategy", "pad",
                            "--mode", "training", "--variations", "2", "--repeat", "2",
                            "--warmup", "1", "--json", "out.json"], env=ENV)
    why = "padded rows would change the loss and batch statistics in training; padding is " \
          "for inference"
    assert f"pad: not_applicable: {why}\n" in r.stdout
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == f"Error: m.py:build: nothing ran (pad: not_applicable: {why})"
    run = json.loads(Path("out.json").read_text())["runs"][0]
    assert run["status"] == "not_applicable" and run["error"] == why


def test_an_emitted_toml_for_eager_measures_the_same_traffic_again(
        runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 26: ``--emit toml`` of an eager recommendation wrote ``strategy = ["automatic"]``
    alone; applied with ``--config``, bench measured other traffic. The file says eager was
    recommended and carries the stream, mode and dtype, and the config loader takes it."""
    from dyncli.bench.core.apply import Plan
    from dyncli.bench.core.cost import Recommendation

    result = sample_result()
    result.recommendation = Recommendation("eager", 1.0, "static", 2.0, 0.01, "cheapest",
                                           apply=Plan("eager").as_dict())
    seen = fake_core(monkeypatch, result)
    args = ["--strategy", "static,dynamic", "--sizes", "1,3,8,8,16", "--requests", "50",
            "--mode", "training", "--dtype", "bfloat16", "--device", "cpu", "--repeat", "3",
            "--hf-config", "num_hidden_layers=1,hidden_act=gelu", "--matmul-precision", "high"]
    r = runner.invoke(app, ["bench", "m.py:build", *args, "--emit", "toml",
                            "--emit-file", "plan.toml"], env=ENV)
    assert r.exit_code == 0, r.output
    text = Path("plan.toml").read_text()
    assert "# recommended: eager (serve the model without torch.compile)" in text
    r = runner.invoke(app, ["bench", "m.py:build", "--config", "plan.toml"], env=ENV)
    assert r.exit_code == 0, r.output
    first, again = seen[0][1], seen[1][1]
    for key in ("strategy", "sizes", "requests", "mode", "dtype", "device", "repeat",
                "hf_config", "matmul_precision"):  # round 35: hf_config was left out
        assert getattr(again, key) == getattr(first, key), key


def test_options_that_do_not_apply_are_said_naming_the_config_file(
        runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # round 26: --resume, --emit-file (and --buckets, --max-buckets: see the runner's rows)
    # from autodyn.toml were dropped without a word on a single-model run
    seen = fake_core(monkeypatch, sample_result())
    (tmp_path / "autodyn.toml").write_text(
        "[bench]\nresume = true\nemit_file = 'plan.py'\ntimeout = 60\n"
        "buckets = 'pow2'\nhf_config = {}\n")  # defaults spelled out: nothing to say
    result = runner.invoke(app, ["bench", "resnet50", "--device", "cpu"], env=ENV)
    assert result.exit_code == 0 and seen
    warned = [ln for ln in result.stderr.splitlines() if ln.startswith("Warning: bench.")]
    assert warned == [
        "Warning: bench.resume = True (from autodyn.toml): for --suite; one model has no earlier "
        "models to keep, so it was not used",
        "Warning: bench.timeout = 60.0 (from autodyn.toml): for --suite (each model) and --nproc "
        "runs (the collective wait); one in-process run has no child to stop, so it was not used",
        "Warning: bench.emit_file = plan.py (from autodyn.toml): for --emit; no plan is written "
        "without it, so it was not used"]
    result = runner.invoke(app, ["bench", "resnet50", "--device", "cpu", "--no-resume",
                                 "--emit-file", "p.py"], env=ENV)
    assert "Warning: --emit-file p.py: for --emit;" in result.stderr
    assert "bench.resume" not in result.stderr  # the flag set it back to its default

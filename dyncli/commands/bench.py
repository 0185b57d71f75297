"""dyncli bench: eager vs inductor on actually varied shapes, strategies side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from dyncli import completion
from dyncli.commands.options import ConfigOpt, JsonOpt, PanelCommand, VerboseOpt, resolve_config
from dyncli.errors import GateError, UsageError

if TYPE_CHECKING:
    from dyncli.config import Resolved

HELP = "Benchmark eager vs compiled on actually varied input shapes."
# --help groups the options by what they are for (typer's rich_help_panel).
MODEL = "Model and shapes"
STRATEGIES = "Strategies and timing"
TRAFFIC = "Your traffic"
SCALE = "Scale-out: ranks and suites"
OUTPUT = "Output"


class Command(PanelCommand):
    """``dyncli bench``: its --help in panels, in this order."""

    panel_order = (MODEL, STRATEGIES, TRAFFIC, SCALE, OUTPUT)
EPILOG = """\b
Examples:
  dyncli bench resnet50
  dyncli bench hf:BertModel --vary batch,seq \\
      --strategy static,automatic,dynamic
  dyncli bench examples/model.py:build --variations 5 --device cpu \\
      --json out.json
  dyncli bench examples/model.py:build --strategy automatic,sources \\
      --dynamic-sources "L['x']:0"
  dyncli bench examples/model.py:build --device cpu --nproc 2 \\
      --rank-shapes skewed --strategy automatic,collectives
  dyncli bench examples/model.py:build --shapes examples/traffic.csv \\
      --device cpu \\
      --strategy static,automatic,pad,dynamic,unbacked,eager-then-compile,pgo
  dyncli bench resnet18 --sizes 16,24,32,48,64,32,16 \\
      --strategy static,automatic \\
      --compile-mode default,reduce-overhead --memory-budget 2GiB
  dyncli bench --suite cpu-small --strategy static,automatic --json a.json
  dyncli bench --suite my-suite.toml --timeout 900 --json a.json --resume
\b
Exit codes: 0 ran; 1 nothing ran, or --fail-on failures and something
failed; 2 unknown model or bad options.
"""


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [p.strip() for p in text.split(",") if p.strip()]


def _sizes(text: str | None) -> list[int] | None:
    return _ints("--sizes", text)


def _ints(flag: str, text: str | None) -> list[int] | None:
    parts = _split(text)
    if parts is None:
        return None
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"{flag}: expected a comma list of integers, got {text!r}") from None


def bench(
    model: Annotated[str | None, typer.Argument(metavar="MODEL", help="Model name, timm:NAME, hf:CLASS or FILE.py:FUNCTION.", autocompletion=completion.complete_model, rich_help_panel=MODEL)] = None,
    list_models: Annotated[bool, typer.Option("--list", help="List the built-in model names and exit.", rich_help_panel=MODEL)] = False,
    strategy: Annotated[str | None, typer.Option("--strategy", metavar="LIST", help="Comma list of static, automatic, mark-dynamic, dynamic, sources, collectives (--nproc >= 2), pad, unbacked, eager-then-compile, pgo. [default: automatic]", autocompletion=completion.strategies, rich_help_panel=STRATEGIES)] = None,
    compile_mode: Annotated[str | None, typer.Option("--compile-mode", metavar="LIST", help="Comma list of torch.compile modes, each run with every strategy: default, reduce-overhead (CUDA graphs), max-autotune-no-cudagraphs, max-autotune. CUDA-graph modes need CUDA. [default: default]", rich_help_panel=STRATEGIES)] = None,
    capture_sizes: Annotated[str | None, typer.Option("--capture-sizes", metavar="LIST", help="With a CUDA-graph mode: capture only these sizes, inputs padded up to them (torch >= 2.8; a dynamic strategy).", show_default=False, rich_help_panel=STRATEGIES)] = None,
    rerecord_limit: Annotated[int | None, typer.Option("--rerecord-limit", metavar="N", help="With a CUDA-graph mode: record at most N sizes per graph, later ones without graphs (torch >= 2.15).", show_default=False, rich_help_panel=STRATEGIES)] = None,
    memory_budget: Annotated[str | None, typer.Option("--memory-budget", metavar="SIZE", help="Most memory CUDA graphs may take in the recommended plan: 2GiB, 512MiB or bytes. [default: no limit]", show_default=False, rich_help_panel=TRAFFIC)] = None,
    dynamic_sources: Annotated[str | None, typer.Option("--dynamic-sources", metavar="LIST", help="Allow-list for the sources strategy, as in TORCH_COMPILE_DYNAMIC_SOURCES: \"L['x']:0,L['n']\".", rich_help_panel=STRATEGIES)] = None,
    variations: Annotated[int | None, typer.Option("--variations", metavar="N", help="Number of shapes to run (base included). [default: 8]", rich_help_panel=MODEL)] = None,
    spread: Annotated[float | None, typer.Option("--spread", metavar="FRACTION", help="Vary sizes within base*(1±spread). [default: 0.2]", rich_help_panel=MODEL)] = None,
    seed: Annotated[int | None, typer.Option("--seed", metavar="N", help="Seed of the shape and input RNG. [default: 0]", rich_help_panel=MODEL)] = None,
    vary: Annotated[str | None, typer.Option("--vary", metavar="DIMS", help="Dims to vary: batch, seq or batch,seq (hf: models). [default: batch]", autocompletion=completion.vary, rich_help_panel=MODEL)] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", metavar="N", help="Base batch size. [default: per model and device]", rich_help_panel=MODEL)] = None,
    batch_dim: Annotated[int | None, typer.Option("--batch-dim", metavar="DIM", help="Input dim that is the batch. [default: every dim equal to the batch size]", rich_help_panel=MODEL)] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", metavar="N", help="Base sequence length of hf: models. [default: per device]", rich_help_panel=MODEL)] = None,
    repeat: Annotated[int | None, typer.Option("--repeat", metavar="N", help="Timed interleaved reps per variation. [default: 10]", rich_help_panel=STRATEGIES)] = None,
    warmup: Annotated[int | None, typer.Option("--warmup", metavar="N", help="Untimed calls per variation. [default: 2]", rich_help_panel=STRATEGIES)] = None,
    mode: Annotated[str | None, typer.Option("--mode", metavar="MODE", help="inference or training. [default: inference]", autocompletion=completion.modes, rich_help_panel=MODEL)] = None,
    device: Annotated[str | None, typer.Option("--device", metavar="DEVICE", help="auto (CUDA if present, else CPU), cpu or cuda. [default: auto]", autocompletion=completion.devices, rich_help_panel=MODEL)] = None,
    dtype: Annotated[str | None, typer.Option("--dtype", metavar="DTYPE", help="float32, bfloat16, float16 or amp. [default: float32]", autocompletion=completion.dtypes, rich_help_panel=MODEL)] = None,
    hf_config: Annotated[str | None, typer.Option("--hf-config", metavar="K=V,...", help="Overrides of the hf: model config, e.g. num_hidden_layers=2.", rich_help_panel=MODEL)] = None,
    matmul_precision: Annotated[str | None, typer.Option("--matmul-precision", metavar="P", help="float32 matmul precision: highest, high (TF32 on CUDA) or medium. [default: torch's own]", show_default=False, rich_help_panel=MODEL)] = None,
    fail_on: Annotated[list[str] | None, typer.Option("--fail-on", metavar="WHAT", help="Exit 1 when it happened: failures (any strategy or variation that did not pass).", autocompletion=completion.bench_fail_on, rich_help_panel=OUTPUT)] = None,
    shapes: Annotated[str | None, typer.Option("--shapes", metavar="FILE", help="Your request stream: CSV with a header (batch, seq, count) or JSONL; costs each strategy on it.", rich_help_panel=TRAFFIC)] = None,
    sizes: Annotated[str | None, typer.Option("--sizes", metavar="LIST", help="An inline request stream of batch sizes, e.g. 1,3,8,8,16 (0 and 1 allowed).", rich_help_panel=TRAFFIC)] = None,
    requests: Annotated[int | None, typer.Option("--requests", metavar="N", help="Cost N requests (the stream is cycled or cut). Default: the stream's length.", rich_help_panel=TRAFFIC)] = None,
    buckets: Annotated[str | None, typer.Option("--buckets", metavar="LIST", help="Bucket sizes of the pad strategy: 8,16,32, pow2, or auto (the set that costs your stream least, measured). [default: pow2]", rich_help_panel=STRATEGIES)] = None,
    max_buckets: Annotated[int | None, typer.Option("--max-buckets", metavar="N", help="With --buckets auto: at most N buckets. [default: no limit]", show_default=False, rich_help_panel=STRATEGIES)] = None,
    replay: Annotated[bool | None, typer.Option("--replay/--no-replay", help="Also run the whole stream for real per strategy: measured vs predicted seconds. [default: no-replay]", show_default=False, rich_help_panel=TRAFFIC)] = None,
    fresh_cache: Annotated[bool | None, typer.Option("--fresh-cache/--warm-cache", help="Empty compile caches of its own per strategy (inductor: FX graph, AOTAutograd, kernels, autotuning; Triton), or the user's as found (hits labelled). [default: fresh]", show_default=False, rich_help_panel=STRATEGIES)] = None,
    csv_path: Annotated[str | None, typer.Option("--csv", metavar="PATH", help="Write one CSV row per strategy and variation ('-' for stdout).", rich_help_panel=OUTPUT)] = None,
    plot_path: Annotated[str | None, typer.Option("--plot", metavar="PATH", help="Write a PNG of latency against batch size.", rich_help_panel=OUTPUT)] = None,
    nproc: Annotated[int | None, typer.Option("--nproc", metavar="N", help="Run on N ranks under torch.distributed's launcher (gloo on CPU, NCCL on CUDA). [default: 1]", rich_help_panel=SCALE)] = None,
    rank_shapes: Annotated[str | None, typer.Option("--rank-shapes", metavar="HOW", help="With --nproc: same, skewed (rank 0 varies) or independent plans per rank. [default: same]", autocompletion=completion.rank_shapes, rich_help_panel=SCALE)] = None,
    suite: Annotated[str | None, typer.Option("--suite", metavar="NAME|FILE", help="Run a built-in suite or a suite TOML file ([[models]] tables), each model in its own process.", rich_help_panel=SCALE)] = None,
    list_suites: Annotated[bool, typer.Option("--list-suites", help="List the built-in suites and exit.", rich_help_panel=SCALE)] = False,
    resume: Annotated[bool | None, typer.Option("--resume/--no-resume", help="With --suite: skip the models already complete in the --json file. [default: no-resume]", show_default=False, rich_help_panel=SCALE)] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", metavar="SECONDS", help="Seconds before a run counts as hung (status timeout): each model with --suite (killed); the collective wait with --nproc (default 300).", rich_help_panel=SCALE)] = None,
    start: Annotated[str | None, typer.Option("--start", metavar="cold|warm", help="How each serving process starts: cold, or warm from torch's caches an earlier process left (measured in two fresh processes per strategy). [default: cold]", show_default=False, rich_help_panel=TRAFFIC)] = None,
    requests_per_start: Annotated[int | None, typer.Option("--requests-per-start", metavar="N", help="Cost a service that restarts every N requests (restarts compile warm). [default: one process]", show_default=False, rich_help_panel=TRAFFIC)] = None,
    emit: Annotated[str | None, typer.Option("--emit", metavar="FORM", help="Write the recommendation as a plan to apply: python (compile_for_traffic(model)), env or toml. Needs a stream. [default: none]", show_default=False, rich_help_panel=OUTPUT)] = None,
    emit_file: Annotated[str | None, typer.Option("--emit-file", metavar="PATH", help="Where --emit writes ('-' for stdout). [default: dyncli_plan.py, .env or .toml]", show_default=False, rich_help_panel=OUTPUT)] = None,
    config: ConfigOpt = None,
    json_path: JsonOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    from dyncli.bench import models

    overrides = models.parse_overrides(hf_config) if hf_config is not None else None
    resolved = resolve_config(
        "bench", config, verbose, strategy=_split(strategy), variations=variations,
        spread=spread, seed=seed, vary=_split(vary), batch_size=batch_size, batch_dim=batch_dim,
        seq_len=seq_len, repeat=repeat, warmup=warmup, mode=mode, device=device, dtype=dtype,
        hf_config=overrides, matmul_precision=matmul_precision, fail_on=fail_on or None, dynamic_sources=_split(dynamic_sources),
        nproc=nproc, rank_shapes=rank_shapes, timeout=timeout, shapes=shapes,
        sizes=_sizes(sizes), requests=requests, buckets=buckets, replay=replay,
        fresh_cache=fresh_cache, suite=suite, resume=resume, max_buckets=max_buckets, emit=emit,
        start=start, requests_per_start=requests_per_start,
        emit_file=emit_file, compile_mode=_split(compile_mode),
        capture_sizes=_ints("--capture-sizes", capture_sizes), rerecord_limit=rerecord_limit,
        memory_budget=memory_budget)
    said: list[str] = []
    if not (list_models or list_suites):
        from dyncli.bench.core import unused
        from dyncli.bench.core.settings import check, flag_name

        # every setting's name for a message, worked out here: the core's check does not
        # call back into the command (one way: tests/integration/test_bench_one_way.py)
        names = {key: resolved.named(key, flag_name(key)) for key in resolved.origins}
        check(resolved.config, names.__getitem__)
        said = unused.notes(resolved.config, unused.COMMAND, origins=resolved.origins)
    if list_suites or resolved.config.suite:
        _suite(model, list_suites, resolved, json_path, csv_path, plot_path, said)
        return
    from dyncli.bench import render, render_files
    from dyncli.output import Output, check_outputs, write_text

    cfg = resolved.config
    plan_path = render_files.plan_path(cfg.emit, cfg.emit_file)
    out = Output.for_targets(json_path, csv_path, plot_path, plan_path)
    for text in said:
        out.warn(text)
    if list_models:
        listing = models.listing()
        render.print_listing(listing.torchvision, listing.timm_count, listing.hf_examples)
        return
    if not model:
        raise UsageError("Give a model to benchmark", hint="See the names with: dyncli bench --list")
    from dyncli.bench.api import run

    check_outputs({"--json": json_path, "--csv": csv_path, "--plot": plot_path,
                   "--emit-file": plan_path})
    with render.progress_hooks(model=model) as hooks:
        hooks.origins, hooks.said = resolved.origins, tuple(said)
        hooks.run_done = lambda partial: render_files.write_files(partial, json_path, csv_path, plot_path)
        with out.user_code():
            result = run(model, config=resolved.config, hooks=hooks)
    render.print_result(result, out)
    if cfg.emit and plan_path:
        render_files.write_plan(result, cfg.emit, plan_path, out)
    if json_path == "-":
        out.result(result.to_dict(), "-")
    elif csv_path == "-":
        write_text("-", render_files.to_csv(result))
    elif plot_path == "-" and any(v.timed for r in result.runs for v in r.variations):
        render_files.write_plot(result, "-")
    if result.interrupted:
        raise typer.Exit(130)
    if not result.ran:
        from dyncli.logparse.safe import clip

        raise GateError(f"{model}: nothing ran (" + "; ".join(
            f"{r.label}: {r.status}" + (f": {clip(r.error, 160)}" if r.error else "")
            for r in result.runs) + ")")
    if result.tripped:
        gate = resolved.given_as("fail_on", "--fail-on failures")
        raise GateError(f"{model}: failures with {gate} (" + ", ".join(
            f"{r.label}: {r.status}" for r in result.runs if r.status.failed) + ")")


def _suite(model: str | None, list_suites: bool, resolved: Resolved, json_path: str | None,
           csv_path: str | None, plot_path: str | None, said: list[str]) -> None:
    from dyncli.bench import suite_render
    from dyncli.bench.core import suites

    if list_suites:
        suite_render.print_listing(suites.listing())
        return
    if model:
        raise UsageError("Give a model or --suite, not both")
    if plot_path:
        raise UsageError("--plot draws one model; with --suite compare runs with: dyncli compare")
    from dyncli.bench.suite import SuiteHooks, run_resolved
    from dyncli.output import Output

    out = Output.for_targets(json_path)  # a suite's CSV goes to a file only
    for text in said:
        out.warn(text)
    hooks = SuiteHooks(info=out.info, model_done=lambda partial: suite_render.write_files(
        partial, json_path, csv_path), said=tuple(said))
    result = run_resolved(resolved, json_path, hooks)
    suite_render.write_files(result, json_path, csv_path)  # also when every model was resumed
    suite_render.print_result(result, out)
    if json_path == "-":
        out.result(result.to_dict(), "-")
    if result.interrupted:
        raise typer.Exit(130)
    if not result.ran:
        raise GateError(f"suite {result.suite.name}: no model ran")
    if "failures" in resolved.config.fail_on and result.failed:
        raise GateError(f"suite {result.suite.name}: failures with "
                        f"{resolved.given_as('fail_on', '--fail-on failures')} (" + ", ".join(
            f"{o.name}: {o.status}" for o in result.outcomes if o.status.failed) + ")")

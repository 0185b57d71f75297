"""What the CUDA-graph findings ask the user to do: fewer sizes, fewer skips, the right knobs.

Each knob is named with the first release that has it (read in torch's
``_inductor/config.py``, class ``triton``):

- ``cudagraph_skip_dynamic_graphs`` (2.4+): graphs with dynamic shapes run without CUDA graphs;
- ``cudagraph_capture_sizes`` (2.8+): only these symint keys are captured, others run without;
- ``cudagraph_dynamic_shape_rerecord_limit`` (2.15+): after N sizes, new sizes run eager;
- ``cudagraph_unexpected_rerecord_limit`` (2.5+, 128): re-records of one size (inputs that
  moved), after which that function runs without CUDA graphs.

The fixes are ``torch.compile`` options, not config assignments: torch's config overrides are
thread-local (DESIGN.md), and ``options={"triton.cudagraphs": True, …}`` is what
``mode="reduce-overhead"`` sets (``torch._inductor.list_mode_options``), so the two combine.
"""

from __future__ import annotations

from collections.abc import Iterable

from dyncli.diagnose.cudagraph_report import CudagraphReport, FrameRecordings, Recording
from dyncli.diagnose.findings import Advice, AdviceKind, place, sites_of
from dyncli.diagnose.model import Diagnosis

CAPTURE = "triton.cudagraph_capture_sizes"  # torch >= 2.8
LIMIT = "triton.cudagraph_dynamic_shape_rerecord_limit"  # torch >= 2.15
_EVIDENCE = 8
_SKIP_FIX = {
    "mutated-inputs": "do not mutate the compiled function's inputs in place (return the new "
                      "value, or update a buffer the module owns)",
    "device": "keep every tensor of the graph on the GPU (one CPU tensor keeps the graph out "
              "of CUDA graphs; torch >= 2.9 partitions around CPU ops by default)",
    "rerecord-limit": "keep static inputs (parameters, buffers) at one address: copy_ into them "
                      "instead of assigning new tensors",
    # torch 2.0's compile_fx: an input with complex memory overlap (elements sharing memory)
    "striding": "pass inputs whose elements do not share memory (an .expand()ed or as_strided "
                "view does): .contiguous() them before the compiled call",
    # compile_fx (2.3-2.15) skips the whole graph for one such op only where graph partitioning
    # is off (config.graph_partition: 2.9 on, on by default; pytorch#168185: index_put_ with
    # accumulate under torch.use_deterministic_algorithms(True) falls back to aten)
    "incompatible-op": "this op cannot run inside a CUDA graph, and without graph partitioning "
                       "it keeps the whole graph out: torch >= 2.9 partitions the graph around "
                       "it and records the rest (torch._inductor.config.graph_partition, on by "
                       "default; TORCHINDUCTOR_GRAPH_PARTITION=1), else move the op out of the "
                       "compiled function",
    "skip-dynamic-graphs": "the program set triton.cudagraph_skip_dynamic_graphs=True, which "
                           "runs graphs with dynamic shapes without CUDA graphs: to record "
                           "them, pad the inputs to a few sizes and leave the option off",
    "managed-input-rerecord": "keep inputs that come from an earlier CUDA graph's outputs at one "
                              "address (clone them before the call)",
}


# where CUDA graphs come from: a user of max-autotune often does not know (ComfyUI-
# WanVideoWrapper#1584, senpai#1597): torch._inductor.list_mode_options
MODES = ('mode="reduce-overhead" and mode="max-autotune" record CUDA graphs; '
         'mode="max-autotune-no-cudagraphs" or the default mode do not')
# how to run a compiled graph without them, where an error came as the graphs ran
# (advice._crash_fix); torch.compile takes a mode or options=, never both (torch/__init__.py)
WITHOUT_CUDAGRAPHS = (f"compile without CUDA graphs ({MODES}; where torch.compile is given "
                      'options= rather than a mode: "triton.cudagraphs": False)')
# The CUDA-graph trees' errors (cudagraph_trees.py, 2.3-2.15) -> what happened, and what the
# threads that hit them did
_ERRORS: dict[str, tuple[str, str]] = {
    "overwritten": (
        "a tensor a CUDA graph returned was read after a later run of the graph wrote over its "
        "memory (CUDA graphs reuse their output buffers each run)",
        "clone that output before the next call of the compiled function (out = out.clone()), "
        "and do not keep graph outputs across calls (an attribute set in forward, a cache); "
        "gpt-fast#232 and torchtune#1371 cloned it, transformers#30775 stopped assigning it in "
        "forward. cudagraph_mark_step_begin() marks a new step, it does not keep old outputs "
        "alive; torch 2.14 on can clone them itself: options={\"triton."
        "cudagraph_trees_generation_cloning\": \"user_visible\"}"),
    "overwritten-grad": (
        "a .grad tensor allocated while a CUDA graph was recorded was overwritten by a later "
        "run (gradient accumulation under reduce-overhead)",
        "allocate the .grad buffers outside the recording (one eager warm-up step, or zeroed "
        ".grad tensors made up front), or set .grad to None before each backward if nothing "
        "accumulates (torch's own advice)"),
    "deallocated-while-recording": (
        "an input tensor was freed while torch recorded a CUDA graph and not when it replayed "
        "it: non-reentrant activation checkpointing or backward(retain_graph=True) around a "
        "module compiled with CUDA graphs (pytorch#154306)",
        "compile that module without CUDA graphs (mode=\"max-autotune-no-cudagraphs\" or the "
        "default mode), or use reentrant checkpointing there (SimpleTuner#3155 and senpai#1597 "
        "turned CUDA graphs off for it)"),
    "untracked-pool-tensors": (
        "tensors the CUDA graph allocated outlive it without being its outputs: a write "
        "through .data (or in place) to a parameter or buffer in the compiled forward "
        "(pytorch#183313: self.weight.data *= mask)",
        "compute the value instead of writing it into the parameter (w = self.weight * "
        "self.mask), or compile that module without CUDA graphs"),
    "pending-backward": (
        "the graph's outputs from the previous call still waited for their backward when the "
        "next call came, so CUDA graphs ran on their slow path (a warning: the run goes on, "
        "slower)",
        "call backward (or detach the outputs) before the next forward, run inference under "
        "torch.no_grad(), or mark each step with torch.compiler.cudagraph_mark_step_begin(); "
        "under torch.func transforms no_grad does not apply (pytorch#176846)"),
    # check_static_inputs_are_stable (2.3 on): a parameter or buffer is a static input, its
    # address recorded into the graph; the node raises where it may not re-record for a new one
    "static-input-moved": (
        "a parameter or buffer of the compiled module (a static input: the recorded graph "
        "reads it at a fixed address) is a different tensor than when the graph was recorded, "
        "an attribute assigned a new tensor after the first calls (pytorch#132043's test: "
        "foo.static_tensor = torch.ones(…), linear.bias = nn.Parameter(…)); torch's stack is "
        "where the graph reads it",
        "update the tensor in place instead of assigning a new one (with torch.no_grad(): "
        "module.bias.copy_(new)), so its address stays; torch 2.5 and later re-record the "
        "graph for a new address instead of raising (inline_inbuilt_nn_modules, on by default "
        "there), at the cost of a recording each time"),
    # raised by the allocator's checkPoolLiveAllocations, which only the native caching
    # allocator has (c10/cuda/CUDACachingAllocator.h); the trees call it at a warm-up's
    # check_memory_pool (triton.slow_path_cudagraph_asserts, on by default)
    "allocator-no-pool-check": (
        "as the compiled graph ran (not while compiling), the CUDA-graph trees "
        "(mode=\"reduce-overhead\" or \"max-autotune\") asked the CUDA allocator to check "
        "their memory pool, which only PyTorch's native caching allocator can, and the backend "
        "in use (its name begins the message: cudaMallocAsync, or a pluggable allocator) "
        "cannot (pytorch#158641 asks for it)",
        "use the native caching allocator in that process: take backend:cudaMallocAsync out of "
        "PYTORCH_CUDA_ALLOC_CONF (ComfyUI sets it unless started with --disable-cuda-malloc: "
        "ComfyUI#6831, ComfyUI-WanVideoWrapper#1584) and install no pluggable allocator "
        "(torch.cuda.memory.change_current_allocator); or compile without CUDA graphs"),
}


def _errors(report: CudagraphReport) -> list[Advice]:
    """The CUDA-graph trees' errors the program hit while its graphs ran: a crash (or the
    slow path), never "Nothing to fix" (paste hunt 10: six threads of the overwritten-output
    error, every one refused before round 19). One the log shows raised stopped the program:
    it ranks first, as a compile's crash does (``ran``); one it shows warned, or says without
    its exception, keeps its place."""
    out = []
    for x in report.errors:
        what, fix = _ERRORS.get(x.kind, ("an error of the CUDA-graph trees", ""))
        where = f" at {place(x.user)} in {x.user.function}" if x.user else ""
        times = f" ({x.count}x)" if x.count > 1 else ""
        stopped = "the program stopped: " if x.raised else ""
        out.append(Advice(
            kind=AdviceKind.CUDAGRAPH_ERROR, rank=x.rank, key=f"error:{x.kind}:{x.user}",
            sites=sites_of(x.user), fix=f"{fix} ({MODES})" if fix else MODES, ran=x.raised,
            message=f"{stopped}CUDA graphs: {what}{where}{times}.",
            evidence=(f"line {x.line}: {x.message[:200]}",)))
    return out


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e3:.2f} ms"


def _size_keys(keys: Iterable[str | None]) -> list[int]:
    """The recording keys that are plain sizes, in order (ASCII digits: ``str.isdigit`` takes
    "²" too, which ``int`` refuses)."""
    return sorted(int(k) for k in keys if k and k.isascii() and k.isdigit() and len(k) < 10)


def _ints(f: FrameRecordings, rows: tuple[Recording, ...]) -> list[int]:
    keys = {r.key for r in rows if r.rank == f.rank and r.compile_id in f.compile_ids}
    return _size_keys(keys)


def _sizes_fix(sizes: list[int]) -> str:
    limit = f'"{LIMIT}": N (torch >= 2.15: sizes past the N-th run eager)'
    # the power of two at or above each size (bench's ``--buckets pow2``; bench is not
    # imported here: diagnose runs without numpy)
    caps = tuple(sorted({1 << max(0, s - 1).bit_length() for s in sizes}))
    few = len(sizes) >= 2 and len(caps) < len(set(sizes))
    options = f'options={{"triton.cudagraphs": True, "{CAPTURE}": {caps if few else "(…)"}}}'
    return ((f"pad the inputs to the sizes {caps} (the power of two at or above each) and "
             f"capture only those: torch.compile(..., {options})" if few else
             "pad the inputs to a few sizes (buckets) so that fewer graphs are recorded, and "
             f"capture only those: {options}")
            + f" (torch >= 2.8; other sizes run without CUDA graphs); or cap the recordings with {limit}")


def _sizes(report: CudagraphReport) -> list[Advice]:
    out = []
    for f in report.frames:
        rows = tuple(r for r in report.recordings
                     if r.rank == f.rank and r.compile_id in f.compile_ids)
        known = f.distinct_sizes
        if known < 2 and not (known == 0 and f.recordings > 1):
            continue
        what = (f"{known} sizes ({', '.join(size for size, _, _ in f.sizes)})" if known
                else "sizes this trace does not name (TORCH_LOGS=cudagraphs names them)")
        cost = f" in {_ms(f.seconds)} of recording" if f.seconds is not None else ""
        hits = [x for x in report.limit_hits if x.rank == f.rank and x.compile_id in f.compile_ids]
        limit = (f"; torch's {LIMIT.split('.')[1]}={hits[0].limit} stopped it: later sizes "
                 "ran eager" if hits else "")
        out.append(Advice(
            kind=AdviceKind.CUDAGRAPH_SIZES, rank=f.rank,
            fix=_sizes_fix(_ints(f, report.recordings)), function=f.function,
            key=f"sizes:{f.frame_id}", recordings=f.recordings, record_s=f.seconds,
            message=(f"{f.function or 'frame ' + f.frame_id}: {f.recordings} CUDA graph(s) "
                     f"recorded for {what}{cost}{limit}. Under reduce-overhead each new size "
                     "pays a warm-up run and a recording, and its graph keeps memory in the "
                     "pool."),
            # a joined row's line is the log's, beside a trace's lines elsewhere: say so
            evidence=tuple(f"{'log ' if r.source == 'log+trace' else ''}line {r.line}: "
                           f"[{r.compile_id}] recorded {r.graph or 'a graph'} "
                           f"for {r.size}" + (f" in {_ms(r.seconds)}" if r.seconds is not None else "")
                           for r in rows[:_EVIDENCE])))
    return out


def _trees(report: CudagraphReport) -> list[Advice]:
    """A log of the tree lines only (INFO, or pasted): the sizes met are what it proves."""
    keys = [k for k in report.tree_keys if k]
    if report.recordings or len(keys) < 2:
        return []
    ints = _size_keys(keys)
    return [Advice(
        kind=AdviceKind.CUDAGRAPH_SIZES, fix=_sizes_fix(ints), key="sizes:trees",
        message=(f"CUDA-graph trees met {len(keys)} sizes (symint keys {', '.join(keys)}): "
                 "under reduce-overhead each new size is warmed up and, on its next call, "
                 "recorded as a graph of its own that keeps memory in the pool."))]


def _warned(report: CudagraphReport, found: list[Advice]) -> list[Advice]:
    """torch's warning of many sizes (``We have observed N distinct sizes``) where the log
    holds no recording or tree line that a sizes finding came from (pytorch#188150: a
    training loop with per-batch padding, reduce-overhead, 9 sizes and rising step time)."""
    n = report.distinct_sizes_warned
    if n < 2 or any(a.kind is AdviceKind.CUDAGRAPH_SIZES for a in found):
        return []
    return [Advice(
        kind=AdviceKind.CUDAGRAPH_SIZES, key="sizes:warned", recordings=n,
        fix=(_sizes_fix([]) + '; or run graphs with dynamic shapes without CUDA graphs: '
             'options={"triton.cudagraph_skip_dynamic_graphs": True} (torch\'s own option b)'),
        message=(f"torch warned that CUDA graphs were recorded for {n} distinct sizes: under "
                 "reduce-overhead each new size pays a warm-up run and a recording, and its "
                 "graph keeps memory in the pool."))]


def _skips(report: CudagraphReport) -> list[Advice]:
    out = []
    for x in report.skips:
        # (its first line without torch's "Found from :", whose stack is the place below)
        first = x.reason.split("\n", 1)[0].rstrip(" :.").removesuffix(". Found from")
        where = f" ({place(x.user)})" if x.user else ""
        out.append(Advice(
            kind=AdviceKind.CUDAGRAPH_SKIP, rank=x.rank, fix=_SKIP_FIX.get(x.kind, ""),
            key=f"skip:{x.kind}:{x.compile_id}", sites=sites_of(x.user),
            message=f"{'[' + x.compile_id + '] ' if x.compile_id else ''}ran without CUDA "
                    f"graphs: {first}{where}.",
            evidence=(f"line {x.line}: {first}",) if x.line else ()))
    return out


def cudagraph_advice(diag: Diagnosis) -> tuple[Advice, ...]:
    """Findings of ``diag.cudagraphs``: errors of the graphs as they ran, sizes that each
    recorded a graph, and skips."""
    report = diag.cudagraphs
    if report is None:
        return ()
    found = _sizes(report) + _trees(report)
    return tuple(_errors(report) + found + _warned(report, found) + _skips(report))

"""The kinds of records of the TORCH_LOGS text format, by the first word of their message.

``KINDS`` maps that word to the record's handler (None: known, nothing the diagnosis needs)
and whether its continuation lines are collected; ``dyncli.logparse.textlog`` dispatches
through it. One table: a kind torch adds is one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import textautograd as autograd
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse import textdde as dde
from dyncli.logparse import textmetrics as metrics
from dyncli.logparse import textmsg as msg
from dyncli.logparse import textold as old
from dyncli.logparse.textframes import loop_skip, wont_convert
from dyncli.logparse.textrecompiles import recompile_limit, recompiling
from dyncli.logparse.textviolations import constraint_violations

Handler = Callable[[list[str], dict[str, Any]], list[ev.Event]]
MAX_RECORD_LINES = 2000  # lines kept of one multi-line record
# How a record's lines are handled (ints compare fast in the hot loop).
# FLAT: torch 2.1–2.3's guards, one guard per line and no tree (each line is read).
SILENT, UNKNOWN, TREE, FIRST, COLLECT, FLAT = range(6)

# first word of a record -> (handler or None = known but nothing to extract, collect lines?)
KINDS: dict[bytes, tuple[Handler | None, bool]] = {
    b"create_symbol": (msg.create_symbol, False),
    b"create_unbacked_symint": (msg.create_unbacked, False),
    b"create_unbacked_symfloat": (msg.create_unbacked, False),
    b"create_unbacked_symbool": (msg.create_unbacked, False),
    b"eval": (msg.guard_added, False),
    b"evaluate_expr": (msg.guard_added, False),  # eval's word in 2.1's nightlies to Apr 14 2023
    b"runtime_assert": (msg.guard_added, False),
    b"set_replacement": (msg.set_replacement, False),
    # print_specializations' warning; its nightly form has the stack on the lines below
    b"Specializing": (msg.specializing, True),
    b"_update_var_to_range": (msg.var_to_range, False),
    b"marking": (msg.marking, False),
    b"Recompiling": (recompiling, True),
    b"('Recompiling": (old.old_recompiling, False),  # torch 2.0-2.2's tuple, one line
    b"Graph": (old.graph_break, True),
    b"torch._dynamo": (recompile_limit, True),
    b"Error": (constraint_violations, True),
    b"could": (msg.data_dependent, False),
    b"Data": (dde.allocated, True),  # "Data dependent variable 'u0' allocated at:" + its stack
    b"Step": (msg.step, False),
    b"torchdynamo": (old.torchdynamo, True),  # torchdynamo's limit warnings, before 2.0
    b"Created": (cg.created, False),  # the cudagraphs artifact's graph partitions (2.9+)
    b"track_symint": (msg.track_symint, False),  # read only where mark_dynamic's demand shows
    b"skipping:": (msg.mode_skip, False),  # read only where a dispatch mode caused it
    b"WON'T": (wont_convert, True),  # a frame dynamo gave up on: it runs eagerly
    # a frame dynamo skipped for a graph break in a loop (2.0-2.10; read only there)
    b"Skipping": (loop_skip, True),
    # the backend's fake tensor exception, and the graph break torch added for it (2.3's;
    # only its own words start one: is_start)
    b"Backend": (breaks.fake_backend_break, True),
    # a higher-order call's body dynamo could not trace (an autograd.Function): a graph break
    b"speculate_subgraph:": (breaks.speculated, False),
    # "automatic dynamic L['x'] marked dynamic": a dim marked up front (read only there)
    b"automatic": (msg.dynamic_sources, False),
    # "TorchDynamo compilation metrics:", the run's compile seconds at exit (read only there)
    b"TorchDynamo": (metrics.compile_metrics, True),
    # compiled autograd's cache misses, each a capture of the backward graph (textautograd;
    # only "Cache miss due to …" starts one: is_start)
    b"Cache": (autograd.cache_miss, False),
    # known, nothing the diagnosis needs (recognized, not reported as unknown)
    **{word: (None, False) for word in (
        b"create_env", b"produce_guards", b"track_symfloat",
        b"lru_cache_stats", b"Guard", b"Python", b"compute_unbacked_bindings",
        b"constrain_symbol_range", b"Could", b"Ignored", b"symbol_guard_limit_before_specialize",
        b"add_backed_var_to_val", b"set_real_tensor_prop_unbacked_vals",
        # +dynamo's inlining of a call, +dynamic's lifting of a symbol (paste hunt 5)
        b"INLINING", b"_lift_symbols_in_symint",
        b"runtime_asserts_frozen", b"SPECIALIZATION", b"Stack",
        b"TRACE", b"Restarting", b"create_unspecified_symbol",
        b"_update_version_counter", b"__guards",
        # dynamo's own progress under TORCH_LOGS=+dynamo (torch 2.11 and 2.15 read; 2.1's
        # restore_graphstate): what it traced and compiled, nothing about sizes that the
        # records above do not say
        b"ChromiumEventLogger", b"wrap_to_fake", b"create_graph_input", b"COMPILING",
        b"TRACED", b"put_code_state:", b"get_code_state", b"run_gc_after_compile:",
        b"restore_graphstate:", b"break_graph_if_unsupported",
        b"LazyTraceHandler:",  # TORCH_TRACE's handler saying it is off (torch 2.2-2.4)
        # "AOTAutograd cache miss for key …" (its cache's own logger, pytorch#141790)
        b"AOTAutograd",
        # compiled autograd's "DCE removed 13 nodes" (compiled_autograd_verbose)
        b"DCE",
        # torch._dynamo.reset() and reset_code_caches() (INFO in __init__.py since late 2024,
        # pytorch#139200's TODO beside it; 2.15's words): compile ids start over at 0/0 after a
        # reset, which textlog reads as the next generation from the ids themselves (a paste
        # may lack the line, and it says nothing else)
        b"torch._dynamo.reset", b"torch._dynamo.reset_code_caches",
    )},
}
TREE_WORD = b""  # the guards tree starts with an empty line or TREE_GUARD_MANAGER:
# (torch 2.15's words; 2.11's: "… due to dynamic source allowlist pattern: …", "… via source
# whitelist"; and builder.py's "automatic dynamic L['x'] marked dynamic" for a dim marked up
# front, by mark_dynamic or such an entry: vllm#13284)
DYN_SOURCES = (b" marked dynamic due to dynamic-sources entry", b" marked dynamic via dynamic-sources",
               b" marked dynamic due to dynamic source allowlist", b" marked dynamic via source whitelist",
               b"automatic dynamic ")
# Known records whose first word varies ("1 Warning only constraints violated").
KNOWN_TEXT = (b" Warning only constraints violated", b" dim ", b" marked dynamic via dynamic-values",
               b"No CUDA runtime is found",
               # dynamo's and inductor's DEBUG lines whose first word is a common one
               # ("return", "empty", "Using", "Not"): known by their phrase, not their word
               b" triggered compile", b"empty checkpoint", b"Using FallbackKernel",
               # dynamo's summary of the frames a call traced (+dynamo, pytorch#137297)
               b", torchdynamo attempted to trace the following frames:",
               b"_remote_module_non_scriptable.py",  # torch.distributed's INFO "Writing …"
               # (inductor's "Not enough SMs to use max_autotune_gemm mode": a note, textnotes)
               b"reduction over non-contiguous dims",
               b"incorrect arg count", b"a decomposition exists, we should switch",
               # the AOTAutograd cache's INFO beside its "AOTAutograd cache miss/hit …"
               # (autograd_cache.py, 2.5-2.15: an entry saved, or not cached and why):
               # nothing about sizes or compiles (pytorch#132294)
               b"Writing AOTAutograd cache entry to ", b"Bypassing autograd cache due to: ")
# Artifacts that dump code or graphs (torch/_logging/_registrations.py, 2.15): their lines are
# source, bytecode or graph text, never a record the diagnosis reads; a line of one whose
# record's first line a paste cut ("[__trace_source]             return {'out': out}",
# pytorch#164924) is known by its tag.
DUMPS = frozenset({b"bytecode", b"graph", b"graph_code", b"graph_code_verbose", b"graph_sizes",
                   b"trace_source", b"trace_call", b"trace_bytecode", b"aot_graphs",
                   b"aot_joint_graph", b"pre_grad_graphs", b"post_grad_graphs",
                   b"ir_pre_fusion", b"ir_post_fusion", b"output_code", b"kernel_code",
                   b"ddp_graphs"})


def artifact(prefix: bytes) -> bytes:
    """The artifact tag a glog prefix ends with (``… [0/0] [__trace_source] ``), or b""."""
    end = prefix.rstrip()
    if not end.endswith(b"]"):
        return b""
    i = end.rfind(b"[__")
    return end[i + 3:-1] if i >= 0 else b""


# the kind of an open record that is a TORCH_TRACE envelope amid text (its payload's lines, a
# tab before each, follow it)
TRACE_KIND = b"{"
# torch's own warnings that say nothing about shapes, with or without a glog prefix: recognized
# (so that a log of a CPU machine with a CUDA toolkit installed is not "unrecognized").
TORCH_NOISE = (b"No CUDA runtime is found, using CUDA_HOME",)
# torch's own lines that head a message whose items the parser reads (ConstraintViolationError)
# (and export's: DimConstraints' forced specializations, non_strict_utils' Dim-hint conflicts,
# raised as UserError and ValueError: read as the Dims' findings, never as a compiler crash)
TORCH_HEADS = (b"Constraints violated (", b"Specializations unexpectedly required (",
               b"Found the following conflicts between user-specified ranges and inferred ranges")


def is_start(word: bytes, message: bytes) -> bool:
    """Whether a line whose first word is ``word`` begins a record (else: a continuation).

    A line repeating the previous prefix can begin a new record: two one-line records logged
    from the same call site in the same millisecond carry identical prefixes.
    """
    # torch >= 2.15 prints "Stack variable source attribution:" inside a graph-break message
    return word in KINDS and (word != b"Graph" or message.startswith(b"Graph break")) and (
        word != b"Stack" or not message.startswith(b"Stack variable source")) and (
        word != b"Cache" or message.startswith(autograd.HEAD_B)) and (
        word != b"Backend" or message.startswith(_FAKE_BACKEND_B))


_FAKE_BACKEND_B = breaks.FAKE_BACKEND.encode()
# Records logged once per compile attempt, at its start (see TextLogParser._compile_seen).
MARKERS = frozenset({b"create_env", b"Recompiling", b"Step"})
# Kinds logged for many lines of which only those holding a mark say something: read those, the
# rest are known and silent (a line per size, per guard, per skipped frame).
READ_WHERE: dict[bytes, bytes] = {
    b"eval": b"[guard added]",  # not [statically known], [trivial] (the prefix holds no "]")
    b"evaluate_expr": b"[guard added]",
    b"runtime_assert": b"[guard added]",
    b"track_symint": b"warn_only=False",  # where mark_dynamic demanded the size
    b"skipping:": b"dispatch mode",  # a frame skipped under a TorchDispatchMode
    b"Skipping": b"graph break in a for/while loop",  # not "Skipping guard …" and the like
    b"automatic": b" marked dynamic",
    b"TorchDynamo": b"TorchDynamo compilation metrics:",  # not "… attempted to trace …"
    b"Could": b"data-dependent",  # "Could not guard on data-dependent expression": textdde
}
SILENT_WORDS = frozenset(k for k, (h, _) in KINDS.items() if h is None and k not in READ_WHERE)

"""Benchmark: every pattern that runs on untrusted text, timed on hostile lines of 1 KB … 1 MB.

A line of a torch log or trace is untrusted: real guard and graph lines of big models run to
hundreds of KB, and a damaged or hostile file can hold anything. A backtracking regex that is
quadratic (or worse) in the line length turns such a line into a hang (issue 13 measured 55 s
on a 36 KB ``fail_reason``). This script times:

- every compiled ``re.Pattern`` of the parsers (``dyncli.logparse.*``,
  ``dyncli.suggest.pgo_trace``), found by introspection so that none is missed, with
  ``search`` on generic hostile lines (runs of blanks, brackets, separators, digits);
- every parsing function that replaced a backtracking pattern, on lines built against it.

For each, the time at 1 KB, 10 KB, 100 KB and 1 MB (best of 3) and the growth from 100 KB to
1 MB: ~10x is linear, ~100x quadratic (ratios of sub-millisecond times are noisy: caches,
timer resolution). A case that takes more than ``--budget`` seconds stops growing (reported
as superlinear). Exit status 1 when a case is superlinear or its 1 MB line takes more than
``--max-seconds``.

Usage (from the repo root)::

    python benchmarks/regex_linearity.py [--max-kb 1024] [--json out.json]

Numbers go into docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dyncli.diagnose import advice, analyzer, unbacked  # noqa: E402
from dyncli.logparse import (  # noqa: E402
    events,
    glog,
    textautograd,
    textbreaks,
    textbuiltins,
    textcrash,
    textdrawn,
    textforeign,
    textforeign_messages,
    textforeign_readers,
    textframes,
    textguards,
    textmsg,
    textnotes,
    textold,
    textpaste,
    textprofiler,
    textrecompiles,
    textstack,
    textversion,
    textviolations,
    torchtree,
    trace_events,
    trace_lines,
    trace_map,
)
from dyncli.suggest import pgo_trace  # noqa: E402

# (textpaste, textforeign and its readers and messages, textcrash, textdrawn, textprofiler,
# textold, torchtree: a pasted log's lines; textautograd: compiled autograd's cache misses;
# unbacked and advice: a graph break's reason and explanation, an exception's text, as read
# from the input; analyzer: FailOnRecompileLimitHit's line, the limit it names)
MODULES = (glog, events, textmsg, textstack, textrecompiles, textbreaks, textbuiltins,
           textviolations, textframes, textguards, trace_events, trace_map, trace_lines,
           pgo_trace, textpaste, textforeign, textforeign_messages, textforeign_readers,
           textcrash, textdrawn, textprofiler, torchtree, unbacked, advice, textold,
           textautograd, analyzer, textversion, textnotes)

# Generic hostile fragments: each is repeated to the line length.
GENERIC = ["a", " ", "(", " (", "[a, ", "a:1 ", "# ", ":", "a.size() ", ", ", "1", "_1", "\t"]


def _fit(head: str, fragment: str, size: int, tail: str = "") -> str:
    return head + fragment * max(1, (size - len(head) - len(tail)) // len(fragment)) + tail


# Functions that replaced backtracking patterns, each with lines built against it.
_COMMON: dict[str, Any] = {"line": 1}
TARGETED: list[tuple[str, Callable[[str], object], Callable[[int], str]]] = [
    ("textmsg.create_symbol (range)", lambda t: _safe(textmsg.create_symbol, [t], _COMMON),
     lambda n: _fit("create_symbol s0 = 1 for ", "a [1", n)),
    ("textmsg.create_symbol (sloc)", lambda t: _safe(textmsg.create_symbol, [t], _COMMON),
     lambda n: _fit("create_symbol s0 = 1 for x [2, 4] ", "(a:1 in ", n)),
    ("textmsg.parse_sloc", textmsg.parse_sloc, lambda n: _fit("x  # ", "(:1 in ", n, ")")),
    ("textmsg.marking", lambda t: _safe(textmsg.marking, [t], _COMMON),
     lambda n: _fit("marking ", " as dynamic (from x", n)),
    ("textmsg.guard_added", lambda t: _safe(textmsg.guard_added, [t], _COMMON),
     lambda n: _fit("eval Eq(s0, 1) [guard added] x  # ", "(:1 in ", n, "a")),
    ("textguards.tensor_check", textguards.tensor_check,
     lambda n: _fit("TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(", "a, b, DispatchKeySet(", n)),
    ("textguards.tree_line (TENSOR_MATCH)", lambda t: _safe(textguards.tree_line, t, _COMMON),
     lambda n: _fit("TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, "
                    "device=None, requires_grad=False, size=[2], stride=[1])  # ", "# a:1 in f ", n)),
    ("textguards.tree_line (LAMBDA_GUARD)", lambda t: _safe(textguards.tree_line, t, _COMMON),
     lambda n: _fit("LAMBDA_GUARD: L['x'].size()[0] == 2", " ", n, "#")),
    ("textbreaks.graph_break", lambda t: _safe(textbreaks.graph_break, [t], _COMMON),
     lambda n: _fit("Graph break in user code at a:1", " ", n, "x")),
    ("textrecompiles.recompiling", lambda t: _safe(textrecompiles.recompiling, [t], _COMMON),
     lambda n: _fit("Recompiling function f in ", "a:1 ", n)),
    ("textrecompiles.guard_fail (escapes)", lambda t: _safe(textrecompiles.guard_fail, [t], _COMMON),
     lambda n: _fit('GuardFail(reason="', "\\x", n)),
    ("textrecompiles.guard_fail (code object)",
     lambda t: _safe(textrecompiles.guard_fail, [t], _COMMON),
     lambda n: _fit('GuardFail(reason="r", orig_code=<code object ', "f", n)),
    ("textviolations.constraint_violations (You marked)",
     lambda t: textviolations.constraint_violations([t], _COMMON),
     lambda n: _fit("", "You marked ", n, "x as dynamic but your code specialized it")),
    ("textviolations.constraint_violations (inferred)",
     lambda t: textviolations.constraint_violations([t], _COMMON),
     lambda n: _fit("", "Not all values of ", n, " are valid because x")),
    ("textmsg.set_replacement", lambda t: _safe(textmsg.set_replacement, [t], _COMMON),
     lambda n: _fit("set_replacement s0 = ", "a (b ", n)),
    ("textstack.user_stack", lambda t: textstack.user_stack([t, "x"]),
     lambda n: _fit('  File "a.py", line 1, in f', " ", n, "x")),
    ("trace_lines._limit_hit", trace_lines._limit_hit,
     lambda n: _fit("Dynamo recompile limit exceeded", " currently set to 8 x", n)),
    ("trace_lines._comment_loc", trace_lines._comment_loc, lambda n: _fit("LAMBDA_GUARD: x  # ", "# a", n)),
    ("trace_lines._shape_guard", trace_lines._shape_guard,
     lambda n: _fit("LAMBDA_GUARD: ", "x.size() ", n, "#")),
    ("trace_events.graph_signature (blanks)", trace_events.graph_signature,
     lambda n: _fit('        add: "f32[4]" = x', " ", n, "y")),
    ("trace_events.graph_signature (forward)", trace_events.graph_signature,
     lambda n: _fit("    def forward(self, ", "a", n, ")")),
    ("pgo_trace.parse_rendered_state", lambda t: _safe(pgo_trace.parse_rendered_state, [t]),
     lambda n: _fit("  L['x']: ", "unusual FrameStateSizeEntry(", n, "x")),
    ("pgo_trace.parse_render", lambda t: _safe(pgo_trace.parse_render, t),
     lambda n: _fit("unusual FrameStateSizeEntry(scalar=", "a, size=b, stride=", n, "x")),
    # round 23's readings of pasted lines (textforeign, textpaste)
    ("textold.old_break_continues (a frame under the traceback's head)",
     lambda t: textold.old_break_continues(1, "Traceback (most recent call last):", t),
     lambda n: _fit('  File "', "/torch/_dynam", n, "x")),
    ("textforeign_messages.bare_gb_type", lambda t: textforeign_messages.bare_gb_type(t.encode()),
     lambda n: _fit("a", " ", n, "x")),
    ("textpaste.normalize (bare limit head after text)", lambda t: textpaste.normalize(t.encode()),
     lambda n: _fit("", "| 1.0it/s] ", n, "torch._dynamo hit config.recompile_limit (8)")),
    ("textpaste.normalize (quoted code span)", lambda t: textpaste.normalize(t.encode()),
     lambda n: _fit("> `", "a ", n, "`")),
    ("textpaste.rejoined_message", lambda t: textpaste.rejoined_message(t.encode(), t.encode()),
     lambda n: _fit("", "([{", n)),
    # round 25: a rank's tag, then a stamp, before the bare head (or a stamp that starts like
    # torch 2.0's layout, repeated: the layout is tried once, then the bare head)
    ("textpaste.normalize (tag and stamp before a bare head)", lambda t: textpaste.normalize(t.encode()),
     lambda n: _fit("[rank0]: 2025-01-09 10:23:44,277 WARNING", " ", n,
                    "torch._dynamo hit config.recompile_limit (8)")),
    ("textpaste.normalize (layout-like stamps before a bare head)",
     lambda t: textpaste.normalize(t.encode()),
     lambda n: _fit("[rank0]: ", "[2025-01-09 10:23:44,277] ", n,
                    "torch._dynamo hit config.recompile_limit (8)")),
    # round 24's readings (vLLM's quoted worker error: its first pattern took 31 s on the blanks;
    # Ray's dedup suffix; a wrapped "You marked" item; the debug context; a fake kernel's op)
    ("textcrash.quoted_exception (blanks)", lambda t: textcrash.quoted_exception(t.encode()),
     lambda n: _fit("RuntimeError: Worker failed with error 'dynamic shape operator: ", " ", n, "x")),
    ("textcrash.quoted_exception (tails)", lambda t: textcrash.quoted_exception(t.encode()),
     lambda n: _fit("RuntimeError: Worker failed with error 'dynamic shape operator: ",
                    ", please check the stack trace above for the root cause'", n)),
    ("textforeign._RAY_REPEATED_RE (suffixes)",
     lambda t: textforeign._RAY_REPEATED_RE.search(t.encode()),
     lambda n: _fit("x", " [repeated 2x across cluster]", n, " [repeated 2x across cluster]")),
    ("textviolations.wrapped_mark", textviolations.wrapped_mark,
     lambda n: _fit("You marked ", "as dynamic but your code ", n)),
    ("textbreaks.graph_break_body (debug context)",
     lambda t: textbreaks.graph_break_body(["Graph Break Reason: x", "  Developer debug context: "
                                            + t, *["    " + t[:80]] * 100]),
     lambda n: _fit("", "unsupported operator: ", n)),
    ("advice._fake_kernel_fix (op names)",
     lambda t: advice._no_fake_impl_fix(t) + str(advice._NO_FAKE_RE.search(t)),
     lambda n: _fit("There was no fake impl registered for <CustomOpDef(", "a::", n,
                    "Please use `" + "a." * 100)),
    # round 28: a program's warning that quotes torch.compile's refusal (the stamp's words are
    # counted up to two; the level's word reaches 160 characters)
    ("textcrash.refusal_warned (stamp words)", textcrash.refusal_warned,
     lambda n: _fit("", "ab ", n, "WARNING Windows not yet supported for torch.compile")),
    ("textcrash.refusal_warned (levels)", textcrash.refusal_warned,
     lambda n: _fit("", "WARNING ", n, "Windows not yet supported for torch.compile")),
    ("textcrash.refusal_warned (one long word)", textcrash.refusal_warned,
     lambda n: _fit("", "W", n, " Windows not yet supported for torch.compile")),
    ("textautograd.miss (sizes)", lambda t: textautograd.miss(t, _COMMON),
     lambda n: _fit("Cache miss due to 1 changed tensor shapes (total of 2): ", "sizes[1], ", n)),
    ("textautograd.miss (node)", lambda t: textautograd.miss(t, _COMMON),
     lambda n: _fit("Cache miss due to new autograd node: ", "a (NodeCall 1) with key size 1", n)),
    # round 29: a skipped function's name and file in GB0007's Explanation, its module in the
    # debug context (backticks that never close, separators repeated)
    ("advice._SKIPPED_FN_RE (unclosed names)", lambda t: advice._SKIPPED_FN_RE.search(t),
     lambda n: _fit("", "marked that the function `a` in file `", n)),
    ("advice._SKIPPED_MODULE_RE (modules)", lambda t: advice._SKIPPED_MODULE_RE.search(t),
     lambda n: _fit("", "module: a.b, module: ", n)),
    # round 29: vLLM's stamp behind a paste's indent, its worker tag with rank words
    ("textforeign._WRAPPER_TAG_RE (tags with rank words)",
     lambda t: textforeign._WRAPPER_TAG_RE.match(t.encode()),
     lambda n: _fit("        ", "(VllmWorker TP0 EP1 DP2 pid=1) ", n, "ERROR")),
    ("textforeign._WRAPPER_TAG_RE (blanks)",
     lambda t: textforeign._WRAPPER_TAG_RE.match(t.encode()),
     lambda n: _fit("", " ", n, "(EngineCore_DP0 pid=32) ERROR 09-17 01:05:51 [core.py:720] x")),
    # round 30: dynamo's speculate_subgraph record (its separators repeated, never closed)
    ("textbreaks._SPECULATED_RE (separators)", lambda t: textbreaks._SPECULATED_RE.match(t),
     lambda n: _fit("speculate_subgraph: while introspecting ", "a, we were unable ", n, "`")),
    # round 30: nix's build-log tag (a name that never ends in "> ")
    ("textforeign._NIX_TAG_RE (names)", lambda t: textforeign._NIX_TAG_RE.match(t.encode()),
     lambda n: _fit("", "a.b-c+", n, " x")),
    # round 29: pytest's location line under an exception's report (".py:" repeated)
    ("textcrash._PYTEST_WHERE_RE (locations)", lambda t: textcrash._PYTEST_WHERE_RE.match(t),
     lambda n: _fit("/a", ".py:1: ", n, "x")),
    # round 29: a precompiled entry's GuardDebugInfo parts (brackets that never close)
    ("textrecompiles._PRECOMPILED_PARTS_RE (brackets)",
     lambda t: textrecompiles._PRECOMPILED_PARTS_RE.match(t),
     lambda n: _fit("verbose_code_parts=[", "['a'], ", n, "x")),
    # round 29: an AOT-compiled function's GuardDebugInfo parts in a crash's error text
    ("advice._AOT_PARTS_RE (brackets)", lambda t: advice._AOT_PARTS_RE.search(t),
     lambda n: _fit("verbose_code_parts=[", "'a]' ", n, "x")),
    # round 28: a version the Python prompt or pip show states on the line under its opener
    ("textversion.VersionLines.read (the prompt's answer)", lambda t: _answer(b">>> torch.__version__", t),
     lambda n: _fit("'2", ".5", n, "'")),
    ("textversion.VersionLines.read (pip show's Version)", lambda t: _answer(b"Name: torch", t),
     lambda n: _fit("Version:", " ", n, "2.5.1")),
]


def _answer(opener: bytes, text: str) -> object:
    """``text`` read as the line under ``opener`` (``textversion.VersionLines``)."""
    lines = textversion.VersionLines()
    lines.read(opener, 1)
    return lines.read(text.encode(), 2)


def _safe(fn: Callable[..., object], *args: Any) -> object:
    try:
        return fn(*args)
    except ValueError:  # a malformed record: what these hostile lines mostly are
        return None


# How each pattern is applied in the code (default: ``search``). ``match``/``fullmatch`` try
# one start position; ``findall`` (also standing for ``sub``/``finditer``) tries them all.
USAGE: dict[str, str] = {
    "glog.GLOG_RE": "match", "glog.OLD_PREFIX_RE": "match", "events._COMPILE_ID_RE": "match",
    "textmsg._FLOC_RE": "fullmatch",
    "trace_events._NONE_TAIL": "match",
    "trace_lines._WORD": "match", "trace_lines._DIGITS": "match",
    "trace_lines._REACHED": "match",
    "trace_events._BLANK": "findall", "trace_events._NODE_NO": "findall",
    "trace_events._ARG": "findall", "pgo_trace._UNUSUAL_TOKEN_RE": "findall",
    "textpaste._AT_REST_RE": "match", "textpaste._BARE_RE": "match",
    "textpaste._BASIC_RE": "match", "textpaste._CUT_RE": "match", "textpaste._DATED_RE": "match",
    "textpaste._ELIDED_RE": "match", "textpaste._LEVEL_ONLY_RE": "match",
    "textpaste._LINK_RE": "findall", "textpaste._LOGGING_RE": "match",
    "textpaste._NO_LEVEL_RE": "match", "textpaste._QUOTED_CODE_RE": "match",
    "textpaste._RANK_CUT_RE": "match", "textpaste._RANK_LEAD_RE": "match",
    "textpaste._ROLE_TAG_RE": "match", "textpaste._SPACED_RE": "match",
    "textpaste._STAMP_RE": "match", "textpaste._TICKS_RE": "findall",
    "textpaste._TORCHDYNAMO_RE": "match", "textpaste._TRIMMED_RE": "match",
    "textforeign._PYTEST_SUMMARY_RE": "match", "textforeign._RANK_TAG_RE": "match",
    "textforeign._WRAPPER_TAG_RE": "match", "textforeign._NIX_TAG_RE": "match",
    "textbreaks._SPECULATED_RE": "match",
    "textforeign_messages._BARE_GB_RE": "fullmatch", "textforeign_messages._NO_FRAMES_RE": "match",
    "textforeign_messages._PY_WARNING_RE": "match",
    "textforeign_messages._RECOMPILE_ERROR_RE": "match",
    "textforeign_messages._UNSUPPORTED_RE": "match",
    "textforeign_readers._RAISED_RE": "match", "textforeign_readers._TRACEBACK_RE": "match",
    "textcrash._ARROW_RE": "match", "textcrash._QUOTED_RE": "match",
    "textcrash._CLASSLESS_RE": "match",
    "textcrash._COMPILER_MODULE_RE": "match", "textcrash._EXC_RE": "match",
    "textcrash._HEAD_RE": "match", "textcrash._IPY_CELL_RE": "match",
    "textcrash._IPY_FILE_LINK_RE": "match", "textcrash._IPY_FILE_RE": "match",
    "textcrash._IPY_LINK_RE": "match", "textcrash._IPY_OLD_RE": "match",
    "textcrash._KERNEL_NAME_RE": "match", "textcrash._TRITON_SOURCE_RE": "match",
    "textcrash._WRAP_START_RE": "match",
    "torchtree._DRIVE_RE": "match", "unbacked._RAISES_RE": "match",
    "textautograd._NODE_RE": "match", "textautograd._SHAPES_RE": "match",
    "textautograd._OLD_RE": "match", "textautograd._CALL_RE": "match",
    "textautograd._SIZE_RE": "findall", "trace_map._CA_REASON": "match",
    "analyzer._RAISED_LIMIT_RE": "match",
    "textversion._REPL_RE": "match", "textversion._PRINT_RE": "match",
    "textversion._PIP_SHOW_RE": "match", "textversion._QUOTED_RE": "match",
    "textversion._BARE_RE": "match", "textversion._SHOW_VERSION_RE": "match",
}


def patterns() -> list[tuple[str, re.Pattern[Any]]]:
    """Every compiled pattern of the parser modules, by ``module.NAME`` (one imported into
    another module is timed once, under the first module's name)."""
    out = []
    seen: set[int] = set()
    for module in MODULES:
        for name, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern) and id(value) not in seen:
                seen.add(id(value))
                out.append((f"{module.__name__.rsplit('.', 1)[1]}.{name}", value))
    return out


def _time(fn: Callable[[Any], object], arg: Any, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, fn: Callable[[Any], object], make: Callable[[int], Any],
            sizes: list[int], budget: float) -> dict[str, Any]:
    times: dict[str, float] = {}
    for size in sizes:
        seconds = _time(fn, make(size), repeat=1 if size >= 1 << 20 else 3)
        times[f"{size >> 10}KB"] = seconds
        if seconds > budget:
            break
    row: dict[str, Any] = {"name": name, "seconds": {k: round(v, 6) for k, v in times.items()}}
    if len(times) == len(sizes) and len(sizes) >= 2:
        last, before = times[f"{sizes[-1] >> 10}KB"], times[f"{sizes[-2] >> 10}KB"]
        row["growth"] = round(last / max(before, 1e-6), 1)
    else:
        row["growth"] = None  # stopped early: superlinear
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--max-kb", type=int, default=1024)
    ap.add_argument("--budget", type=float, default=5.0, help="seconds before a case stops growing")
    ap.add_argument("--max-seconds", type=float, default=1.0,
                    help="fail when the largest line takes longer than this")
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args(argv)
    sizes = [s << 10 for s in (1, 10, 100, 1024) if s <= ns.max_kb]
    width = 78
    print(f"{'pattern / function':<{width}}  " + "  ".join(f"{f'{s >> 10}KB':>9}" for s in sizes)
          + "   growth", flush=True)
    rows = []

    def show(r: dict[str, Any]) -> None:
        rows.append(r)
        cells = "  ".join(f"{r['seconds'].get(f'{s >> 10}KB', float('nan')) * 1e3:>7.2f}ms" for s in sizes)
        growth = "superlinear" if r["growth"] is None else f"{r['growth']:.1f}x"
        print(f"{r['name'][:width]:<{width}}  {cells}   {growth}", flush=True)

    for name, rx in patterns():
        bytes_rx = isinstance(rx.pattern, bytes)
        worst: dict[str, Any] | None = None
        for frag in GENERIC:
            def make(n: int, frag: str = frag, bytes_rx: bool = bytes_rx) -> Any:
                text = _fit("", frag, n)
                return text.encode() if bytes_rx else text
            how = USAGE.get(name, "search")
            row = measure(f"{name}.{how} {frag!r}", getattr(rx, how), make, sizes, ns.budget)
            if worst is None or max(row["seconds"].values()) > max(worst["seconds"].values()):
                worst = row
        assert worst is not None
        show(worst)
    for name, fn, make in TARGETED:
        show(measure(name, fn, make, sizes, ns.budget))
    # A quadratic pattern at 1 MB costs ~10^12 steps (minutes); a linear one milliseconds. The
    # growth ratio of fast cases is noisy (cache effects past L2, timer resolution), so a case
    # fails when it stopped early or its largest line took more than --max-seconds.
    largest = f"{sizes[-1] >> 10}KB"
    bad = [r for r in rows if r["growth"] is None or r["seconds"][largest] > ns.max_seconds]
    print(f"\n{len(rows)} patterns and functions; {len(bad)} superlinear or over "
          f"{ns.max_seconds:g} s on a {largest} line")
    if ns.json:
        ns.json.write_text(json.dumps({"sizes_kb": [s >> 10 for s in sizes], "rows": rows}, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""torch's messages on a line without a prefix, as ``textforeign.ForeignLines`` reads them:
which message a line begins (``said_without_prefix``: a warning torch raised, an exception's
last line, a record a plain formatter printed, explain()'s report), with the reader of its
lines; what else continues each reader's message under its first line (``CONTINUES``); and
torch's graph-break type alone on a line (``bare_gb_type``). Pure functions and tables.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse import textframes as frames
from dyncli.logparse import textguards as guards
from dyncli.logparse import textnotes as notes
from dyncli.logparse import textold as old
from dyncli.logparse import textorphans as orphans
from dyncli.logparse import textprofiler as profiler
from dyncli.logparse import textrecompiles as recompiles
from dyncli.logparse import textviolations as violations
from dyncli.logparse.textbuiltins import warned_break

# torch's own words that a user sees without TORCH_LOGS: a Python warning torch raised
# ("…/torch/_dynamo/variables/functions.py:725: UserWarning: Graph break due to unsupported
# builtin X", sageattention#73; "UserWarning: Dynamo does not know how to trace the builtin `X`",
# sageattention#337), a graph break's message as an exception prints it ("Unsupported: Failed
# to trace builtin operator" with its Explanation and Hints, pytorch#174138;
# "torch._dynamo.exc.Unsupported: call_method …", righttyper#93: fullgraph=True raised it), and
# error_on_recompile's "torch._dynamo.exc.RecompileError: Recompiling function f in …"
_PY_WARNING_RE = re.compile(rb"^(?:\S{0,1024}torch[/\\]_dynamo[/\\][\w/\\]{1,200}\.py:\d{1,9}: )?"
                            rb"UserWarning: (?P<msg>(?:Graph break|Dynamo does not know how to trace)"
                            rb".{0,4000})$")
# (the qualified name behind a paste's own indent too: vllm-ascend#1615's block is one space in)
_UNSUPPORTED_RE = re.compile(rb"^(?P<exc>(?: {1,4})?torch\._dynamo\.exc\.)?Unsupported: "
                             rb"(?P<msg>\S.{0,4000})$")
# torch 2.1-2.6's UserError for a Python branch on a tensor's value (textbreaks.CONTROL_FLOW),
# with dynamo's "from user code:" stack after it (unsloth#2307, #2204): read as that break,
# raised, its class named or not. Dynamo never writes the sentence at a line's start: where it
# catches the error itself (a UserError is an Unsupported), the break's record has it after
# "Graph break: " (2.1, 2.2), in a traceback's last line with its class (2.3-2.5's exc_info, a
# soft-failed frame's "WON'T CONVERT … due to:" in every release) or after "Reason:
# Unsupported: " (2.6); the sentence alone is the exception's text as the code that caught it
# printed it (print(e), a UI's error box), so the exception left torch.compile: raised
_CONTROL_FLOW = breaks.CONTROL_FLOW.encode()
_CONTROL_FLOW_RE = re.compile(rb"^(?P<exc>(?:torch\._dynamo\.exc\.)?UserError: )?"
                              + re.escape(_CONTROL_FLOW) + rb".{0,4000}$")
# (2.1-2.2 raised it with the recompiles log's tuple: "RecompileError: ('Recompiling function f in
# x.py:3', \"triggered by the following guard failure: …\")")
_RECOMPILE_ERROR_RE = re.compile(rb"^(?:torch\._dynamo\.exc\.)?RecompileError: "
                                 rb"(?P<msg>(?P<tuple>\(')?Recompiling function .{1,4000})$")


# compile_wrapper's error when a fullgraph call compiled nothing (torch 2.12 on), as the
# program's traceback ends in it or a wrapper quotes it (vLLM's "Worker failed with error
# 'torch.compile with fullgraph=True found no compiled frames. …'", pytorch#181247)
_NO_FRAMES = b"torch.compile with fullgraph=True found no compiled frames."
# at a line's start (a traceback's last line), behind a markdown quote, or in a wrapper's
# "… error '…'" — not prose that mentions it
_NO_FRAMES_RE = re.compile(rb"^(?:> ?)*`?(?:RuntimeError: )?(?:[\w ]{0,80} error ')?"
                           + re.escape(_NO_FRAMES))


# torch's gb type alone on its line, as ``print(e)`` of the Unsupported shows it (exc.py's
# format_graph_break_message: the type, then "  Explanation: …"), or behind print's blank in
# ``print("Compile error:\n", e)`` (pytorch#167266, #180845): torch's types are at most 88
# characters (2.15's registry), begin with a letter, an underscore or a backtick. Matched
# whole on the line without its trailing blanks: a lazy type before "\s*$" retried the blanks
# at each of its 120 lengths (5 s on a line of 1 MB of blanks between two words)
_BARE_GB_RE = re.compile(rb" ?(?P<gb>[A-Za-z_`][^\t]{0,119})")
_STANCE = b"Detected recompile when torch.compile stance is"
_BARE_TREE = guards.BARE_TREE_HEAD.encode()
_EXPLAIN_HEADS = tuple(h.encode() for h in breaks.EXPLAIN_HEADS)


_SKIP_AT = re.compile(b"|".join(re.escape(h) for h in cg.SKIP_HEADS_B))
_BAR_END = re.compile(rb"(?:it/s\]|s/it\]|\||\r)\s{0,8}$")  # a progress bar's last chars


def after_bar(raw: bytes) -> bytes:
    """A CUDA-graph skip message where a progress bar put it: written after the bar, on its
    line (dInfer#38: ``  0%|…| 0/6 [00:00<?, ?it/s]skipping cudagraphs due to …``); the line
    itself otherwise (prose that mentions a skip is not one)."""
    m = _SKIP_AT.search(raw)
    if m is None or m.start() == 0:
        return raw
    if not raw[:m.start()].strip(b" \t>") or _BAR_END.search(raw, 0, m.start()):
        return raw[m.start():]  # after a bar, or a quote's "> " (pytorch#119241's comment)
    return raw


def bare_gb_type(line: bytes) -> bytes | None:
    """torch's gb type where ``line`` is one alone (``_BARE_GB_RE``; not a head that ends
    with a colon), else None."""
    head = line.rstrip()
    m = _BARE_GB_RE.fullmatch(head) if not head.endswith(b":") else None
    return m["gb"] if m is not None else None


def said_without_prefix(raw: bytes) -> tuple[Any, str] | None:
    """(reader, first line) of torch's message that a line without a prefix begins, or None;
    behind a markdown quote's marks too (a user quoting torch's warning or exception, "> UserWarning:
    Graph break …", as quoted records are read elsewhere)."""
    line = orphans.unquoted(raw.rstrip())
    if line == _BARE_TREE:  # (a guard tree pasted without its prefixes: pytorch#167416)
        return guards.bare_tree, guards.BARE_TREE_HEAD
    if _NO_FRAMES in line[:4000] and _NO_FRAMES_RE.match(line) is not None:
        return frames.no_compiled_frames, line[line.find(_NO_FRAMES):].decode("utf-8", "replace")
    if b"UserWarning: " in line[:1300] \
            and (m := _PY_WARNING_RE.match(line.lstrip(b" \t>"))) is not None:
        return warned_break, m["msg"].decode("utf-8", "replace")
    if b"Unsupported: " in line[:44] and (m := _UNSUPPORTED_RE.match(line)) is not None:
        # (qualified, it is a traceback's last line, pytest's or a wrapper's copy of it: raised)
        head = breaks.RAISED_UNSUPPORTED if m["exc"] else "Unsupported: "
        return breaks.unsupported_break, head + m["msg"].decode("utf-8", "replace")
    if _CONTROL_FLOW in line[:120] and (m := _CONTROL_FLOW_RE.match(line)) is not None:
        return breaks.unsupported_break, breaks.RAISED_UNSUPPORTED + line[
            len(m["exc"] or b""):].decode("utf-8", "replace")
    if b"RecompileError: " in line[:40] and (m := _RECOMPILE_ERROR_RE.match(line)) is not None:
        read = old.old_recompile_error if m["tuple"] else recompiles.recompile_error
        return read, m["msg"].decode("utf-8", "replace")
    lead = line[:2000]  # (a loop, not any() over a generator: asked of every program line)
    for mark in cg.ERROR_MARKS_B:
        if mark in lead:
            if (start := cg.error_start(line)) is not None:
                return partial(cg.runtime_error, raised=start.raised), start.text
            break
    if line.startswith(b"Graph break ") and (text := line.decode("utf-8", "replace").strip()) \
            and breaks.GRAPH_BREAK_RE.match(text) is not None:
        # torch 2.4-2.6's graph-break record as a plain formatter prints it (bitsandbytes#1578)
        return breaks.graph_break, text
    if line.startswith(b"Graph break: ") and old.old_break_head(text := line.decode("utf-8", "replace")):
        # torch 2.1-2.5's record with the prefix cut from every line (its traceback is its own)
        return old.old_graph_break, text.strip()
    if line.strip() in _EXPLAIN_HEADS:
        return breaks.explained_breaks, line.strip().decode("utf-8", "replace")
    if line.startswith(b"Torchdynamo Profiler Report") and profiler.is_head(line):
        return profiler.report, line.strip().decode("utf-8", "replace")
    if line.startswith(recompiles.GUARD_FAIL.encode()) \
            and recompiles.is_guard_fail(text := line.strip().decode("utf-8", "replace")):
        # a user's print of the GuardFail torch gives a guard_fail_fn (pytorch#105279)
        return recompiles.guard_fail, text
    if _STANCE in line[:200]:
        text = line.strip().decode("utf-8", "replace")
        if recompiles.STANCE_RE.match(text) is not None:
            return recompiles.stance_recompile, text
    return None


# What else continues a pending message of each reader besides its indented lines: the
# unindented lines it begins with (the builtin warning's own hints; an exception's "from user
# code:" before its stack), and how many blank lines in a row do (between an Unsupported
# block's parts: two where torch has no Hint for the break, 2.8-2.15's empty hints section,
# sageattention#92; a skip's stack has none)
_UNSUPPORTED_PARTS = ((b"from user code:", b"Explanation: ", b"Hint: ",
                       b"Developer debug context: ", b"https://"), 2)
CONTINUES: dict[Any, tuple[tuple[bytes, ...], int]] = {
    cg.text_record: ((), 0),
    warned_break: ((b"If it is ",), 1),
    # (its parts at the margin too: a paste that lost torch's two-space indent, pytorch#165421)
    # (and its link, where rich or a terminal wrapped " For more details about this graph
    # break, please visit: " before it: 2.8-2.15's exc.py)
    breaks.unsupported_break: _UNSUPPORTED_PARTS,
    breaks.cut_break: _UNSUPPORTED_PARTS,  # (the same message, its type line cut)
    recompiles.recompiling: ((), 1),
    recompiles.recompile_error: ((), 1),
    recompiles.guard_fail: ((recompiles.GUARD_FAIL.encode(),), 0),  # (the next entry's print)
    old.old_recompile_error: ((), 0),  # (one line: the tuple)
    # (and its precompiled entries' guard trees and GuardDebugInfo, at the margin)
    guards.bare_tree: ((b"+- ", b"| "), 0),  # (a tree's lines, at the margin)
    recompiles.stance_recompile: ((recompiles.PRECOMPILED.encode(), b"TREE_GUARD_MANAGER:", b"+- ",
                                   b"| ", b"GuardDebugInfo(", b"result=", b"verbose_code_parts=",
                                   b"num_guards_executed=", b"user_stack="), 1),
    # (explain()'s breaks of 2022 are numbered at the left margin, blank lines between them)
    breaks.explained_breaks: (tuple(f"{n}. ".encode() for n in range(1, 100)), 1),
    frames.no_compiled_frames: ((), 0),
    profiler.report: ((), 1),  # (and every line up to the one that ends it: its tables' rows)
    cg.many_sizes: ((), 0),  # (and any line that is a piece of torch's warning)
    breaks.graph_break: ((b"Reason: ", b"User code traceback:", b"Graph Break Reason: "), 0),
    old.old_graph_break: ((), 0),  # (its own rule: textold.old_break_continues)
    # (its stack: " File …" lines, a blank where the code line was empty: transformers#30775;
    # the moved static inputs' "input name: …" lines at the margin, a blank after each stack,
    # pytorch#132043)
    cg.runtime_error: ((b"input name: ",), 1),
    notes.noted: ((), 0),  # a warning's code line, indented under it
    violations.wrapped_violation: ((), 0),  # a "You marked" item wrapped onto indented lines
}

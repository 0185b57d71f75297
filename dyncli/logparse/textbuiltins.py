"""A call dynamo cannot trace (a builtin or a C/C++ function), as torch's Python warning
names it (``warned_break``), and torch's fix for it: what diagnose's causes and advice read
from a graph break's reason (``builtin_name``, ``warned_builtin``, ``builtin_hint``).
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev

# (a paste may cut the message before its closing backtick: sageattention#337's second copy)
# (torch names a function whose module it cannot find "<unknown module>.list.copy": a method of
# a Python builtin type, reached from matplotlib's code in a compiled step)
_BUILTIN_RE = re.compile(r"(?:unsupported builtin (?P<a>[\w.]{1,300}?)\.(?:\s|$)"
                         r"|trace the builtin `(?P<b>(?:<unknown module>)?[^`\s]{1,300}))")
_UNKNOWN_MODULE = "<unknown module>."


def warned_break(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """torch's Python warning at a call it cannot trace (``UserWarning: Graph break due to
    unsupported builtin X. …``, torch 2.5; ``UserWarning: Dynamo does not know how to trace the
    builtin `X.` …``, 2.6 on): a graph break at a place the warning does not name, and torch's
    hint (a custom op, or allow_in_graph if it is traceable)."""
    name = builtin_name(" ".join(t.strip() for t in lines))
    if name is None:
        reason = lines[0].split(". ", 1)[0].strip()
        return [ev.GraphBreak(file="", user_line=0, reason=reason[:300], **common)]
    return [ev.GraphBreak(file="", user_line=0, reason=_WARNED.format(name),
                          hints=(builtin_hint(name),), **common)]


# warned_break's reason, and its reader (diagnose merges the warning into the exception that
# names the same builtin: under fullgraph=True torch prints both for one break)
_WARNED = "a call of {}, a builtin or C/C++ function dynamo cannot trace"
_WARNED_RE = re.compile(r"^a call of ((?:<unknown module>\.)?\S{1,300}), a builtin or C/C\+\+ "
                        r"function dynamo cannot trace$")


def warned_builtin(reason: str) -> str | None:
    """The builtin of a break ``warned_break`` read (its reason), or None."""
    m = _WARNED_RE.match(reason)
    return m[1] if m else None


def builtin_name(text: str) -> str | None:
    """The builtin torch's words say it cannot trace (``zlib.crc32``), or None."""
    m = _BUILTIN_RE.search(text)
    return (m["a"] or m["b"]).rstrip(".") if m else None


def builtin_hint(name: str) -> str:
    """torch's hints for a builtin it cannot trace, as one fix; for torch's own private C
    functions (``torch._C._dynamo.guards.assert_size_stride``, pytorch#154536: reached from
    inductor's cached output code, never called by the user) a report to torch instead, and
    for DDP's buffer broadcast the settings that keep it out of the compiled forward."""
    if name.startswith("torch._C._distributed_c10d") and name.endswith("._broadcast_coalesced"):
        return DDP_BUFFERS_FIX
    if name in WARN_BUILTINS:
        return WARN_FIX
    if (new := _NEW_RE.match(name)) is not None:
        return _new_fix(new["cls"])
    if name.startswith(_UNKNOWN_MODULE) or name.startswith("builtins."):
        # (torch's first hint for a Python builtin: file an issue; no custom op wraps it)
        short = name.removeprefix(_UNKNOWN_MODULE).removeprefix("builtins.")
        return (f"{short} is Python's own (a builtin dynamo does not trace there): torch's hint "
                "is to report it to PyTorch; meanwhile call it outside the compiled function, or "
                "compile less of the code that reaches it")
    if name.startswith("torch._C.") or name.startswith("torch._"):
        return (f"{name} is torch's own, reached from code torch generated or called, not a "
                "call of yours to move or wrap: report it to torch with a repro; where it "
                "appears only on a second run, when torch reuses its cached compiled code, "
                "TORCHINDUCTOR_FX_GRAPH_CACHE=0 avoided it (pytorch#154536)")
    return (f"wrap {name} in a custom operator (torch.library.custom_op) or, if it is "
            f"traceable, torch.compiler.allow_in_graph({name}) (torch's own hint); or call it "
            "outside the compiled function")


# An object of a class implemented in C or C++ made in the compiled code: dynamo reaches the
# tp_new of its C base and names that, with no module (the slot wrapper has none): "None.X.__new__"
# (2.5's warning and a 2.7 nightly's explanation: cosmos-rl#16, pytorch#128095), "<unknown
# module>.X.__new__" in 2.15's functions.py wording (2.15 itself breaks on a class call's
# construction in its polyfill, "method `__new__` of class `pybind11_type`", read elsewhere).
# X is the base class, not the user's: pybind11_object for every class pybind11 binds
# (cosmos-rl#16), _SimpleCData for ctypes' simple types (bitsandbytes in pytorch#128095).
# torch's hints (a custom operator, allow_in_graph) fit a function, not a constructor: neither
# can make or return such an object. Made outside and passed in, the graph does not break
# (tests/integration/test_printed_break_fixes.py on 2.15: a ctypes.c_int subclass and a
# pybind11 class's subclass, 2 graphs -> 1)
_NEW_RE = re.compile(r"^(?:None\.|<unknown module>\.)(?P<cls>\w{1,200})\.__new__$")
_NEW_BASES = {"pybind11_object": "every class pybind11 binds is one, so the log does not name "
                                 "which",
              "_SimpleCData": "ctypes' simple types, c_int and its kin"}


def _new_fix(cls: str) -> str:
    """The fix of a C type's construction dynamo cannot trace (``_NEW_RE``)."""
    which = f": {_NEW_BASES[cls]}" if cls in _NEW_BASES else ""
    return (f"{cls}.__new__ is the construction of an object of a class implemented in C or C++ "
            f"({cls} or a class built on it{which}), which dynamo cannot trace: create the object "
            "outside the compiled function and pass it in, or the value the code needs from it "
            "(torch's hints, a custom operator or allow_in_graph, are for a function: neither "
            "makes such an object in the graph)")


# Python's warnings.warn (the C function _warnings.warn): torch's own hint (2.15's explanation,
# functions.py) and ezyang's answer to pytorch#135688 (2.4.1; "It does help") is the config that
# makes dynamo call a logging function after the compiled graph instead of breaking there.
# Applied on 2.15 (tests/integration/test_warn_break_fix.py): 2 graphs -> 1, the warning still
# shown, on a second thread too where that thread adds it: the set is a per-thread copy there
# (_config_module.py deep-copies a mutable default into the thread's ContextVar), so an add()
# on the main thread does not reach a worker thread that compiles
WARN_BUILTINS = ("_warnings.warn", "warnings.warn")

# Where a fix that changes torch._dynamo.config (a set of functions dynamo skips or reorders)
# must run: dynamo reads its config on the thread it compiles on, the one that calls the compiled
# function (not the one a compiled backward runs on, an autograd engine's); from torch 2.12 a
# user override is that thread's own (_config_module.py's ContextVar, a mutable default
# deep-copied into it). Every fix that says where to make such a setting says it in these words.
ON_CALLING_THREAD = "on the thread that calls the compiled function"
# (and why, said once in a fix: true of 2.12 on, and a fix read from an older release's log
# may be applied on a newer torch)
PER_THREAD = ("(from torch 2.12 its settings are per thread: one made on the main thread does "
              "not reach a worker's)")

WARN_FIX = (
    "torch._dynamo.config.reorderable_logging_functions.add(warnings.warn) before compiling, "
    f"{ON_CALLING_THREAD} {PER_THREAD} — torch's own hint, pytorch#135688: "
    "dynamo then calls it after the compiled graph instead of breaking the graph there, for "
    "arguments that are constants, tensors or string formatters; or call warnings.warn outside "
    "the compiled function")


# DDP's forward broadcasts the module's buffers from rank 0 (_pre_forward -> _sync_buffers ->
# dist._broadcast_coalesced) when the DDP wrapper itself is compiled (pytorch#141827, #139440).
# Measured with 2 gloo ranks, torch 2.15 (tests/integration/test_ddp_fixes.py): the break is gone
# with broadcast_buffers=False, with forward_sync_buffers=False (2.15's name; broadcast_buffers
# is deprecated there), and with DDP(torch.compile(model)).
DDP_BUFFERS_FIX = (
    "DDP's forward broadcasts the module's buffers (BatchNorm's running statistics, say) from "
    "rank 0 at every call, a collective dynamo cannot trace (pytorch#141827): "
    "DistributedDataParallel(model, broadcast_buffers=False) where the buffers need not match "
    "across ranks (torch 2.15 names it forward_sync_buffers=False), or compile the module and "
    "wrap that in DDP, DDP(torch.compile(model)), which has no break but one backward graph, so "
    "DDP's gradient all-reduce no longer overlaps the backward bucket by bucket")

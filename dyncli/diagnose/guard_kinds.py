"""What each kind of failed guard means to a person, and the fix that kind has (issue 33).

torch names the guard that failed; ``dyncli.logparse.guardtext.checked`` reads which kind it
is. Sizes and Python numbers have the allow-list rules (``advice``, ``size_changes``); every
other kind changes something no dynamic-shape setting covers, and its fix is to keep that
thing the same across calls, or to know why it changes. One row per kind: a new kind torch
writes is one more row here and one more test in ``guardtext.checked``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from dyncli import sources
from dyncli.diagnose.findings import ConfigFlag
from dyncli.diagnose.releases import COMPILE_LIMIT, Releases
from dyncli.logparse import guardtext as gt
from dyncli.logparse.guardtext import Checked
from dyncli.logparse.textbuiltins import ON_CALLING_THREAD
from dyncli.logparse.textmsg import parse_sloc

# Which torch makes a Python float dynamic, and how (read in each release's source; applied in
# tests/integration/test_float_fix.py on 2.4, 2.11, 2.14.1, 2.15): before 2.6 never
# (specialize_float defaulted to True until pytorch#137782: every value compiles again, under
# any dynamic=; pytorch#149406 on 2.5.1 used dynamic=True and recompiled); 2.6 and 2.7 after one
# recompile, by automatic dynamic only (2.7 builder.py:2079); from 2.8 also from the first
# compile under dynamic=True (pytorch#149564), making every tensor dim dynamic with it
FLOAT_RELEASES = ("otherwise torch before 2.6 compiles every value of a float again, whatever "
                  "dynamic= says; 2.6 and later make it dynamic after one recompile; from 2.8 "
                  "torch.compile(…, dynamic=True) makes it dynamic from the first compile, and "
                  "every tensor dim with it (dynamic kernels, which can be slower)")


# How a raised limit reaches every thread that compiles (TensorRT-LLM#18492: a limit set at model
# load, an executor loop on another context kept torch's 8). From torch 2.12 a config override is
# a ContextVar (utils/_config_module.py: assignments and config.patch alike), so
# ``torch._dynamo.config.recompile_limit = N`` on the main thread leaves an executor or serving
# thread at torch's default; torch.compile's ``recompile_limit=`` (2.12 on: pytorch#177936) is
# kept by the compiled callable and holds on every thread (2.11 has neither: one process-wide
# value). A log's cache_size_limit is torch before 2.7: its assignment is process-wide.
# (tests/integration/test_limit_thread_fix.py applies both on 2.15, the compiles on a thread)
_ON_EVERY_THREAD = {
    "recompile_limit": (
        "; to raise the limit on every thread, pass it to torch.compile: torch.compile(…, "
        "recompile_limit=N) (torch 2.12 on); from 2.12 an assignment to "
        "torch._dynamo.config holds only on the thread that makes it, so code compiled on an "
        "executor or serving thread keeps torch's default"),
    "accumulated_recompile_limit": (
        f"; set it {ON_CALLING_THREAD}: from torch 2.12 an assignment to "
        "torch._dynamo.config holds only on the thread that makes it"),
}


def on_every_thread(flag: str, known: Releases | None = None) -> str:
    """How to raise ``flag`` (``torch._dynamo.config.recompile_limit``, or words for a limit the
    log does not name: the per-frame one) so that every thread that compiles sees it, said
    after each fix that advises raising it; "" for cache_size_limit and its accumulated one
    (torch before 2.7), and where the log's releases ``known`` are all before 2.12 (no
    torch.compile recompile_limit=, an assignment process-wide: releases.FIRST)."""
    name = flag.rsplit(".", 1)[-1]
    if "cache_size_limit" in name or (known is not None and known.has(COMPILE_LIMIT) is False):
        return ""
    return _ON_EVERY_THREAD.get(name, _ON_EVERY_THREAD["recompile_limit"])


@dataclass(frozen=True)
class KindText:
    """``what``: the change, for a sentence ("an object's identity changed"); ``fix``;
    ``dynamic``: what dynamic shapes do about it."""

    what: str
    fix: str
    dynamic: str = "dynamic shapes will not fix these"


# the fix of a backend mismatch, however torch logged it (tests/integration/test_backend_fix.py
# applies it: a backend made per call, even a new functools.partial as torch's own message
# suggests, compiles on every call)
_ONE_BACKEND = ("compile the function once and call that, or pass one backend object to every "
                "torch.compile: a backend made per call (a lambda, a closure, a new "
                "functools.partial) is another backend, and each compiles again")

KINDS: dict[str, KindText] = {
    # torchtune#1402 (`input_pos`, a slice of a tensor whose length grew). Measured (torch 2.11
    # and 2.15, tests/integration/test_stride_fix.py): a slice x[:, :10] of bases 356, 357, 358
    # wide compiles 2 graphs by default, 1 with dynamic=True, mark_dynamic (any dim) or
    # .contiguous(); transposed views compile 2 with dynamic=True, 1 contiguous
    Checked.STRIDE: KindText(
        "a tensor's strides changed, not its sizes (a slice or view of a tensor whose size "
        "changed, a transpose, channels-last)",
        "pass it contiguous ({t}.contiguous() before the compiled call: one graph for every "
        "layout, for a copy per call); for a slice of a tensor whose size changes, marking it "
        "dynamic up front (torch._dynamo.mark_dynamic({t}, 0), any of its dims, or "
        "dynamic=True) makes its strides dynamic too, without the copy; a parameter's strides "
        "changed by the backend itself (inductor's layout optimization: "
        "TORCHINDUCTOR_LAYOUT_OPTIMIZATION=0) are a torch issue",
        dynamic=("automatic dynamic makes the strides dynamic at this recompile, as it does a "
                 "size (one recompile, not one per stride), but each new layout (a transpose, "
                 "channels-last) compiles again")),
    Checked.VALUE: KindText(
        "a Python value the code reads changed (a string, a tuple, a length, dict keys)",
        "keep it the same across calls, or move it out of the compiled function; each new "
        "value compiles again and no dynamic-shape setting covers it"),
    Checked.IDENTITY: KindText(
        "an object's identity changed (the function is guarded on which module, processor or "
        "function it got)", "pass the same object on every call (do not re-create or re-assign "
        "it between calls)"),
    Checked.INSTANCE: KindText(
        "the function ran for another object than its cached code was compiled for (its guard "
        "is on self): one method shared by many objects, such as each layer of a model, "
        "compiles code of its own for each of them",
        "compile the model that calls them, once, rather than each object's method (a torch "
        "that inlines nn.Module calls, inline_inbuilt_nn_modules: on by default in 2.11, off "
        "in 2.4, traces them all into the caller's graph); or raise the limit to the number of "
        "objects if each should keep code of its own"),
    Checked.INVALIDATED: KindText(
        "torch dropped a cached entry because an object its guards held by identity was freed "
        "(torch: 'Cache line invalidated because … got deallocated'), so the next call compiles "
        "again", "create that object once and keep it alive across calls: one made anew for "
        "each call (a processor list, a closure, a module) is freed after the call, and the "
        "code compiled for it with it"),
    Checked.UNEXPECTED: KindText(
        "torch's guards failed at run time but passed when torch looked for the reason, which "
        "torch's message calls a bug ('Unexpected recompilation')",
        "report it to torch with a minimal repro, as its message asks, and say whether several "
        "threads call the compiled function (pytorch#123177 shows this under threads)"),
    Checked.TYPE: KindText(
        "an input's type changed (another class at the same place)",
        "pass objects of one class at that place"),
    # torchtune#1232 (torch 2.4, FSDP2, each layer compiled): fully_shard set each module's
    # class to a new type(f"FSDP{cls.__name__}", …) per module until pytorch#134135 (2.5)
    # cached one per class; tests/integration/test_self_class_fix.py imitates it
    Checked.INSTANCE_TYPE: KindText(
        "the module the method ran for has another class than its cached code was compiled "
        "for (the guard is on self's type): each module instance has a class of its own, a "
        "class made per instance (FSDP2's fully_shard before torch 2.5 made FSDP<cls> for each "
        "module, pytorch#134135) or really different block types sharing one method",
        "upgrade to torch >= 2.5 (fully_shard makes one FSDP class per module class there), or "
        "give the instances one shared class; otherwise raise {flag} to the number of modules, "
        "so that each keeps code of its own (here raising the limit is the fix: each class "
        "needs code of its own)"),
    # a mark from the second call on (a loader or library that marks inputs late):
    # tests/integration/test_dim_marking_fix.py, 2 compiles, 1 marked from the first call;
    # 2.13-2.15's one C++ guard (guards.py: dim_marking_attrs) covers _dynamo_dynamic_indices,
    # _weak_dynamic_, _unbacked_, _strict_unbacked_ and _static_indices, and fails both ways
    Checked.DIM_MARKING: KindText(
        "{t} was marked dynamic (mark_dynamic / maybe_mark_dynamic / mark_unbacked; torch "
        "2.13 on also guards mark_static) at this call but not when the code was compiled, or "
        "the other way round: torch guards the marks a tensor carries",
        "mark it before the first compiled call, and on every call "
        "(torch._dynamo.mark_dynamic({n}, dim), or the mark it carries, before each call, the "
        "first included); a mark that only some calls carry compiles twice",
        dynamic=("the mark itself changed, not a size: marking the same dims on every call "
                 "makes it one compile")),
    # deeplink.framework#607 (2.1: CURRENT_DEVICE ==), 2.15's mode stack (set_default_device
    # pushes a TorchFunctionMode): tests/integration/test_default_device_fix.py
    Checked.DEFAULT_DEVICE: KindText(
        "the default device (torch.set_default_device, `with torch.device(...)`) or another "
        "TorchFunctionMode around the call differed from the compile's (dynamo's default-device "
        "or torch-function-mode guard): no value of the code changed",
        "set the default device once, before the first compiled call, and keep it (or enter "
        "the same mode around every call, the first included)"),
    Checked.GLOBAL_STATE: KindText(
        "global state changed between calls (grad mode, inference mode, autocast, default "
        "dtype or device)", "call the compiled function under one mode (e.g. always inside "
        "torch.no_grad(), or never)"),
    Checked.BACKEND: KindText(
        "the compiled code came from another backend or another torch.compile call",
        _ONE_BACKEND),
    Checked.DTYPE: KindText("a tensor's dtype changed", "pass tensors of one dtype"),
    Checked.DEVICE: KindText("a tensor's device changed", "pass tensors on one device"),
    Checked.REQUIRES_GRAD: KindText("a tensor's requires_grad changed",
                                    "pass tensors with the same requires_grad"),
    Checked.DISPATCH_KEYS: KindText(
        "a tensor's dispatch keys changed (what it dispatches to: its device, CPU to CUDA, or "
        "a wrapper such as autograd or a tensor subclass)",
        "pass tensors on one device, wrapped the same way"),
    Checked.RANK: KindText("a tensor's number of dimensions changed",
                           "pass tensors of one rank (each rank compiles its own graph)"),
    Checked.TENSOR: KindText(
        "a tensor's properties changed (size, stride, dtype or device: torchdynamo's "
        "___check_tensors does not say which)",
        'a newer torch, or TORCH_LOGS="recompiles", names which property changed'),
    Checked.GUARD_ERROR: KindText(
        "torch's own guard failed to run (a torch bug, not a change of your inputs)",
        "upgrade torch or report it: the guard code torch generated raised an error"),
    # torch's reason is there and empty: no guard failed. torch 2.4-2.9 log a backend
    # mismatch so (2.10's guards.py: "None of the guard entries failed - a backend match
    # issue", now "BACKEND_MATCH failure"); pytorch#154707's maintainer names the
    # backend, pytorch#164119 shows it under an infra TorchDispatchMode. recompiles_verbose
    # names nothing more there.
    # pytorch#164992 (2.10 dev, DebugMode): the same empty reason from a tensor guard that
    # failed on its dispatch keys, which torch does not print (fixed in torch there)
    Checked.NO_GUARD: KindText(
        "torch found no failed guard it could name in the cached code: torch 2.4 to 2.9 log "
        "this empty reason when that code came from another backend or another torch.compile "
        "call (2.3 names ___check_current_backend, 2.10 and later BACKEND_MATCH), and a torch "
        "from before pytorch#164992 (2025-10) when a tensor guard failed on its dispatch keys, "
        "which it does not print (a TorchDispatchMode or DebugMode around the call: "
        "pytorch#164119)",
        _ONE_BACKEND + "; if no backend changes and a dispatch mode is active around the call, "
        "call the compiled function the same way every time (the mode on, or off) and report "
        "it to torch (fixed for DebugMode by pytorch#164992)"),
    Checked.UNKNOWN: KindText(
        "the log holds no reason for it (the paste cut it off)",
        'paste the whole record: TORCH_LOGS="recompiles" prints the guard that failed',
        dynamic=""),  # (without the reason, what dynamic shapes do for it is not known)
    Checked.OTHER: KindText("a non-shape guard failed",
                            "keep the guarded property constant across calls"),
}
SHAPES = frozenset({Checked.SIZE, Checked.SCALAR})  # the kinds the allow-list rules handle
# the kinds a rule of their own handles (not one finding per kind of advice._others): the
# allow-list's, and duck sizing's (advice._duck_sizing: torch's use_duck_shape flag)
OWN_RULES = SHAPES | {Checked.DUCK}
# torch's own hint on a guard that duck sizing added (guardtext.DUCK_NOTE)
DUCK_FLAG = ConfigFlag("use_duck_shape", "False", module="torch.fx.experimental._config",
                       title="duck sizing: sizes equal at a compile share one symbol")


# The parts of torch's global state guard (torch/csrc/dynamo/guards.cpp GlobalStateGuard:
# "GLOBAL_STATE changed: allow_tf32 "), and the setting of each a program changes
_STATE = {
    "grad_mode": "grad mode (torch.no_grad / torch.enable_grad around the call)",
    "allow_tf32": "torch.backends.cuda.matmul.allow_tf32 (torch.set_float32_matmul_precision "
                  "sets it)",
    "allow_fp16_reduce": "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "allow_bf16_reduce": "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "deterministic_algorithms": "torch.use_deterministic_algorithms",
    "deterministic_algorithms_warn_only": "torch.use_deterministic_algorithms(warn_only=…)",
    "default_dtype": "torch.set_default_dtype",
    "num_threads": "torch.set_num_threads",
    "torch_function": "a torch function mode (torch._C.DisableTorchFunction and the like)",
    "torch_function_all_disabled": "a torch function mode (torch._C.DisableTorchFunction and "
                                   "the like)",
}
_STATE_RE = re.compile(r"GLOBAL_STATE changed: ((?:\w{1,60} ?){1,12})")


_IDENT_RE = re.compile(r"^[A-Za-z_]\w{0,80}$")


def _stride(row: KindText, reasons: Iterable[str]) -> KindText:
    """The stride row with the tensor the reasons name (``input_pos`` for torch's ``tensor
    'L['input_pos']' stride mismatch``) where they name one local, else ``x``."""
    names = {gt.plain_name(m.name) for r in reasons
             if (m := gt.mismatch(gt.guard_text(gt.split_failed(r)[1]))) is not None}
    one = next(iter(names)) if len(names) == 1 else ""
    return replace(row, fix=row.fix.format(t=one if _IDENT_RE.match(one) else "x"))


# the guarded object's class as torch prints it: type=<class 'pkg.mod.fn.<locals>.Holder'>
_LOCAL_TYPE_RE = re.compile(r"type=<class '(?:[\w.]{0,300}\.)?(?P<fn>\w{1,200})\.<locals>\."
                            r"(?P<name>[\w.<>]{1,300})'>")


def _made(reasons: tuple[str, ...]) -> str:
    """`` (made at file:line: `code`)`` from torch's comment on the first such guard."""
    for r in reasons:
        user = parse_sloc(gt.comment_of(gt.split_failed(r)[1])[0])[0]
        if user is not None and user.file:
            return f" (at {user.file}:{user.line}" + (f": `{user.code}`" if user.code else "") + ")"
    return ""


def _local_class(reasons: tuple[str, ...], kind: str) -> KindText | None:
    """The identity or type row for a class defined inside a function, a new class on every
    call of it. Identity (the class object itself, comfy-aimdo#13): a function that defines a
    class and breaks the graph compiled 10 graphs over 5 calls, the class at module level 2.
    Type (an object of such a class passed in: ``___check_type_id(cfg, …), type=<class
    '….make.<locals>.Cfg'>``): 5 compiles over 5 calls, 1 with the class at module level.
    Measured on torch 2.11 and 2.15 (tests/integration/test_local_class_fix.py)."""
    m = next((m for r in reasons if (m := _LOCAL_TYPE_RE.search(r))), None)
    if m is None:
        return None
    fn, name = m["fn"], m["name"]
    where = f"{fn}.<locals>.{name}"
    if kind == Checked.TYPE:
        return KindText(
            f"the input's class is {where}, defined inside {fn}: each call of {fn} defines a "
            f"new class, so each object made there has another type{_made(reasons)}, and torch "
            "guards the type it compiled for",
            f"define {name} at module level, once, outside {fn}, and make the objects from it")
    return KindText(
        f"the guarded object is {where}, a class or function defined inside {fn}: each "
        f"call makes a new one{_made(reasons)}, and torch guards which one it compiled for",
        f"define {name} at module level, once, outside {fn} (a class statement in a "
        "compiled function also breaks the graph there); it is not an object the caller passes")


# a guard on something a module instance holds (not ``self`` itself: that is INSTANCE): a
# member reached through self; and an index a model's blocks are named by, in its value
_MEMBER_RE = re.compile(r"^(?:___check_obj_id\()?(?:self|L\['self'\])(?:\.|\[)")
_BLOCK_RE = re.compile(r"(?:^|[._'\"])(?:blocks|layers|layer|h|block|transformer_blocks|"
                       r"single_transformer_blocks|double_blocks|single_blocks)\.(?P<index>"
                       r"\d{1,6})(?:[._'\"]|$)")
_LIMIT = "torch._dynamo.config.recompile_limit"


def per_instance(kind: str, reasons: Iterable[str], flag: str = _LIMIT,
                 known: Releases | None = None) -> KindText | None:
    """The row for a value or object that each instance of a module holds (a patch, its key),
    where every reason guards one: one forward shared by many instances compiles once per
    instance, on the first pass already, not per call (pytorch#114511; ComfyUI#14536 and
    ComfyUI-TeaCache#150: Wan's blocks, each with its own LoRA patch). Raising the limit to the
    number of instances is then a fix, not a way to hide recompiles (ComfyUI-WanVideoWrapper
    #366). Applied on 2.11, 2.14.1, 2.15 (tests/integration/test_per_block_fix.py)."""
    if kind not in (Checked.VALUE, Checked.IDENTITY):
        return None
    values = []
    for reason in reasons:
        guard = gt.guard_text(gt.split_failed(reason)[1])
        parts = gt.compared(guard)
        subject = parts[0] if kind == Checked.VALUE and parts else guard
        if not subject or _MEMBER_RE.match(subject.strip()) is None:
            return None
        values.append(parts[-1] if kind == Checked.VALUE and parts else "")
    if not values:
        return None
    blocks = sorted({int(m["index"]) for v in values if (m := _BLOCK_RE.search(v))})
    what = "a value" if kind == Checked.VALUE else "an object"
    shown = ", ".join(map(str, blocks[:8])) + (", …" if len(blocks) > 8 else "")
    named = (f"; the values name blocks of a model ({'block' if len(blocks) == 1 else 'blocks'} "
             f"{shown}): "
             "each block holds its own, and the code compiled for one fails the guard of the "
             "next" if blocks else "")
    return KindText(
        f"{what} that a module instance holds (guarded through self) changed: one forward "
        "shared by many instances (each block of a model, each with its own patch or key) "
        "compiles code of its own for each of them, already on the first pass through the "
        f"model, not only when a call changes it{named}",
        f"compile the model that calls the blocks, once, rather than each block (their code "
        f"is then inlined into one graph); or set {flag} to at least the number of blocks, so "
        "that each keeps code of its own (each change of the patches, a LoRA's, compiles every "
        "block again); only if one instance gets a new "
        f"{'value' if kind == Checked.VALUE else 'object'} on every call, keep it the same "
        f"across calls instead{on_every_thread(flag, known)}")


# self's class as torch 2.15 prints it after the guard: ``___check_type_id(self, 943…),
# type=<class '__main__.FSDPBlock'>``
_SELF_TYPE_RE = re.compile(r"___check_type_id\((?:self|L\['self'\]), (?P<id>\d{1,20})\)"
                           r"(?:, type=<class '(?P<name>[\w.<>]{1,300})'>)?")


def _self_type(row: KindText, reasons: tuple[str, ...], flag: str,
               known: Releases | None) -> KindText:
    """The row of a guard on self's class, with the limit's name; where torch names one class
    for guards of two or more class ids, that class is made anew for each instance."""
    found = [m for r in reasons if (m := _SELF_TYPE_RE.search(r))]
    names = {m["name"] for m in found}
    ids = {m["id"] for m in found}
    row = replace(row, fix=row.fix.format(flag=flag) + on_every_thread(flag, known))
    if len(ids) < 2 or len(names) != 1 or None in names:
        return row
    name = next(iter(names)).rsplit(".", 1)[-1]
    return replace(row, what=(
        f"the module the method ran for has another class than its cached code was compiled "
        f"for (the guard is on self's type), and torch names the same class, {name}, for "
        f"{len(ids)} class objects: each module instance has a class of its own, the same "
        "class name, a new class object each time, a class made per instance (FSDP2's "
        "fully_shard before torch 2.5 made FSDP<cls> for each module, pytorch#134135)"))


# the tensor of torch 2.1-2.12's ``hasattr(L['x'], '_dynamo_dynamic_indices') == False``
_MARKED_RE = re.compile(r"hasattr\((?P<name>[^,()]{1,300}), '_dynamo_\w{1,40}_indices'\) == False")


def _dim_marking(row: KindText, reasons: tuple[str, ...]) -> KindText:
    """The dimension-marking row with the tensor the reasons name (2.15's C++ message names
    none)."""
    names = {gt.plain_name(m["name"].strip()) for r in reasons if (m := _MARKED_RE.search(r))}
    one = next(iter(names)) if len(names) == 1 else ""
    one = one if _IDENT_RE.match(one) else ""
    return replace(row, what=row.what.format(t=one or "a tensor (torch's message does not "
                                                      "name which)"),
                   fix=row.fix.format(n=one or "x"))


# deeplink.framework#607: torch_dipu replaced torch.device, so the device stored by
# set_default_device never equalled the guard's and every call compiled again (2.1)
_MOCKED_DEVICE = ("; if it fails on every call though the device never changes, a library that "
                  "replaces torch.device (torch_dipu, deeplink.framework#607) makes the two "
                  "unequal: import it before torch, or do not set the default device")


def text(kind: str, reasons: Iterable[str] = (), flag: str = _LIMIT,
         known: Releases | None = None) -> KindText:
    """The row of ``kind`` (``other``'s for a kind this table does not know); a global-state
    row names the settings torch's reasons say changed (comfy-wavespeed#12: ``allow_tf32``).
    ``flag``: the recompile limit's name where the row's fix raises it; ``known``: the releases
    the log tells (on_every_thread)."""
    row = KINDS.get(kind) or KINDS[Checked.OTHER]
    reasons = tuple(reasons)
    if (instance := per_instance(kind, reasons, flag, known)) is not None:
        return instance
    if kind == Checked.STRIDE:
        return _stride(row, reasons)
    if kind == Checked.INSTANCE_TYPE:
        return _self_type(row, reasons, flag, known)
    if kind == Checked.DIM_MARKING:
        return _dim_marking(row, reasons)
    if kind == Checked.DEFAULT_DEVICE and any("CURRENT_DEVICE ==" in r for r in reasons):
        return replace(row, fix=row.fix + _MOCKED_DEVICE)
    if kind in (Checked.IDENTITY, Checked.INSTANCE, Checked.TYPE):
        local = _local_class(reasons, kind)
        if local is not None:
            return local
    if kind == Checked.INSTANCE:
        return replace(row, fix=row.fix + on_every_thread(flag, known))
    if kind != Checked.GLOBAL_STATE:
        return row
    names = dict.fromkeys(n for r in reasons if (m := _STATE_RE.search(r))
                          for n in m[1].split() if n in _STATE)
    if not names:
        return row
    settings = "; ".join(dict.fromkeys(_STATE[n] for n in names))
    return KindText(f"global state changed between calls ({', '.join(names)})",
                    f"set it once, before the first compiled call, and keep it: {settings} "
                    "(each change compiles again)")


# A recompile set_stance("fail_on_recompile") refused, its error naming no guard: the error
# named none until pytorch#165445 (2025-10; 2.11's lists them), so nothing was cut
# (pytorch#139202, #163500)
STANCE_UNKNOWN = KindText(
    "torch's fail_on_recompile error of this release names no guard (it lists them from "
    "pytorch#165445 on, in 2.11 and later): it refused the recompile and stopped the run",
    'TORCH_LOGS="recompiles", or a newer torch, names the guard that failed', dynamic="")

# A recompile torch._dynamo.config.error_on_recompile refused (RecompileError), its guard
# failures not in the paste: torch's error lists them under its first line in every release
# (guards.py: the recompiles log's message, raised), so the paste cut them (pytest's summary
# line cuts the message at the terminal's width: diffusers#11085)
ERROR_ON_RECOMPILE_UNKNOWN = KindText(
    "torch._dynamo.config.error_on_recompile raised RecompileError instead of recompiling and "
    "stopped the run; the guard failures its message lists under its first line are not in "
    "the paste",
    "paste the whole error (pytest: the test's report above the short summary; "
    'TORCH_LOGS="recompiles" logs the same message): it names the guard that failed',
    dynamic="")


def optimizer_fix(source: str) -> str | None:
    """The fix of a float hyperparameter of a compiled ``optimizer.step`` (its source
    ``L['self'].param_groups[0]['lr']``), or None for any other source. ``self`` is the
    optimizer, not a module: no module rule applies. A scheduler writes a new float into
    ``param_groups`` at every step, each a value to guard on:

    - ``lr`` (pytorch#107076: AdamW's step hit the limit): the thread's fix, and PyTorch's
      recipe "Running the compiled optimizer with an LR Scheduler", is the LR as a tensor,
      which schedulers fill in place (``_update_param_group_val``);
    - ``betas`` and ``momentum`` (pytorch#133898, OneCycleLR): OneCycleLR and CyclicLR cycle
      beta1 or momentum by default and write a new tuple or float each step, replacing any
      tensor passed in (their ``get_lr``, 2.11 and 2.15), so the fix is cycle_momentum=False.

    Applied in tests/integration/test_optimizer_lr_fix.py (torch 2.11 and 2.15, AdamW, 8-10
    steps): LambdaLR 2 graphs with lr=0.01, 1 with lr=torch.tensor(0.01); OneCycleLR 2 graphs,
    1 with cycle_momentum=False."""
    name = sources.optimizer_hyper(source)
    if name is None:
        return None
    if name in ("betas", "momentum"):
        return (f"the scheduler writes {name} at every step: OneCycleLR and CyclicLR cycle it "
                "by default (cycle_momentum=True), as a new float that replaces even a tensor "
                "passed in; cycle_momentum=False keeps it constant and step() compiles once")
    return (f"create the optimizer with {name} as a tensor (e.g. torch.optim.AdamW(params, "
            f"{name}=torch.tensor(0.01))): a scheduler then updates the tensor in place of "
            "writing a new float at every step, and step() compiles once (PyTorch's recipe, "
            "\"Running the compiled optimizer with an LR Scheduler\")")

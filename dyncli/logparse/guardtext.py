"""The text of torch's guard failures, read in one place: what a recompile reason says.

A reason as torch writes it (torch/_dynamo/guards.py; the text log's ``Recompiling`` record
and the trace's ``recompile_reasons`` artifact alike)::

    0/1: tensor 'x' size mismatch at index 0. expected 4, actual 6  # y = x @ w  # m.py:7 in f

is the failed cache entry (``0/1: ``, absent before torch 2.5), the guard, and a comment with
the user code and its location (torch >= 2.14 may add "(user code shown is first use of this
value…)"). This module cuts a reason into those parts and reads the guards dyncli acts on:
a size (or stride) mismatch, a bound on a size, a comparison of a Python number, the dynamic
indices mark_dynamic recorded, and what a non-shape guard checks. Every reader (the text log's
``textrecompiles``, the trace's mapper) and every advice rule (``dyncli.diagnose``) uses these,
so a guard is read one way. Pure functions; each pattern is anchored or bounded: linear on
any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class GuardKind(StrEnum):
    """What a failed guard is about: a recompile's ``cause`` in ``--json``.

    torch writes more kinds (object identity, type, global state, backend match): they count as
    ``other`` (see :func:`non_shape`, and :class:`Checked` for the fine kind); a new kind is one
    more member here and one more test in :func:`classify`. A stride guard is ``stride``, not
    ``size``: the tensor's sizes did not change (torchtune#1402's ``input_pos``, a slice whose
    base grew), and automatic dynamic makes its strides dynamic as it does sizes.
    """

    SIZE = "size"
    STRIDE = "stride"
    SCALAR = "scalar"
    OTHER = "other"
    # no reason in the log (a record the paste cut before its failures): not ``other``, which
    # says dynamic shapes will not fix it (parler-tts#93 counted one so)
    UNKNOWN = "unknown"


# ---------------------------------------------------------------- a reason's parts

# The failed cache entry before the guard: "0/1: ", "!0/1: " (compiled autograd), "0/1_1: ";
# or the entry alone, "0/0:" at the end (torch 2.5-2.9's empty reason, its space stripped)
# or before a newline (a trace's reason, which goes on to torch 2.15's "User stack trace:")
FAILED_RE = re.compile(r"^(?P<cid>!?\d+(?:/\d+)*(?:_\d+)?):(?: |(?=\n)|$)")
# torch >= 2.14's note on a guard it blames on 0/1 specialization (not part of the location)
FIRST_USE = " (user code shown is first use of this value"
# torch's comment on an equality of two sizes it made because they were equal at the compile
# (symbolic_shapes.py produce_guards, torch 2.11 on: "duck sizing added this equality because
# these variables had the same size 4 (to avoid this specialization, set
# torch.fx.experimental._config.use_duck_shape = False)")
DUCK_NOTE = "duck sizing added this equality"
# torch's comment on a shape guard it cannot trace to code: "(unknown var s1, please file a
# bug)" or "(unknown source L['x'], please file a bug)" (symbolic_shapes.py, sglang#7230)
UNKNOWN_ORIGIN_RE = re.compile(r"\(unknown (?:var|source) [^()]{1,200}, please file a bug\)")


def split_failed(reason: str) -> tuple[str, str]:
    """(failed cache entry, the rest) of ``0/1: guard…``; ("", reason) without one."""
    m = FAILED_RE.match(reason)
    return (m["cid"], reason[m.end():]) if m else ("", reason)


def guard_part(reason: str) -> str:
    """The guard of a reason without its ``# user code`` comment (not stripped)."""
    return reason.split("  #", 1)[0].split(" # ", 1)[0]


def guard_text(reason: str) -> str:
    """The guard of a reason (the failed entry, if any, already cut) without its comment."""
    return guard_part(reason).strip()


def guard_of(reason: str) -> str:
    """The guard alone of a whole reason: failed entry and comment cut."""
    return guard_text(split_failed(reason)[1])


def comment_of(reason: str) -> tuple[str, bool]:
    """The comment of a reason (``code  # file:line in fn``) without torch's first-use note,
    and whether that note was there (torch blamed the guard on 0/1 specialization)."""
    return user_comment(reason.split("# ", 1)[1] if "# " in reason else "")


_JOINED = ") and "
_LOCATION_RE = re.compile(r"# \S{1,1024}:\d{1,9} in ")


def user_comment(comment: str) -> tuple[str, bool]:
    """The user's part of a guard's comment (``code  # file:line in fn``) and whether torch's
    first-use note was there.

    torch >= 2.11 blames a guard it owes to 0/1 specialization on the first use of the value
    (``code  # nn/modules/linear.py:134 in forward (user code shown is first use of this
    value--…)``), and when user code also bounds it joins the two origins: ``… (…first use…)
    and if x.shape[1] > 40:  # model.py:23 in forward (…)``. The part after ``and`` is the
    user's own line; the first is where torch's code happened to read the size (issue 33)."""
    cut = comment.find(FIRST_USE)
    if cut < 0:
        return comment, False
    joined = comment.find(_JOINED, cut)
    if joined >= 0 and _LOCATION_RE.search(comment, joined):
        return comment[joined + len(_JOINED):], True
    return comment[:cut], True


# ---------------------------------------------------------------- guards on sizes

# A guard on a tensor's geometry: torch's TENSOR_MATCH message or a shape guard on a size symbol.
_SIZE_RE = re.compile(r"size mismatch|stride mismatch|storage_offset|\.size\(\)|\.stride\(\)"
                      r"|\.shape\b|numel\(\)|_dynamo_dynamic_indices")
# a guard on a tensor's layout, not its sizes (a TENSOR_MATCH stride failure, a stride symbol)
# (the words Checked.STRIDE is read by, below)
_STRIDE_RE = re.compile(r"strides? mismatch|\.stride\(\)\[|storage_offset")
# ``tensor 'x' size mismatch at index 0. expected 2, actual 3`` (the name as torch's
# strip_local_scope prints it: dyncli.sources.from_reason turns it back into a source)
_MISMATCH_RE = re.compile(r"^tensor '(?P<name>.+)' (?P<what>size|stride) mismatch at index "
                          r"(?P<dim>\d+)\. expected (?P<exp>\d+), actual (?P<act>\d+)")
# the numbers a TENSOR_MATCH failure ends with
_EXPECTED_RE = re.compile(r"expected (?P<exp>\d+), actual (?P<act>\d+)$")
# "2 <= x.size()[0] <= 8", "9 <= L['x'].size()[0]", "x.size()[0] <= 8" (torch strips L[...])
_BOUND_RE = re.compile(r"^(?:(?P<lo>\d{1,18}) (?P<lop><=|<) )?(?P<expr>\S+?)\.size\(\)"
                       r"\[(?P<dim>\d{1,9})\](?: (?P<hop><=|<) (?P<hi>\d{1,18}))?$")
# automatic dynamic's lower bound: a dynamic size is >= 2 (sizes 0 and 1 are specialized)
_ZERO_ONE_RE = re.compile(r"^2 <= (?P<name>\S+?)\.size\(\)\[(?P<dim>\d+)\]")
NO_UPPER = 2**31 - 1  # a size's upper bound at or past this is no bound
_NO_UPPER_RE = re.compile(r"\s*<=\s*(?:(?P<n>\d{10,19})|int_oo)\s*")
# ``_dynamo_dynamic_indices not a subset: runtime {0, 1} is not a subset of compiled {0}``
INDICES_RE = re.compile(r"_dynamo_dynamic_indices not a subset: runtime \{(?P<rt>[\d, ]*)\} "
                        r"is not a subset of compiled \{(?P<c>[\d, ]*)\}")
# a parameter or buffer (torch keeps their shapes static: force_parameter_static_shapes)
PARAM_RE = re.compile(r"_parameters\[|_buffers\[|force_parameter_static_shapes")
_LOCAL_RE = re.compile(r"^L\['([^']+)'\]$")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """``tensor 'x' size mismatch at index 0. expected 4, actual 6``: a TENSOR_MATCH failure."""

    name: str  # as torch prints it (``x``, ``self.cache``, ``G['t']``)
    what: str  # "size" | "stride"
    dim: int
    expected: int
    actual: int


def mismatch(guard: str) -> Mismatch | None:
    """The size or stride mismatch a guard reports, or None."""
    m = _MISMATCH_RE.match(guard)
    if m is None:
        return None
    return Mismatch(m["name"], m["what"], int(m["dim"]), int(m["exp"]), int(m["act"]))


def expected_actual(guard: str) -> tuple[int, int] | None:
    """The (expected, actual) numbers a TENSOR_MATCH failure ends with, or None."""
    m = _EXPECTED_RE.search(guard)
    return (int(m["exp"]), int(m["act"])) if m else None


def plain_name(expr: str) -> str:
    """A local's name as torch prints it in a guard: ``x`` for both ``x`` and ``L['x']``."""
    m = _LOCAL_RE.match(expr)
    return m.group(1) if m else expr


@dataclass(frozen=True, slots=True)
class Bound:
    """A range guard on one size: ``2 <= x.size()[0] <= 8``, ``x.size()[0] < 9``."""

    expr: str  # ``x`` or ``L['x']`` as torch printed it
    dim: int
    lo: int | None  # as written
    hi: int | None
    lo_strict: bool = False  # ``<`` rather than ``<=``
    hi_strict: bool = False

    @property
    def low(self) -> int | None:
        """The smallest size the guard allows."""
        return None if self.lo is None else self.lo + self.lo_strict

    @property
    def high(self) -> int | None:
        """The largest size the guard allows."""
        return None if self.hi is None else self.hi - self.hi_strict


def size_bound(guard: str) -> Bound | None:
    """The bounds of a guard on one size, or None for any other guard."""
    m = _BOUND_RE.match(guard)
    if m is None:
        return None
    hi = int(m["hi"]) if m["hi"] else None
    return Bound(expr=m["expr"], dim=int(m["dim"]), lo=int(m["lo"]) if m["lo"] else None,
                 # an upper bound of int32's max or more is none (automatic dynamic's range)
                 hi=hi if hi is not None and hi < NO_UPPER else None,
                 lo_strict=m["lop"] == "<", hi_strict=m["hop"] == "<")


def zero_one(guard: str) -> tuple[str, int, bool] | None:
    """(name, dim, alone) of a guard that starts ``2 <= x.size()[0]`` (automatic dynamic's
    lower bound, which a size 0 or 1 fails); ``alone``: nothing follows that bound."""
    m = _ZERO_ONE_RE.match(guard)
    if m is None:
        return None
    # (an upper bound of int32's max or more is no bound: automatic dynamic's own range, as
    # sglang#23428's torch printed it, "2 <= input_.size()[0] <= 2147483647")
    top = _NO_UPPER_RE.fullmatch(guard, m.end())
    return m["name"], int(m["dim"]), m.end() == len(guard) or (
        top is not None and (top["n"] is None or int(top["n"]) >= NO_UPPER))


def dynamic_indices(reason: str) -> tuple[str, str] | None:
    """(runtime dims, compiled dims) of ``_dynamo_dynamic_indices not a subset``, as written."""
    m = INDICES_RE.search(reason)
    return (m["rt"], m["c"]) if m else None


# ---------------------------------------------------------------- guards on numbers

# A guard on a Python number: ``n == 31``, ``self.k != 4``, ``2 <= n`` (torch strips L[...]).
_NAME = r"[A-Za-z_][\w.]*(?:\[[^\]]+\][\w.]*)*"
_NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_SCALAR_RE = re.compile(rf"^(?:not \()?\(?\s*(?:{_NAME}\s*(?:==|!=|<=|>=|<|>)\s*{_NUM}"
                        rf"|{_NUM}\s*(?:==|!=|<=|>=|<|>)\s*{_NAME}"
                        rf"(?:\s*(?:and|<=|<)\s*{_NAME}?\s*(?:<=|<)?\s*{_NUM}?)?)\s*\)?$")
_CONSTANT_RE = re.compile(r"\b(True|False|None)\b")
# the name a comparison starts with: ``n`` of ``n == 2``, ``not (n == 2)``
_NAME_FIRST_RE = re.compile(rf"^(?:not \()?\(?\s*(?P<name>{_NAME})\s*(?:==|!=|<=|>=|<|>)")
_OPERATOR_RE = re.compile(r"\s*(?:==|!=|<=|>=|<|>)\s*")
_FLOAT_RE = re.compile(r"-?\d+\.\d*(?:e-?\d+)?$|-?\d+e-?\d+$|inf$|nan$")


def compared(guard: str) -> list[str]:
    """The operands of a comparison guard (``n == 2`` → ``["n", "2"]``)."""
    return _OPERATOR_RE.split(guard)


def compared_name(guard: str) -> str | None:
    """The name a comparison starts with (``n`` of ``n == 2``), or None (``2 <= n``)."""
    m = _NAME_FIRST_RE.match(guard)
    return m["name"] if m else None


def is_float(value: str) -> bool:
    """Whether a compared value is a Python float (``0.5``, ``1e-05``, ``inf``)."""
    return _FLOAT_RE.match(value) is not None


# ---------------------------------------------------------------- what a guard is about

# What a non-shape guard checks, by the words torch writes (first match wins)
_NON_SHAPE = (
    ("dtype mismatch", "dtype"),
    ("device mismatch", "device"),
    ("requires_grad mismatch", "requires_grad"),
    ("dispatch key set mismatch", "dispatch keys"),
    ("rank mismatch", "rank"),
    ("___check_type_id", "type"),
    ("___check_obj_id", "object identity"),
    ("global state", "global state"),
    ("grad_mode", "grad mode"),
)


# The dimension-marking guard (mark_dynamic, maybe_mark_dynamic, mark_unbacked, mark_static
# record dims on the tensor): torch 2.1-2.12's code part ``hasattr(L['x'],
# '_dynamo_dynamic_indices') == False`` (2.6 guards.py:2045, 2.12 :3502), and 2.13-2.15's C++
# dimension-marking guard, "_has_dynamo_dim_marking is present on runtime tensor but was absent
# at compile time" and "<attr> should be absent but is present on runtime tensor" (their
# libtorch_python.so): a tensor marked at this call and not at the compile. Not a size change.
DIM_MARKING = ("_indices') == False", "_has_dynamo_dim_marking",
               "should be absent but is present on runtime tensor")


def dim_marking(reason: str) -> bool:
    """Whether a reason is the dimension-marking guard (a mark that the compile did not see)."""
    return any(n in reason for n in DIM_MARKING)


def classify(reason: str) -> GuardKind:
    """What one reason's guard is about (the failed entry already cut)."""
    text = guard_text(reason)
    if dim_marking(text):  # (a mark, not a size: its name holds ``_dynamo_dynamic_indices``)
        return GuardKind.OTHER
    if _STRIDE_RE.search(text):
        return GuardKind.STRIDE
    if _SIZE_RE.search(text):
        return GuardKind.SIZE
    if _SCALAR_RE.match(text) and not _CONSTANT_RE.search(text):
        return GuardKind.SCALAR
    return GuardKind.OTHER


def non_shape(reason: str) -> str:
    """What a non-shape reason checks (``dtype``, ``object identity``…; "" when unknown)."""
    return next((what for needle, what in _NON_SHAPE if needle in reason), "")


class Checked(StrEnum):
    """What a guard checks, finer than ``GuardKind`` (issue 33): each kind torch writes, so
    that each gets a reason a person reads and the fix that kind has; ``kinds`` in ``--json``.
    """

    SIZE = "size"
    STRIDE = "stride"  # a layout change (a view, a transpose, channels-last), not a size
    SCALAR = "scalar"  # a Python int or float compared to a number
    VALUE = "value"  # another Python value: a string, a tuple, a length, dict keys
    IDENTITY = "identity"  # which object (a module, a processor, a function): ___check_obj_id
    # which object a method ran for (___check_obj_id of self): one function shared by many
    # objects, each layer of a model (torchdynamo#466, pytorch#114511)
    INSTANCE = "instance"
    # torch dropped a cached entry: an object its guards held by identity was freed
    # (guards.py: "Cache line invalidated because … got deallocated"), pytorch#141196
    INVALIDATED = "invalidated"
    # torch's guards failed at run time and passed when it looked for the reason: torch's own
    # "Unexpected recompilation … points to a bug" (guards.py), pytorch#123177
    UNEXPECTED = "unexpected"
    TYPE = "type"  # an object's class: ___check_type_id
    # the class of the module a method ran for (___check_type_id of self): a class per
    # instance (FSDP2's fully_shard before torch 2.5, pytorch#134135) or different block types
    INSTANCE_TYPE = "instance_type"
    # a tensor marked dynamic (mark_dynamic, maybe_mark_dynamic, mark_unbacked) at this call and
    # not when the code was compiled: torch's dimension-marking guard (DIM_MARKING)
    DIM_MARKING = "dim_marking"
    # the default device (torch.set_default_device, ``with torch.device(...)``) or another
    # TorchFunctionMode differed from the compile's: dynamo's DEFAULT_DEVICE guard (2.1-2.x,
    # ``utils_device.CURRENT_DEVICE == device(...)``) and its mode-stack guard (2.6 on,
    # ``___check_torch_function_mode_stack()``; set_default_device pushes a mode there)
    DEFAULT_DEVICE = "default_device"
    GLOBAL_STATE = "global_state"  # grad mode, inference mode, autocast, default dtype/device
    BACKEND = "backend"  # the compiled code of another backend
    DTYPE = "dtype"
    DEVICE = "device"
    REQUIRES_GRAD = "requires_grad"
    # the backends and wrappers a tensor dispatches to (C++ TENSOR_MATCH's "dispatch key set
    # mismatch": a device move, CPU to CUDA in comfy-wavespeed#106, or autograd, a subclass)
    DISPATCH_KEYS = "dispatch_keys"
    RANK = "rank"  # a tensor's number of dimensions
    TENSOR = "tensor"  # torchdynamo's ___check_tensors: some property of a tensor
    GUARD_ERROR = "guard_error"  # the guard itself failed to run (a torch bug)
    # torch logged the reason and it names no guard: no guard of the cached entry failed
    # (torch 2.4-2.9's backend mismatch; 2.10 on write "BACKEND_MATCH failure" instead)
    NO_GUARD = "no_guard"
    # an equality of two sizes torch assumed because they were equal at the compile (duck
    # sizing: equal sizes share one symbol); torch's comment on the guard says so (DUCK_NOTE)
    DUCK = "duck"
    UNKNOWN = "unknown"  # no reason in the log (the paste cut it off)
    OTHER = "other"


# The words each kind's guard is written with (first match wins; after size and scalar).
_CHECKED = (
    (("Cache line invalidated because ",), Checked.INVALIDATED),
    (("Unexpected recompilation: ",), Checked.UNEXPECTED),
    (("dtype mismatch",), Checked.DTYPE),
    (("device mismatch",), Checked.DEVICE),
    (("requires_grad mismatch",), Checked.REQUIRES_GRAD),
    (("dispatch key set mismatch",), Checked.DISPATCH_KEYS),
    (("rank mismatch",), Checked.RANK),
    (("stride mismatch", "strides mismatch", ".stride()[", "storage_offset"), Checked.STRIDE),
    (DIM_MARKING, Checked.DIM_MARKING),
    (("utils_device.CURRENT_DEVICE ==", "___check_torch_function_mode_stack()"),
     Checked.DEFAULT_DEVICE),
    (("___check_type_id(self,", "___check_type_id(L['self'],"), Checked.INSTANCE_TYPE),
    (("___check_type_id", "TYPE_MATCH"), Checked.TYPE),
    (("___check_obj_id(self,", "___check_obj_id(L['self'],", "KeyError on self.",
      "KeyError on L['self']", "IndexError on self.", "IndexError on L['self']"), Checked.INSTANCE),
    # torch's guard found a key or an index gone (C++ accessors: "KeyError on X['bias']"): the
    # container changed; on self's (sageattention#12) the method ran for another object
    (("KeyError on ", "IndexError on "), Checked.VALUE),
    (("___check_obj_id", "ID_MATCH"), Checked.IDENTITY),
    (("___check_global_state", "GLOBAL_STATE", "global state", "grad_mode", "autocast",
      "inference_mode"), Checked.GLOBAL_STATE),
    (("___check_current_backend", "BACKEND_MATCH", "backend"), Checked.BACKEND),
    (("___check_tensors", "check_tensor("), Checked.TENSOR),
    ((" is not defined", " has no attribute ", "Error:"), Checked.GUARD_ERROR),
)
_BARE_ID_RE = re.compile(r"^!?\d{1,9}(?:/\d{1,9})*(?:_\d{1,9})?:?$")
_VALUE_RE = re.compile(r"(?:==|!=| in |\bnot in\b)|^len\(|\.keys\(\)|___dict_contains|hasattr\(")


# torch 2.4's recompile-limit warning when no guard of the cached entries failed
NO_GUARD_TEXT = "Unable to find recompilation reasons"


def checked(reason: str) -> Checked:
    """The fine kind of one reason's guard (the failed entry already cut).

    A reason torch wrote that names no guard (empty, or only its entry: ``0/0:``; torch
    2.4's "Unable to find recompilation reasons") is ``no_guard``: torch checked the cached
    entry and none of its guards failed, which torch 2.4 to 2.9 log for a backend mismatch
    (guards.py of 2.10: "None of the guard entries failed - a backend match issue"). A log that
    holds no reason at all is the caller's ``unknown``."""
    # (torch 2.2's report_guard_failure_values appends ", with LHS value: 1")
    text = guard_text(reason).split(", with LHS value:", 1)[0]
    if not text or _BARE_ID_RE.match(text) or text.startswith(NO_GUARD_TEXT):
        return Checked.NO_GUARD
    found = next((kind for needles, kind in _CHECKED if any(n in text for n in needles)), None)
    if found is not None:
        return found
    coarse = classify(text)
    if coarse is GuardKind.SIZE:
        return Checked.SIZE
    if coarse is GuardKind.SCALAR:
        return Checked.SCALAR
    return Checked.VALUE if _VALUE_RE.search(text) else Checked.OTHER


def about_param(text: str) -> bool:
    """Whether a reason or a source is about a parameter or buffer."""
    return PARAM_RE.search(text) is not None


# torch's C++ TENSOR_MATCH appends this to every failure of an nn.Parameter, whatever failed
# (guards.cpp check_verbose_nopybind): a size, but also a dtype, device, dispatch keys or
# requires_grad, which force_parameter_static_shapes (parameter sizes only) does not touch
# (paste hunt 13: comfy-wavespeed#106, a weight moved CPU to CUDA by a partial load)
PARAM_HINT = " Guard failed on a parameter, consider using"

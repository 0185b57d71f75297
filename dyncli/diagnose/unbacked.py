"""What to do about an op whose output depends on a tensor's data, and about a compile that
raised a data-dependent error: torch's own answers, by the exception torch names. Pure.

Three of torch's exceptions say the data decided something tracing could not know
(``torch/_subclasses/fake_impls.py``, 2.0-2.15):

- ``DynamicOutputShapeException: aten.nonzero.default``: an op whose output *size* depends on
  the data (nonzero, masked_select, boolean indexing, unique, repeat_interleave…). dynamo turns
  it into a graph break (2.1-2.6 ``dynamic shape operator: aten.nonzero.default``, 2.7 on the
  ``Dynamic shape operator`` type whose Hint is the setting below), and
  ``torch._dynamo.config.capture_dynamic_output_shape_ops = True`` traces such ops into the
  graph with an unbacked size, where the op supports it (2.15's ``Dynamic shape operator (no
  meta kernel)`` is one that does not: torch's hint there is a report).
- ``DataDependentOutputException: aten._local_scalar_dense.default``: a Python number read from
  a tensor (``.item()``): ``capture_scalar_outputs = True`` captures it (torch's hint); for any
  other op (``aten.equal.default``: ``torch.equal``) torch's hint is a custom operator.
- ``GuardOnDataDependentSymNode`` (its words: "Could not guard on data-dependent expression",
  2.1-2.2's "…get a value out of symbolic int/float whose value is data-dependent", 2.3-2.5's
  "Tried to use data-dependent value"): a branch or size needed an unbacked value. A compile
  that stops on it is not "an error in torch's compiler, not in your shapes" by default: the
  data-dependent error's own finding (``dyncli.diagnose.advice``) says which expression, and
  whose code asked.
"""

from __future__ import annotations

import re

# the op an exception or a graph break names (aten.nonzero.default, aten.masked_select.default;
# a custom op's namespace too: a fake kernel's ctx.new_dynamic_size() raises the same)
_OP = r"(?P<op>[A-Za-z_]\w{0,80}\.[\w.]{1,200})"
_DYN_SHAPE_RE = re.compile(r"(?:DynamicOutputShapeException:?|[Dd]ynamic shape operator:)\s*"
                           + _OP)
# an op whose non-tensor output is the data: the exception, or torch 2.1-2.6's break ("data
# dependent operator: aten.equal.default", from 2.2 with "; to enable, set torch._dynamo.config.
# capture_scalar_outputs = True" after it, though that setting helps .item() only: 2.15's
# utils.py says so and hints a custom operator for the others)
_DATA_OUT_RE = re.compile(r"(?:DataDependentOutputException:?|data dependent operator:)\s*" + _OP)
# 2.7 on: the op in the "Dynamic shape operator" break's explanation
_OPERATOR_RE = re.compile(r"Operator `" + _OP + "`")
# torch's words for a GuardOnDataDependentSymNode, every release's
_DDE_RE = re.compile(r"GuardOnDataDependentSymNode|data-dependent expression|Tried to use "
                     r"data-dependent value|get a value out of symbolic int/float whose value "
                     r"is data-dependent")
# a traceback cut after its last frame's line: the line raises one of these (2.0.1 fake_tensor.py
# `raise DynamicOutputShapeException(func)` in dyn_shape, pytorch#106130)
_RAISES_RE = re.compile(r"^raise (?P<exc>DynamicOutputShapeException|DataDependentOutputException"
                        r"|self\._make_data_dependent_error)\(")
# 2.2-2.6's words for an op that fails with the setting on (2.15's "no meta kernel" break):
# "dynamic shape operator: aten.bincount.default; Operator does not have a meta kernel that
# supports dynamic output shapes, please report an issue to PyTorch" (_dynamo/utils.py)
_NO_META_OLD = "does not have a meta kernel that supports dynamic output shapes"
_ITEM_OPS = ("aten._local_scalar_dense.default", "aten.item.default")

_DYN_SHAPE_FIX = (
    "{what}: set torch._dynamo.config.capture_dynamic_output_shape_ops = True before compiling "
    "(torch's own answer: the op's output size becomes an unbacked size in the graph, and a "
    "branch or view on it may then ask for torch._check), or use an op whose output size does "
    "not depend on the data, or keep the op out of the compiled function; an op torch cannot "
    "trace that way even so (its 'no meta kernel' break) needs the last, and a report to torch")
_OWN_FAKE_MODE = ("; a FakeTensorMode of your own (no torch.compile) needs a ShapeEnv to give it "
                  "that size: FakeTensorMode(shape_env=ShapeEnv())")
_DDE_CRASH_FIX = (
    "the compile stopped on a data-dependent error (torch's message says so: a branch, a guard "
    "or a size needed a value read from a tensor's data): the data-dependent error's finding "
    "says which expression and where it asked; where that is your code, torch._check what you "
    "know of the value there or keep the computation on tensors; where torch's own code asked, "
    "a newer torch or a report to it")


def dynamic_shape_fix(op: str, own_mode: bool = False) -> str:
    """The fix for an op whose output size depends on the data (``op``: its aten name)."""
    what = (f"{op}'s output size depends on the tensor's data" if op else
            "an op whose output size depends on the tensor's data (nonzero, masked_select, "
            "boolean indexing, unique…) raised")
    return _DYN_SHAPE_FIX.format(what=what) + (_OWN_FAKE_MODE if own_mode else "")


def item_fix(op: str, setting: bool = True) -> str:
    """The fix for a tensor's ``.item()`` in the compiled code (``op``: torch's name of it,
    ``aten._local_scalar_dense.default``), the one place that says it: capture_scalar_outputs
    makes the graph capture the number, torch's answer wherever it names one (the
    DataDependentOutputException, 2.1-2.6's break reason "to enable, set …", pytensor#1110).
    ``setting`` False where the setting is not the answer (prime-rl#999: the backend failed on
    an ``.item()`` the graph had captured). ``op`` "": torch named the call itself a
    Tensor.item() (its warning, variables/tensor.py)."""
    what = f"{op} is a tensor's .item()" if op else "a tensor's .item()"
    if setting:
        return (f"{what}: set torch._dynamo.config.capture_scalar_outputs = True (env "
                "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1; torch's hint) so the graph captures the "
                "number, or keep the value a tensor")
    return ("keep the value a tensor, or move the .item() / .tolist() out of the compiled "
            f"function ({what}: a data-dependent Python number inside the graph)")


def data_output_fix(op: str) -> str:
    """The fix for an op whose non-tensor output is the tensor's data (``.item()``,
    ``torch.equal``)."""
    if op in _ITEM_OPS:
        return item_fix(op)
    return (f"{op} returns a Python value computed from the tensor's data, which tracing cannot "
            "know: keep it a tensor computation (torch.equal(a, b) -> (a == b).all()), or wrap "
            "the call in a custom operator (torch's hint); where torch's own code calls it "
            "(torch.quantile's check of its q, pytorch#173659), a newer torch")


def _no_meta_kernel(text: str) -> bool:
    """torch's words for an op it cannot trace with a data-dependent output size although
    capture_dynamic_output_shape_ops is on (2.15's "no meta kernel" break type, 2.2-2.6's
    sentence): the setting is set already, and torch's hint is a report."""
    return "no meta kernel" in text or _NO_META_OLD in text


def break_fix(text: str) -> str | None:
    """The fix for a graph break whose reason or type names an op of a dynamic output shape
    (torch 2.1-2.6 ``dynamic shape operator: aten.nonzero.default``, from 2.2 with torch's
    ``; to enable, set …capture_dynamic_output_shape_ops = True`` after it; 2.7 on ``Dynamic
    shape operator`` with the op in its explanation), or a data-dependent output (the
    exception, or 2.1-2.6's ``data dependent operator: aten.equal.default``); None otherwise.
    The one fix of that break, whichever words torch used."""
    if _no_meta_kernel(text):
        return None  # (torch's hint there is a report: the setting does not help)
    m = _DYN_SHAPE_RE.search(text)
    if m is not None:
        return dynamic_shape_fix(m["op"])
    if text.startswith("Dynamic shape operator"):
        found = _OPERATOR_RE.search(text)
        return dynamic_shape_fix(found["op"] if found else "")
    m = _DATA_OUT_RE.search(text)
    return data_output_fix(m["op"]) if m is not None else None


def crash_fix(text: str, last_code: str = "", last_fn: str = "") -> str | None:
    """The fix for a compile that raised one of torch's data-dependent exceptions: ``text`` is
    the exception (and its cause), ``last_code`` and ``last_fn`` the deepest frame's line and
    function where the paste cut the traceback before its exception; None where neither names
    one."""
    if _no_meta_kernel(text):
        return None  # (as break_fix: the setting is on already; torch's hint is a report)
    m = _DYN_SHAPE_RE.search(text)
    if m is not None:
        return dynamic_shape_fix(m["op"])
    m = _DATA_OUT_RE.search(text)
    if m is not None:
        return data_output_fix(m["op"])
    if _DDE_RE.search(text):
        return _DDE_CRASH_FIX
    raised = _RAISES_RE.match(last_code.strip())
    if raised is None:
        return None
    if raised["exc"] == "DynamicOutputShapeException" and last_fn == "dyn_shape":
        # fake_impls' dyn_shape raises for an op the release has no data-dependent-size kernel
        # for, whatever the settings: nonzero in 2.0 (pytorch#106130), in 2.15 the ops other
        # than nonzero, boolean indexing and repeat_interleave without one
        return ("the traceback ends in torch's fake tensors' dyn_shape, which raises "
                "DynamicOutputShapeException for an op whose output size depends on the data "
                "and that this release cannot trace with such a size, whatever the settings: "
                "keep the op out of the compiled (or traced) function, or a newer torch; for "
                "nonzero, masked_select and boolean indexing torch 2.1 on traces them with "
                "capture_dynamic_output_shape_ops = True (a FakeTensorMode of your own needs a "
                "ShapeEnv: FakeTensorMode(shape_env=ShapeEnv()))")
    if raised["exc"] == "DynamicOutputShapeException":
        return ("the traceback ends where torch's fake tensors raise DynamicOutputShapeException "
                "(the exception's line is past the end of the paste): " +
                dynamic_shape_fix("", own_mode=True))
    if raised["exc"] == "DataDependentOutputException":
        return ("the traceback ends where torch's fake tensors raise "
                "DataDependentOutputException: an op returned a Python value computed from the "
                "data (.item(): capture_scalar_outputs = True; any other: keep it a tensor "
                "computation, or a custom operator); the exception's line, past the end of the "
                "paste, names the op")
    return ("the traceback ends where torch raises GuardOnDataDependentSymNode (a branch, a "
            "guard or a size needed a value read from a tensor's data): the exception's message, "
            "past the end of the paste, names the expression and the line that asked (paste it); "
            "the fix is there: torch._check what you know of the value, or keep the computation "
            "on tensors")

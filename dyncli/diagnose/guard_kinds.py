"""What each kind of failed guard means to a person, and the fix that kind has (issue 33).

torch names the guard that failed; ``dyncli.logparse.guardtext.checked`` reads which kind it
is. Sizes and Python numbers have the allow-list rules (``advice``, ``size_changes``); every
other kind changes something no dynamic-shape setting covers, and its fix is to keep that
thing the same across calls, or to know why it changes. One row per kind: a new kind torch
writes is one more row here and one more test in ``guardtext.checked``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyncli.logparse.guardtext import Checked


@dataclass(frozen=True)
class KindText:
    """``what``: the change, for a sentence ("an object's identity changed"); ``fix``."""

    what: str
    fix: str


KINDS: dict[str, KindText] = {
    Checked.STRIDE: KindText(
        "a tensor's strides changed (its layout: a view, a transpose, channels-last), not its "
        "size", "pass tensors of one layout (call .contiguous() before the compiled call); a "
        "parameter's strides changed by the backend itself (inductor's layout optimization: "
        "TORCHINDUCTOR_LAYOUT_OPTIMIZATION=0) are a torch issue"),
    Checked.VALUE: KindText(
        "a Python value the code reads changed (a string, a tuple, a length, dict keys)",
        "keep it the same across calls, or move it out of the compiled function; each new "
        "value compiles again and no dynamic-shape setting covers it"),
    Checked.IDENTITY: KindText(
        "an object's identity changed (the function is guarded on which module, processor or "
        "function it got)", "pass the same object on every call (do not re-create or re-assign "
        "it between calls)"),
    Checked.TYPE: KindText(
        "an input's type changed (another class at the same place)",
        "pass objects of one class at that place"),
    Checked.GLOBAL_STATE: KindText(
        "global state changed between calls (grad mode, inference mode, autocast, default "
        "dtype or device)", "call the compiled function under one mode (e.g. always inside "
        "torch.no_grad(), or never)"),
    Checked.BACKEND: KindText(
        "the compiled code came from another backend or another torch.compile call",
        "compile the function once, with one backend, and call that"),
    Checked.DTYPE: KindText("a tensor's dtype changed", "pass tensors of one dtype"),
    Checked.DEVICE: KindText("a tensor's device changed", "pass tensors on one device"),
    Checked.REQUIRES_GRAD: KindText("a tensor's requires_grad changed",
                                    "pass tensors with the same requires_grad"),
    Checked.RANK: KindText("a tensor's number of dimensions changed",
                           "pass tensors of one rank (each rank compiles its own graph)"),
    Checked.TENSOR: KindText(
        "a tensor's properties changed (size, stride, dtype or device: torchdynamo's "
        "___check_tensors does not say which)",
        'a newer torch, or TORCH_LOGS="recompiles", names which property changed'),
    Checked.GUARD_ERROR: KindText(
        "torch's own guard failed to run (a torch bug, not a change of your inputs)",
        "upgrade torch or report it: the guard code torch generated raised an error"),
    Checked.UNKNOWN: KindText(
        "torch named no guard here (or the paste cut the reason off)",
        'TORCH_LOGS="recompiles_verbose" names every failed guard'),
    Checked.OTHER: KindText("a non-shape guard failed",
                            "keep the guarded property constant across calls"),
}
SHAPES = frozenset({Checked.SIZE, Checked.SCALAR})  # the kinds the allow-list rules handle


def text(kind: str) -> KindText:
    """The row of ``kind`` (``other``'s for a kind this table does not know)."""
    return KINDS.get(kind) or KINDS[Checked.OTHER]

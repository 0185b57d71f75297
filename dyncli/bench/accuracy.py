"""Compare compiled outputs with eager ones, as the PyTorch harness's ``same`` does.

Both outputs are flattened (tensors inside tuples, lists, dicts and HF ``ModelOutput``s, in
order; other objects through ``torch.utils._pytree`` when it knows them, else skipped). Floating tensors pass when ``torch.allclose`` holds with the tolerance of their dtype,
or — the fallback for deep random-weight models whose values grow large — when the cosine
similarity of the flattened tensors is at least ``COSINE_MIN`` and their norms differ by at
most ``1 - COSINE_MIN``. Other tensors must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

TOLERANCE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 4e-2, "float64": 1e-6}
COSINE_MIN = 0.99


@dataclass(frozen=True)
class Verdict:
    """Whether outputs matched, and if not, why (first mismatch)."""

    ok: bool
    detail: str = ""


def flatten(obj: Any) -> list[Any]:
    """Leaves of nested outputs in a stable order; non-tensor scalars are kept too."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):  # HF ModelOutput is an OrderedDict subclass
        return [leaf for key in obj for leaf in flatten(obj[key])]
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in flatten(item)]
    if obj is None:
        return []
    if isinstance(obj, (int, float, bool, str)):
        return [obj]
    # Other objects (e.g. a transformers DynamicCache): their tensors when pytree knows the
    # type, else nothing — an object's identity is never comparable between eager and compiled.
    from torch.utils import _pytree

    leaves = _pytree.tree_leaves(obj)
    if len(leaves) == 1 and leaves[0] is obj:
        return []
    return [leaf for leaf in leaves if isinstance(leaf, (torch.Tensor, int, float, bool, str))]


def _tol(t: torch.Tensor) -> float:
    return TOLERANCE.get(str(t.dtype).removeprefix("torch."), 1e-3)


def compare_tensors(ref: torch.Tensor, res: torch.Tensor) -> Verdict:
    """One pair: shapes, then allclose with dtype tolerance, then the cosine fallback."""
    import torch

    if ref.shape != res.shape:
        return Verdict(False, f"shape {tuple(res.shape)} != eager {tuple(ref.shape)}")
    if not ref.is_floating_point():
        same = bool(torch.equal(ref.cpu(), res.cpu()))
        return Verdict(same, "" if same else "integer/bool outputs differ")
    if ref.numel() == 0:
        return Verdict(True)
    tol = _tol(ref)
    r, s = ref.detach().float().cpu(), res.detach().float().cpu()
    if bool(torch.isnan(r).any()) or bool(torch.isnan(s).any()):
        both = bool(torch.equal(torch.isnan(r), torch.isnan(s)))
        if not both:
            return Verdict(False, "NaN in one output only")
        keep = ~torch.isnan(r)
        r, s = r[keep], s[keep]
        if r.numel() == 0:
            return Verdict(True)
    if torch.allclose(r, s, atol=tol, rtol=tol):
        return Verdict(True)
    rf, sf = r.flatten().double(), s.flatten().double()
    cos = float(torch.nn.functional.cosine_similarity(rf, sf, dim=0, eps=1e-12))
    # cosine is blind to scale, and a 1-element tensor's is only its sign: a batch mean that
    # padding moved by 25 % had cosine 1.0 and passed. The norms must agree as closely.
    rn, sn = float(rf.norm()), float(sf.norm())
    scale = sn / rn if rn > 0 else float("inf")
    if cos >= COSINE_MIN and abs(scale - 1) <= 1 - COSINE_MIN:
        return Verdict(True, f"allclose failed at tol {tol:g}; cosine similarity {cos:.5f}")
    err = float((r - s).abs().max())
    return Verdict(False, f"max abs error {err:.3g} at tol {tol:g}; cosine similarity {cos:.4f}"
                   + ("" if abs(scale - 1) <= 1 - COSINE_MIN else f", norm ratio {scale:.3g}"))


def compare(ref: Any, res: Any) -> Verdict:
    """Compare two whole outputs (any nesting of tensors); the first mismatch decides."""
    import torch

    a, b = flatten(ref), flatten(res)
    if len(a) != len(b):
        return Verdict(False, f"{len(b)} outputs, eager gave {len(a)}")
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            v = compare_tensors(x, y)
        elif isinstance(x, float) and isinstance(y, float):
            v = Verdict(abs(x - y) <= 1e-3 * max(1.0, abs(x)), f"{y} != eager {x}")
        else:
            v = Verdict(type(x) is type(y) and x == y, f"{y!r} != eager {x!r}")
        if not v.ok:
            return Verdict(False, f"output {i}: {v.detail}")
    return Verdict(True)

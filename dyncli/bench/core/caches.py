"""The compile caches bench states and counts, and how a compile's cache hits read. No torch.

Each strategy's measurement and its replay start from one stated cache state
(:class:`CacheState`): ``fresh`` (the default) gives every strategy directories of its own,
empty — inductor's (``TORCHINDUCTOR_CACHE_DIR``: the FX graph cache, the AOTAutograd cache,
compiled kernels, autotuning results, PGO state) and Triton's (``TRITON_CACHE_DIR``) — with
inductor's in-memory caches cleared before and after and its remote caches off; ``warm``
(``--warm-cache``) uses the user's own directories as found, so a compile may be served from an
entry an earlier run or strategy left there.

Which caches served a compile is read from torch's own counters (:data:`COUNTED`: the key in
``torch._dynamo.utils.counters`` and the first release that counts it) as the change across the
compile: a variation's ``cache_hits``. :func:`label` is the one wording of them, shown beside
the compile seconds wherever those are shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from dyncli.bench.core import fields as f
from dyncli.words import counted, noun

FRESH, WARM = "fresh", "warm"


class Counted(NamedTuple):
    """One cache whose hits torch counts."""

    name: str  # the key in a variation's ``cache_hits``
    group: str  # torch._dynamo.utils.counters[group][key]
    key: str
    label: str  # as the tables say it
    since: str  # the first torch release that counts it


COUNTED: tuple[Counted, ...] = (
    # torch/_inductor/codecache.py FxGraphCache (2.4 on; on by default from 2.4)
    Counted("fxgraph", "inductor", "fxgraph_cache_hit", "FX graph", "2.4"),
    # torch/_functorch/_aot_autograd/autograd_cache.py (2.6 on; off by default in 2.6)
    Counted("aotautograd", "aot_autograd", "autograd_cache_hit", "AOTAutograd", "2.6"),
    # torch/_inductor/async_compile.py AsyncCompile.triton: a Triton kernel this process had
    # already compiled (CompiledTritonKernels, 2.7 on); GPU only, none on CPU. Triton's on-disk
    # cache and autotuning results count nothing in torch: bench empties them (fresh) instead.
    Counted("triton", "inductor", "async_compile_cache_hit", "Triton kernel", "2.7"),
)


@dataclass(frozen=True)
class CacheState:
    """The cache state every strategy's compiles (measurement and replay) start from.

    ``inductor_dir``/``triton_dir``: the user's directories (``warm``); None under ``fresh``,
    where each strategy gets empty ones of its own, removed after it.
    """

    state: str = FRESH
    inductor_dir: str | None = None
    triton_dir: str | None = None

    @property
    def fresh(self) -> bool:
        """Whether each strategy starts from empty caches of its own."""
        return self.state == FRESH

    def words(self) -> str:
        """One line for the terminal."""
        if self.fresh:
            return ("caches: each strategy's measurement and replay compiled from empty "
                    "caches of its own (inductor's FX graph, AOTAutograd, kernels and "
                    "autotuning; Triton's)")
        return (f"caches: warm, the user's own (inductor {self.inductor_dir or '-'}, Triton "
                f"{self.triton_dir or '-'}): compiles an earlier run or strategy left there "
                "are cache hits, labelled where compile seconds are shown")

    def to_dict(self) -> dict[str, Any]:
        """The ``measured.caches`` object."""
        return {"state": self.state, "inductor_dir": self.inductor_dir,
                "triton_dir": self.triton_dir}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CacheState:
        """Read ``measured.caches`` back."""
        return cls(f.text(d.get("state"), FRESH), f.opt_text(d.get("inductor_dir")),
                   f.opt_text(d.get("triton_dir")))


def delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The hits between two readings of the counters, only the caches that were hit."""
    return {k: n for k, v in after.items() if (n := v - before.get(k, 0)) > 0}


def total(hits: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Several compiles' hits added up (a strategy's, from its variations')."""
    out: dict[str, int] = {}
    for h in hits:
        for k, n in h.items():
            out[k] = out.get(k, 0) + n
    return out


def label(hits: Mapping[str, int], count: bool = False) -> str:
    """``FX graph hit``, ``FX graph+AOTAutograd hits``; with ``count``: ``3 FX graph hits``
    (the largest count: one compile can hit several caches). Empty when nothing was hit."""
    names = {c.name: c.label for c in COUNTED}
    order = list(names)
    hit = sorted((k for k in hits if hits[k] > 0),
                 key=lambda k: (order.index(k) if k in names else len(order), k))
    if not hit:
        return ""
    n = max(hits[k] for k in hit)
    what = "+".join(names.get(k, k) for k in hit)
    if count:
        return counted(n, f"{what} hit")
    return f"{what} {noun(len(hit), 'hit')}"


def read_hits(d: object) -> dict[str, int]:
    """A ``cache_hits`` object read back (non-integer or non-positive values left out)."""
    if not isinstance(d, dict):
        return {}
    return {str(k): v for k, v in d.items()
            if isinstance(v, int) and not isinstance(v, bool) and v > 0}

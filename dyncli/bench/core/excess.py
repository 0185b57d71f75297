"""A strategy that compiled more often than its definition implies, and why. No torch.

A row's definition bounds its graphs: ``dynamic=True``, marked dims and an allow-list compile
each frame once; automatic dynamic (and its ``unbacked`` and PGO variants, and
``eager_then_compile``) at most twice (static first, then what changed made dynamic); static
and padded rows once per distinct (padded) shape, so no bound. Frames are counted at the
stream's first shape (a model with graph breaks has several). Past the bound, torch's own
reasons say why: on torch 2.15, ``unbacked`` on an HF BERT compiled 7 graphs where 2 were due,
because ``transformers/integrations/sdpa_attention.py`` evaluates ``q_length > 1`` on the
unbacked length ("Could not guard on data-dependent expression u0 > 1"): dynamo skipped the
frame and fell back to eager, so every new length recompiled the frames around it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dyncli.bench.core.strategy import Strategy
from dyncli.logparse.safe import clip


def per_frame(row: Strategy) -> int | None:
    """How many graphs per frame ``row`` implies on any stream; None: one per shape."""
    if not row.compiles or row.dynamic is False or row.pads:
        return None
    if row.dynamic is True or row.marks or row.params:
        return 1
    return 2  # automatic dynamic: static first, then the dims that changed made dynamic


def first_line(text: str) -> str:
    """A reason's first non-blank line, clipped (torch's messages run to pages)."""
    return clip(next((ln.strip() for ln in text.splitlines() if ln.strip()), ""), 160)


def excess(row: Strategy, compiles: int, first_shape: int,
           breaks: Mapping[str, int], recompiles: Sequence[str],
           label: str | None = None) -> str | None:
    """One line when ``compiles`` exceeds what ``row`` implies, with torch's reasons; else None.

    ``first_shape``: graphs compiled at the stream's first shape (frames); ``breaks``: torch's
    graph-break and unsupported messages counted during the walk; ``recompiles``: the recompile
    reasons in stream order; ``label``: the run's name (``automatic@max-autotune``: under two
    compile modes the strategy's name alone said the same line twice).
    """
    k = per_frame(row)
    if k is None or first_shape < 1:
        return None
    bound = k * first_shape
    if compiles <= bound:
        return None
    why = [first_line(m) for m, _ in sorted(breaks.items(), key=lambda kv: -kv[1])[:2]]
    if not why and recompiles:
        why = [first_line(recompiles[-1])]
    line = (f"{label or row.name} compiled {compiles} graphs where its definition implies at most "
            f"{bound} ({first_shape} frame(s) x {k})")
    return line + (": torch says " + "; ".join(f"'{w}'" for w in why) if why else "")

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

The bound follows the stream where bench knows its shapes (the varied dims of each variation,
in the order they compiled): torch specializes a size of 0 or 1 even where the dim is dynamic
(``dynamic=True``, a mark, an allow-list, automatic dynamic; not an unbacked one), so each
pattern of 0s and 1s among the dynamic dims is a graph of its own; and automatic dynamic makes a
dim dynamic when it first differs from the first shape's, so dims that change at different
requests cost a compile each. Before round 34 the bound was 1 or 2 per frame: a stream with
batch 1 in it warned of "2 graphs where its definition implies at most 1" under ``dynamic``
(torch 2.4.1, GPT-2, batch 1, 2, 4 and 8), which is torch's documented 0/1 specialization, not
an excess.
"""

from __future__ import annotations

import re
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


Shape = tuple[int | None, ...]  # a variation's varied dims (batch, sequence): None not varied


def implied(row: Strategy, shapes: Sequence[Shape]) -> int | None:
    """Graphs per frame that ``row`` implies on ``shapes`` (the stream's distinct shapes in the
    order they compiled); None: one per shape (no bound). ``dynamic=True``, marks and
    allow-lists: one per pattern of 0s and 1s among the dims that vary. Automatic dynamic: the
    first shape static, then a graph each time a dim first differs from the first shape's (it
    becomes dynamic) and for each new pattern of 0s and 1s among the dynamic dims."""
    return _implied(row, shapes, row.specializes_zero_one)


def _implied(row: Strategy, shapes: Sequence[Shape], special: bool) -> int | None:
    """:func:`implied`, with sizes 0 and 1 specialized or not (``special``)."""
    k = per_frame(row)
    if k is None:
        return None
    if not shapes:
        return k
    first = shapes[0]
    if any(len(s) != len(first) for s in shapes):
        return None  # (not bench's variations, which name the same dims: nothing to follow)

    def pattern(shape: Shape, dims: frozenset[int]) -> tuple[tuple[int, int | None], ...]:
        return tuple((d, shape[d]) for d in sorted(dims) if special and shape[d] in (0, 1))

    if k == 1:
        varied = frozenset(d for d in range(len(first)) if len({s[d] for s in shapes}) > 1)
        return max(1, len({pattern(s, varied) for s in shapes}))
    dynamic = frozenset[int]()
    seen: set[tuple[frozenset[int], tuple[tuple[int, int | None], ...]]] = set()
    for shape in shapes[1:]:
        changed = frozenset(d for d, (a, b) in enumerate(zip(shape, first, strict=True)) if a != b)
        if not changed and not dynamic:
            continue  # the first shape again: its static graph
        dynamic |= changed
        seen.add((dynamic, pattern(shape, dynamic)))
    return 1 + len(seen)


def raised_by(row: Strategy, shapes: Sequence[Shape]) -> list[str]:
    """What raised :func:`implied` above :func:`per_frame` on ``shapes``, in words: sizes 0
    and 1 specialized (never under an unbacked row, which specializes none), automatic dynamic's
    dims made dynamic at different shapes (a compile each). Only what applied is said: the
    DistilBERT stream (1, 16), (1, 24), (2, 16) under ``unbacked`` read "sizes 0 and 1
    specialized" (round 34), which torch does not do there."""
    base, k = per_frame(row), implied(row, shapes)
    if base is None or k is None or k <= base:
        return []
    plain = _implied(row, shapes, special=False)
    why = ["sizes 0 and 1 specialized"] if plain is not None and k > plain else []
    if base == 2 and plain is not None and plain > base:
        why.append("each dim made dynamic as it first changed")
    return why


# Reasons the bound already counts: a static entry's size or stride failing (the first shape's
# graph, a 0/1 one) and a dynamic graph's lower bound of 2 failing at a size of 0 or 1.
_COUNTED = re.compile(r"(?:size|stride) mismatch|^(?:- )?(?:\d+/\d+: )?2 <= \S+\.size\(\)\[\d+\]"
                      r"\s*(?:#|$)")


def telling(recompiles: Sequence[str]) -> list[str]:
    """At most two of ``recompiles`` (stream order) that say why a strategy went past its
    bound: those the bound does not already count, else the last one. Round 35: torch 2.4.1's
    one-layer GPT-2 over (1, 17), (2, 33), (4, 16) … under ``dynamic`` compiled 3 graphs (bound
    2) because the dynamic graph guarded ``Ne(…num_heads*(64//…num_heads), batch*seq)`` and 4 x
    16 is 64; the warning quoted the last reason, the batch-1 graph's "size mismatch at index
    0. expected 1, actual 4", which the bound had counted."""
    told = [first_line(r) for r in recompiles if not _COUNTED.search(first_line(r))]
    return list(dict.fromkeys(told))[:2] or ([first_line(recompiles[-1])] if recompiles else [])


def first_line(text: str) -> str:
    """A reason's first non-blank line, clipped (torch's messages run to pages)."""
    return clip(next((ln.strip() for ln in text.splitlines() if ln.strip()), ""), 160)


def excess(row: Strategy, compiles: int, first_shape: int,
           breaks: Mapping[str, int], recompiles: Sequence[str],
           label: str | None = None, shapes: Sequence[Shape] = ()) -> str | None:
    """One line when ``compiles`` exceeds what ``row`` implies, with torch's reasons; else None.

    ``first_shape``: graphs compiled at the stream's first shape (frames); ``breaks``: torch's
    graph-break and unsupported messages counted during the walk; ``recompiles``: the recompile
    reasons in stream order; ``label``: the run's name (``automatic@max-autotune``: under two
    compile modes the strategy's name alone said the same line twice); ``shapes``: the
    variations' varied dims in the order they compiled (:func:`implied`; without them the
    bound is 1 or 2 per frame, as if no size were 0 or 1).
    """
    k = implied(row, shapes)
    if k is None or first_shape < 1:
        return None
    bound = k * first_shape
    if compiles <= bound:
        return None
    why = [first_line(m) for m, _ in sorted(breaks.items(), key=lambda kv: -kv[1])[:2]]
    if not why:
        why = telling(recompiles)
    # (where the stream's sizes of 0 or 1, or dims changing apart, raised the bound: say which)
    raised = raised_by(row, shapes)
    how = f" on this stream: {', '.join(raised)}" if raised else ""
    line = (f"{label or row.name} compiled {compiles} graphs where its definition implies at most "
            f"{bound} ({first_shape} frame(s) x {k}{how})")
    return line + (": torch says " + "; ".join(f"'{w}'" for w in why) if why else "")

"""What to measure: the request stream (``--shapes``, ``--sizes`` or the seeded plan). No torch.

:func:`user_stream` reads the user's traffic (a bad file fails before any work);
:func:`stream_plan` turns it, or the seeded plan, into the distinct shapes to measure and the
request order that :mod:`dyncli.bench.core.recommend` costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dyncli.bench.core import stream_file as stream
from dyncli.bench.core.shapes import Variation, plan_variations
from dyncli.bench.core.stream_file import Shape, StreamError
from dyncli.config import BenchConfig
from dyncli.errors import InputError, UsageError

MAX_SHAPES_BYTES = 64 << 20  # a million one-request rows of batch and seq is ~15 MB


def read_shapes(path: str) -> list[Shape]:
    """The requests of a ``--shapes`` file; ``InputError`` naming the file when it is bad."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a shapes file")
    try:
        with p.open("rb") as fh:  # read at most the bound (a FIFO or /dev/zero has no size)
            data = fh.read(MAX_SHAPES_BYTES + 1)
        if len(data) > MAX_SHAPES_BYTES:
            raise InputError(f"{path}: over {MAX_SHAPES_BYTES >> 20} MB, more than a stream of "
                             f"{stream.MAX_REQUESTS:,} requests needs",
                             hint="Give each shape once with a count column")
        text = data.decode("utf-8-sig")  # (a BOM: Excel's "CSV UTF-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such shapes file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    try:
        return stream.parse_stream(text, path)
    except StreamError as e:
        raise InputError(str(e), hint="CSV with a header row (batch,seq,count) or JSON lines "
                                      "like {\"batch\": 8, \"count\": 3}") from None


def user_stream(cfg: BenchConfig) -> tuple[list[Shape], str] | None:
    """The stream from ``--shapes`` or ``--sizes`` (None: use the seeded plan)."""
    if cfg.shapes:
        return read_shapes(cfg.shapes), cfg.shapes
    if cfg.sizes:
        try:
            return stream.parse_sizes(cfg.sizes), "sizes"
        except StreamError as e:
            raise UsageError(str(e)) from None
    return None


def fill_sizes(requests: list[Shape], base_batch: int, base_seq: int | None,
            n: int | None) -> list[tuple[int, int | None]]:
    """Requests with the model's base sizes filled in, cycled or cut to ``n``."""
    try:
        fitted = stream.fit(requests, n)
    except StreamError as e:
        raise UsageError(str(e)) from None
    return [(b if b is not None else base_batch, s if s is not None else base_seq)
            for b, s in fitted]


@dataclass(frozen=True)
class StreamPlan:
    """The shapes to measure and the requests that use them.

    ``variations``: the distinct shapes, measured once per strategy; ``ids[r]``: the
    variation request ``r`` uses; ``source``: plan | sizes | the ``--shapes`` path.
    """

    variations: list[Variation]
    ids: list[int]
    source: str


def stream_plan(cfg: BenchConfig, name: str, model_batch: int, model_seq: int | None,
                given: tuple[list[Shape], str] | None) -> StreamPlan:
    """The variations to measure (distinct shapes) and each request's variation.

    Default: the seeded plan, one request per variation (repeated draws stay separate
    variations, as before). With --shapes/--sizes: the distinct shapes in first-sight order.
    """
    base_batch = cfg.batch_size or model_batch
    if given is None:
        plan = plan_variations(base_batch, cfg.variations, cfg.spread, cfg.seed, cfg.vary,
                               model_seq)
        n = cfg.requests if cfg.requests is not None else len(plan)
        plan = plan[:n]
        return StreamPlan(plan, [i % len(plan) for i in range(n)], "plan")
    requests, source = given
    if any(s is not None for _, s in requests) and model_seq is None:
        raise UsageError(f"{source}: gives seq, but {name} has no sequence dim "
                         "(only hf: text and audio models do)")
    resolved = fill_sizes(requests, base_batch, model_seq, cfg.requests)
    shapes, ids = stream.distinct(resolved)
    return StreamPlan([Variation(i, b if b is not None else base_batch, s)
                       for i, (b, s) in enumerate(shapes)], ids, source)

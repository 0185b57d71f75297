"""Reading one side of a comparison: a dyncli bench JSON document, or a CSV (``dyncli bench
--csv``'s, or the PyTorch harness's ``--output``).

An input is a file (gzip by its magic bytes) or ``-`` for stdin, of at most
``MAX_RESULT_BYTES`` (256 MB), in UTF-8; it is read as JSON when its first character other
than a blank is ``{``, else as a CSV. Anything else (empty, too big, not UTF-8, not valid JSON,
not a bench document, a CSV without ``name`` and ``speedup`` or ``abs_latency``) is one
``InputError`` naming the file (exit 2).

Every input becomes a :class:`Side`: records keyed by (model, strategy, mode). The strategy
carries its compile mode unless that is the default (``automatic@reduce-overhead``: a
document or CSV from before compile modes measured the default mode, and joins as it). Model
names are joined without dyncli's ``timm:``/``hf:`` prefixes, so ``timm:convnext_tiny`` meets
the harness's ``convnext_tiny``; of two runs that meet at one key (``timm:X`` beside a
torchvision ``X``) the second keeps its full name. A ``None`` strategy (a CSV without a
``strategy`` column: the harness's) joins every strategy of the same model on the other side,
and a ``None`` mode (a file that does not say inference or training) every mode
(``compare.api``'s join).

A JSON document (``BenchResult.from_dict``; runs of the wrong shape are left out and counted in
``Side.left_out``) gives one record per run, with its raw samples per variation: its speedup
and compiled latency are the medians over the variations that kept eager and compiled samples,
computed from those samples (where none did, the medians of the variations' own figures), with its compiles,
compile seconds, first result's seconds, and the document's device, torch and ``load``.

A CSV's columns read: ``name``, ``speedup``, ``abs_latency`` (ms), ``compilation_latency`` (s),
``unique_graphs``, ``status`` or ``accuracy``, ``mode``, ``dev`` (the device, from the first
row), and dyncli's ``strategy`` and ``compile_mode``. The rows of one (model, strategy, mode)
(batch sizes, repeated runs, dyncli's one row per variation) become one record: speedup and
latency their medians, graphs their maximum, the status the first that is not a pass, compile
seconds summed for dyncli's CSV (each row one variation's) and the median for the harness's
(which repeats one whole-run figure per row). A CSV has no raw samples, so no p-value.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyncli.bench.core import strategy as table
from dyncli.bench.core.result import BenchResult, RunResult
from dyncli.bench.core.stats import finite_median, median, speedup
from dyncli.bench.core.status import Status
from dyncli.errors import InputError
from dyncli.inputs import display_name, open_input
from dyncli.logparse.safe import clip, loads

PREFIXES = ("timm:", "hf:")
# (model, strategy, mode): a file may hold one model's inference and training rows
Key = tuple[str, "str | None", "str | None"]


@dataclass
class Samples:
    """One variation's raw timings (ms), paired as they were interleaved."""

    shape: str
    eager: list[float]
    compiled: list[float]


@dataclass
class Record:
    """One (model, strategy, mode) of one side, summarized; ``variations`` holds the raw samples."""

    model: str
    strategy: str | None
    status: str = Status.PASS  # a harness CSV may hold statuses dyncli does not know
    speedup: float = math.nan
    compiled_ms: float = math.nan
    compiles: int | None = None
    compile_s: float | None = None
    first_result_s: float | None = None
    variations: dict[str, Samples] = field(default_factory=dict)
    mode: str | None = None  # inference or training; None: the file does not say (harness CSV)

    @property
    def has_samples(self) -> bool:
        """Whether any variation kept at least two compiled samples."""
        return any(len(v.compiled) >= 2 for v in self.variations.values())


@dataclass
class Side:
    """One input file: what it is and its records."""

    path: str
    kind: str  # "dyncli-json", "dyncli-csv" or "harness-csv"
    records: dict[Key, Record]
    device: str | None = None
    torch: str | None = None
    left_out: int = 0  # runs of a JSON document not in the shape of a bench run
    load: dict[str, Any] | None = None  # a bench document's ``load`` (machine and eager probe)

    @property
    def has_samples(self) -> bool:
        """Whether this kind of input carries raw samples at all."""
        return self.kind == "dyncli-json"


def model_key(name: str) -> str:
    """The join name of a model: dyncli's source prefixes dropped."""
    for prefix in PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


# A suite of 30 models x 9 strategies with raw samples is a few MB; past this it is not a result.
MAX_RESULT_BYTES = 256 << 20


def read(path: str | Path) -> Side:
    """Read one side; ``InputError`` (exit 2) naming the file for anything unreadable.

    Whatever the file holds (wrong types, huge numbers, deep nesting), reading it either
    gives a :class:`Side` or raises ``InputError``; a run or variation of the wrong shape is
    left out, a value of the wrong type reads as missing.
    """
    name = display_name(path)
    chunks: list[bytes] = []
    size = 0
    with open_input(path, check_text=False) as source:
        for chunk in source.lines():
            size += len(chunk)
            if size > MAX_RESULT_BYTES:
                raise InputError(f"{name}: over {MAX_RESULT_BYTES >> 20} MB, "
                                 "not a benchmark result")
            chunks.append(chunk)
    data = b"".join(chunks)
    if not data.strip():
        raise InputError(f"{name}: is empty, not a benchmark result")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 text, not a benchmark result "
                         f"({e.reason} at byte {e.start})") from None
    if text.lstrip().startswith("{"):
        return _from_json(name, text)
    return _from_csv(name, text)


# ---------------------------------------------------------------- dyncli JSON


def _from_json(name: str, text: str) -> Side:
    try:
        doc = loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # an int over 4,300 digits; nesting too deep
        raise InputError(f"{name}: not a benchmark result ({clip(str(e), 200)})") from None
    try:
        result = BenchResult.from_dict(doc if isinstance(doc, dict) else {})
    except ValueError as e:
        raise InputError(f"{name}: {clip(str(e), 200)}",
                         hint="Make one with: dyncli bench MODEL --json FILE "
                              "(or --suite NAME --json FILE)") from None
    records: dict[Key, Record] = {}
    for run in result.runs:
        rec = _record(run)
        key = (model_key(rec.model), rec.strategy, rec.mode)
        if key in records:  # timm:X beside a torchvision X: keep both, the second by full name
            key = (rec.model, rec.strategy, rec.mode)
        records[key] = rec
    env = result.environment
    return Side(name, "dyncli-json", records, env.device or None, env.torch or None,
                result.left_out, result.load)


def _finite(xs: list[float]) -> list[float]:
    return [x for x in xs if math.isfinite(x)]


def _record(run: RunResult) -> Record:
    rec = Record(run.model, run.label, run.status, mode=run.mode or None)
    rec.speedup = finite_median([v.speedup for v in run.variations if v.timed])
    rec.compiled_ms = finite_median([v.compiled_ms for v in run.variations])
    rec.compiles = run.compiles if run.compiles >= 0 else None
    rec.compile_s = run.compile_time_s if math.isfinite(run.compile_time_s) else None
    if run.variations:
        first = run.variations[0].first_call_s
        rec.first_result_s = first if math.isfinite(first) else None
    for v in run.variations:
        shape = json.dumps(v.shapes, sort_keys=True)
        rec.variations[f"{v.index}:{shape}"] = Samples(shape, _finite(v.eager_samples),
                                                       _finite(v.compiled_samples))
    timed = [s for s in rec.variations.values() if s.eager and s.compiled]
    if timed:  # the samples are the measurement: summaries are recomputed from them
        rec.compiled_ms = finite_median([median(s.compiled) for s in timed])
        rec.speedup = finite_median([speedup(s.eager, s.compiled) for s in timed])
    return rec


# ---------------------------------------------------------------- CSV


def _cell(row: dict[str, str | None], col: str) -> float:
    text = (row.get(col) or "").strip()
    try:
        return float(text)
    except ValueError:
        return math.nan


def _from_csv(name: str, text: str) -> Side:
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as e:
        raise InputError(f"{name}: not a readable CSV ({e})") from None
    columns = set(rows[0]) if rows else set()
    if "name" not in columns or not ({"speedup", "abs_latency"} & columns):
        raise InputError(f"{name}: neither a dyncli bench JSON nor a benchmark CSV "
                         "(needs columns name and speedup or abs_latency)",
                         hint="Pass dyncli bench --json output, dyncli bench --csv output or "
                              "the PyTorch harness's --output CSV")
    has_strategy = "strategy" in columns
    groups: dict[Key, list[dict[str, str | None]]] = {}
    for row in rows:
        model = (row.get("name") or "").strip()
        if not model:
            continue
        strategy = (row.get("strategy") or "").strip() or None if has_strategy else None
        if strategy is not None:
            strategy = table.label(strategy, (row.get("compile_mode") or "").strip()
                                   or table.DEFAULT_MODE)
        groups.setdefault((model, strategy, (row.get("mode") or "").strip() or None),
                          []).append(row)
    records: dict[Key, Record] = {}
    for (model, strategy, mode), group in groups.items():
        rec = Record(model, strategy, mode=mode)
        statuses = [(r.get("status") or r.get("accuracy") or Status.PASS).strip() for r in group]
        rec.status = next((s for s in statuses if s != Status.PASS), Status.PASS)
        rec.speedup = finite_median([_cell(r, "speedup") for r in group])
        rec.compiled_ms = finite_median([_cell(r, "abs_latency") for r in group])
        graphs = [_cell(r, "unique_graphs") for r in group]
        graphs = [g for g in graphs if math.isfinite(g)]
        rec.compiles = int(max(graphs)) if graphs else None
        compile_s = [_cell(r, "compilation_latency") for r in group]
        # dyncli's CSV has one row per variation (its compile seconds add up); the harness
        # repeats one model's whole-run figure per row (its median is the figure).
        total = sum(c for c in compile_s if math.isfinite(c)) if has_strategy else finite_median(compile_s)
        rec.compile_s = total if math.isfinite(total) else None
        records[(model_key(model), strategy, mode)] = rec
    first = rows[0] if rows else {}
    return Side(name, "dyncli-csv" if has_strategy else "harness-csv", records,
                (first.get("dev") or None))

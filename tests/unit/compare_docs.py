"""Synthetic dyncli bench documents for the compare tests: seeded lognormal samples, no torch."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any


def variation(index: int, batch: int, rng: random.Random, eager_ms: float, compiled_ms: float,
              n: int = 10, compiles: int = 0, first_call_s: float = 0.05) -> dict[str, Any]:
    eager = [eager_ms * rng.lognormvariate(0, 0.03) for _ in range(n)]
    compiled = [compiled_ms * rng.lognormvariate(0, 0.03) for _ in range(n)]
    return {"index": index, "batch_size": batch, "seq_len": None, "shapes": {"0": [batch, 32]},
            "eager_ms": sorted(eager)[n // 2], "compiled_ms": sorted(compiled)[n // 2],
            "speedup": eager_ms / compiled_ms, "p_value": 0.001, "recompiled": compiles > 0,
            "compiles": compiles, "compile_time_s": first_call_s if compiles else 0.0,
            "first_call_s": first_call_s, "recompile_reasons": [], "accuracy": "pass",
            "detail": None, "eager_samples_ms": eager, "compiled_samples_ms": compiled}


def run(model: str, strategy: str, seed: int, compiled_ms: float = 1.0, compiles: int = 2,
        status: str = "pass", batches: tuple[int, ...] = (8, 7, 9, 10)) -> dict[str, Any]:
    rng = random.Random(seed)
    variations = [variation(i, b, rng, 2.0 * b / 8, compiled_ms * b / 8,
                            compiles=1 if i < compiles else 0, first_call_s=3.0 if i == 0 else 1.0)
                  for i, b in enumerate(batches)]
    return {"model": model, "strategy": strategy, "mode": "inference", "status": status,
            "error": None, "compiles": compiles, "compile_time_s": 3.0 + compiles - 1,
            "backend_compile_s": 2.0, "recompile_limit_hit": False, "peak_memory_bytes": None,
            "torch_unique_graphs": compiles, "fx_cache_hits": 0, "wall_s": 5.0,
            "speedup": {"median": 2.0 / compiled_ms, "min": 1.0, "max": 3.0, "std": 0.1,
                        "geomean": 2.0 / compiled_ms},
            "variations": variations}


def document(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema_version": 1, "dyncli": "0.1.0", "command": "bench", "model": None,
            "interrupted": False,
            "environment": {"dyncli": "0.1.0", "torch": "2.14.1", "python": "3.11", "device": "cpu",
                            "device_name": "test cpu", "dtype": "float32", "threads": 2},
            "settings": {}, "dims": {}, "warnings": [], "runs": runs}


def base_runs(seed: int = 0) -> list[dict[str, Any]]:
    """Two models, two strategies each."""
    return [run("resnet18", "static", seed, compiles=4), run("resnet18", "automatic", seed + 1),
            run("hf:BertModel", "static", seed + 2, compiles=4),
            run("hf:BertModel", "automatic", seed + 3)]


def write(path: Path, runs: list[dict[str, Any]], load: dict[str, Any] | None = None) -> Path:
    doc = document(runs)
    if load is not None:
        doc["load"] = load
    path.write_text(json.dumps(doc))
    return path


def load(probes: list[float], lo: float = 0.3, hi: float = 0.8) -> dict[str, Any]:
    """A bench document's ``load`` object (dyncli.bench.core.machine), eager probes in ms."""
    return {"cores": 2, "readings": len(probes), "load_min": lo, "load_max": hi,
            "others_cpu_share": 0.05, "steal_share": 0.0, "eager_probe_ms": probes,
            "eager_drift": max(probes) / min(probes)}


def scaled(runs: list[dict[str, Any]], model: str | None, factor: float,
           eager: float | None = None) -> list[dict[str, Any]]:
    """A copy where ``model``'s (every model's: None) compiled samples are multiplied by
    ``factor``, and its eager samples by ``eager`` when given."""
    out = json.loads(json.dumps(runs))
    for r in out:
        if model is None or r["model"] == model:
            for v in r["variations"]:
                v["compiled_samples_ms"] = [x * factor for x in v["compiled_samples_ms"]]
                if eager is not None:
                    v["eager_samples_ms"] = [x * eager for x in v["eager_samples_ms"]]
    return out

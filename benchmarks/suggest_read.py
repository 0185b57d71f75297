"""Benchmark: read and render a synthetic 10,000-frame PGO state (target: under 1 s).

Writes one pickle shaped exactly like torch's (``torch._dynamo.pgo`` globals, made by the
torch-free helper ``tests/unit/suggest_fake_pgo.py``) with ``--frames`` frames of three inputs
each — a tensor with a dynamic batch dim, a static tensor, and a dynamic int — then times, in
this process, best and median of ``--repeat`` runs of:

- read+suggest: the one core call ``dyncli suggest`` makes (``dyncli.suggest.api.run``):
  restricted unpickling, merging, filters, regex checks, per-dim entries;
- env: rendering the default ``--format env`` line (what stdout gets);
- json / python: the ``--json`` document text and ``--format python`` text;
- report: the per-frame rich tables that go to stderr (first 40 frames; to a string).

"read and render" (the target) = read+suggest + env.

Usage (from the repo root)::

    .venv/bin/python benchmarks/suggest_read.py [--frames 10000] [--repeat 5]

Numbers go into docs/suggest.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import suggest_fake_pgo as fake  # noqa: E402

from dyncli.config import SuggestConfig  # noqa: E402
from dyncli.output import to_json_text  # noqa: E402
from dyncli.suggest.api import run  # noqa: E402
from dyncli.suggest.render import _report, render_fix  # noqa: E402


def make_state(frames: int) -> bytes:
    """A torch-shaped pickle with ``frames`` frames of three inputs each."""
    state = {}
    for i in range(frames):
        state[(f"/src/model_{i % 97}.py", 10 + i, f"forward_{i}")] = {
            f"L['x{i}']": fake.tensor(fake.DYN, 16, 32),
            f"L['mask{i}']": fake.tensor(8, 8),
            f"L['n{i}']": fake.scalar(fake.DYN),
        }
    return fake.dumps(state)


def _time(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    samples, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "code_state_bench_None_.pkl"
        path.write_bytes(make_state(args.frames))
        size_kb = path.stat().st_size / 1024
        core = _time(lambda: run(pgo_dir=path, config=SuggestConfig()), args.repeat)
        result = core[2]
        env = _time(lambda: render_fix(result, "env"), args.repeat)
        as_json = _time(lambda: to_json_text(result.to_dict()), args.repeat)
        python = _time(lambda: render_fix(result, "python"), args.repeat)

        def report() -> None:
            with contextlib.redirect_stderr(io.StringIO()):
                _report(result)

        rep = _time(report, args.repeat)

    total = core[0] + env[0]
    print(f"state: {args.frames} frames, {3 * args.frames} inputs, pickle {size_kb:.0f} KiB; "
          f"{len(result.entries)} entries")
    print(f"{'step':<26}{'best s':>9}{'median s':>10}")
    for name, (best, med, _) in (("read+suggest (core call)", core), ("render env", env),
                                  ("render --json text", as_json), ("render --format python", python),
                                  ("report tables (stderr)", rep)):
        print(f"{name:<26}{best:>9.3f}{med:>10.3f}")
    print(f"{'read and render (env)':<26}{total:>9.3f}   target < 1 s: {'met' if total < 1 else 'MISSED'}")


if __name__ == "__main__":
    main()

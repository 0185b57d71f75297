"""The child's side of the child-process protocol (:mod:`dyncli.bench.child`).

A parent (a suite, ``--start warm``, the process-per-strategy driver) starts ``python -c`` that
imports :func:`main`, so that a crash, an out-of-memory kill or a hang costs that child only.
The spec file holds ``{"model": NAME, "settings": {BenchConfig fields}}``; the worker
benchmarks the model in this one process (it never starts a process per strategy itself),
writes the single-model JSON document to the output path after every strategy (so a kill keeps
what was measured) and one progress line per variation to stderr, which the parent tails.

Exit codes: 0 ran (failures are statuses in the JSON), 2 could not run (unknown model,
impossible settings; ``Error: …`` on stderr), 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(spec_path: str, out_path: str) -> int:
    """Run one model as the spec says; write its JSON document to ``out_path``."""
    from dyncli.bench import api
    from dyncli.bench.child import progress_line, write_doc
    from dyncli.bench.core.result import Hooks
    from dyncli.config import BenchConfig
    from dyncli.errors import DyncliError
    from dyncli.output import Output

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    cfg = BenchConfig(**spec["settings"])

    def progress(strategy: str, done: int, total: int) -> None:
        sys.stderr.write(progress_line(strategy, done, total))
        sys.stderr.flush()

    def warning(text: str) -> None:
        sys.stderr.write(f"Warning: {text}\n")

    hooks = Hooks(progress=progress, warning=warning,
                  run_done=lambda partial: write_doc(out_path, partial.to_dict()))
    try:
        result = api.run(spec["model"], config=cfg, hooks=hooks, process_each=False)
    except DyncliError as err:
        Output.error(err)  # the parent reads the Error: line back as the model's error
        return err.exit_code
    write_doc(out_path, result.to_dict())
    return 130 if result.interrupted else 0


if __name__ == "__main__":  # pragma: no cover - the parent uses ``python -c``
    sys.exit(main(sys.argv[1], sys.argv[2]))

"""One model of a suite, benchmarked in its own process.

``dyncli bench --suite`` starts one of these per model (``python -c`` that imports
:func:`main`), so that a crash, an out-of-memory kill or a hang costs that model only. The
spec file holds ``{"model": NAME, "settings": {BenchConfig fields}}``; the worker writes the
single-model JSON document to the output path after every strategy (so a kill keeps what was
measured) and one plain progress line per variation to stderr, which the parent tails.

Exit codes: 0 ran (failures are statuses in the JSON), 2 could not run (unknown model,
impossible settings; ``Error: …`` on stderr), 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The parent recognises these lines to tell "the model was built and ran" from "it died first".
PROGRESS_PREFIX = "dyncli-suite-progress"


def main(spec_path: str, out_path: str) -> int:
    """Run one model as the spec says; write its JSON document to ``out_path``."""
    from dyncli.bench.api import run
    from dyncli.bench.core.result import Hooks
    from dyncli.config import BenchConfig
    from dyncli.errors import DyncliError
    from dyncli.output import Output, write_json

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    cfg = BenchConfig(**spec["settings"])

    def progress(strategy: str, done: int, total: int) -> None:
        sys.stderr.write(f"{PROGRESS_PREFIX} {strategy} {done} {total}\n")
        sys.stderr.flush()

    def warning(text: str) -> None:
        sys.stderr.write(f"Warning: {text}\n")

    hooks = Hooks(progress=progress, warning=warning,
                  run_done=lambda partial: write_json(out_path, partial.to_dict()))
    try:
        result = run(spec["model"], config=cfg, hooks=hooks)
    except DyncliError as err:
        Output.error(err)  # the parent reads the Error: line back as the model's error
        return err.exit_code
    write_json(out_path, result.to_dict())
    return 130 if result.interrupted else 0


if __name__ == "__main__":  # pragma: no cover - the parent uses ``python -c``
    sys.exit(main(sys.argv[1], sys.argv[2]))

"""Record the corpus's logs as test data: ``tests/data/<torch version>/advice/``.

    python tests/advice/record.py            # under each venv: /work/venv315, /work/venv314
    python tests/advice/record.py --traces guard_limit,float_input   # only their TORCH_TRACE

Each program of corpus.py at three levels (torch's default warnings ``none``, ``recompiles``,
``full`` = ``+dynamic,recompiles,graph_breaks,guards``), gzipped: the torch-free unit tests
(tests/unit/test_advice_logs.py) read them. The runner (runner.py) does the torch work.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> int:
    import torch

    traced = set(sys.argv[sys.argv.index("--traces") + 1].split(",")) if "--traces" in sys.argv else set()

    version = torch.__version__.split("+")[0]
    out = HERE.parents[0] / "data" / version / "advice"
    out.mkdir(parents=True, exist_ok=True)
    from corpus import PROGRAMS

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        jobs = [{"program": p, "level": lv, "log": str(work / f"{p}.{lv}.log"),
                 "pgo": [str(work / "pgo" / f"{p}.{lv}"), f"advice-{p}"],
                 **({"trace": str(work / f"{p}.trace")} if p in traced and lv == "full" else {})}
                for p in PROGRAMS for lv in ("none", "recompiles", "full")
                if not traced or (p in traced and lv == "full")]
        (work / "jobs.json").write_text(json.dumps(jobs))
        env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_")}
        subprocess.run([sys.executable, str(HERE / "runner.py"), str(work / "jobs.json"),
                        str(work / "results.json")], check=True, env=env,
                       stderr=subprocess.DEVNULL)
        results = json.loads((work / "results.json").read_text())
        if traced:  # --traces: only those programs' traces (the logs stay as recorded)
            for job in jobs:
                if job.get("trace"):  # one process, one rank: one trace file
                    [trace] = sorted(Path(job["trace"]).glob("*.log"))
                    (out / f"{job['program']}.trace.log.gz").write_bytes(
                        gzip.compress(trace.read_bytes(), mtime=0))
            print(out)
            return 0
        for job in jobs:
            text = Path(job["log"]).read_bytes()
            name = Path(job["log"]).name + ".gz"
            (out / name).write_bytes(gzip.compress(text, mtime=0))
        counts = {f"{r['program']}": r["compiles"] for r in results}
        (out / "compiles.json").write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    (out / "RECIPE.md").write_text(
        f"Recorded with torch {torch.__version__}: `python tests/advice/record.py` "
        "(the corpus of tests/advice/corpus.py at three log levels; compiles.json: the "
        "compiles torch's backend saw per program).\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

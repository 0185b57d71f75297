"""Does a release read differently? diagnose every log two pytest runs captured, and compare.

CI's previous-release venv runs only the live tests whose outcome that release decides
(.ci/run, TORCH_FORMAT_TESTS). To decide a test file's place there, run it under both releases
with the logs kept, then compare what diagnose makes of each pair::

    .venv/bin/python -m pytest -p no:xdist tests/integration/test_diagnose_capture.py \\
        --basetemp=/tmp/cap-new
    .venv-previous/bin/python -m pytest -p no:xdist tests/integration/test_diagnose_capture.py \\
        --basetemp=/tmp/cap-old
    .venv/bin/python benchmarks/capture_parity.py /tmp/cap-new /tmp/cap-old

(``OLD=NEW`` arguments after the two directories say that a path in the old run's logs is the
new run's: two checkouts, ``/work/ci=/work/main``.)

Each ``*.log`` under the first directory is diagnosed (``dyncli diagnose --json``, this
checkout's dyncli for both) beside the log of the same path under the second. What differs
between two runs of one program on one machine anyway is put aside: the log's line numbers
(torch writes more or fewer lines around a record), the capture's directories and torch's own
file:line (its sources move between releases), seconds. ``SAME`` means diagnose said the same
of both releases' logs; ``DIFF`` lists the JSON lines that differ. Exit status 1 if any differ.
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# (not compared: where the input was, how it was read, timings)
_SKIPPED = {"input", "inputs", "path", "stats", "seconds", "files", "source"}
# TORCH_TRACE's files, each named at random (the trace's own parity: test_trace_capture.py)
_TRACE = "dedicated_log_torch_trace_"


def _normal(o: Any, same: list[tuple[str, str]]) -> Any:
    if isinstance(o, dict):
        return {k: _normal(v, same) for k, v in o.items() if k not in _SKIPPED}
    if isinstance(o, list):
        return [_normal(v, same) for v in o]
    if isinstance(o, str):
        s = o
        for old, new in same:
            s = s.replace(old, new)
        s = re.sub(r"^line \d+: ", "line N: ", s)  # a cited log line
        s = re.sub(r"\.py:\d{3,5}\b", ".py:N", s)  # torch's own sources (the programs' are short)
        return re.sub(r"\d+\.\d+ ?s\b", "N s", s)
    if isinstance(o, bool):
        return o
    if isinstance(o, int) and o > 40:  # a log line number, not a count
        return "N"
    if isinstance(o, float):
        return "F"
    return o


def _diagnosed(log: Path, same: list[tuple[str, str]]) -> Any:
    out = subprocess.run([sys.executable, "-m", "dyncli", "diagnose", str(log), "--json", "-"],
                         capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:  # (an empty log: the fixed program printed nothing)
        return _normal({"exit": out.returncode, "said": out.stderr.strip().splitlines()[:1]},
                       same)
    return _normal(json.loads(out.stdout), same)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not all("=" in a for a in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    new, old = (Path(a).resolve() for a in argv[:2])
    # (diagnose shortens a long path from its start: the directories' own names too)
    same = [(str(old), str(new)), (old.name, new.name), *(tuple(a.split("=", 1)) for a in argv[2:])]
    differ = 0
    for log in sorted(new.rglob("*.log")):
        if log.name.startswith(_TRACE):
            continue
        rel = log.relative_to(new)
        twin = old / rel
        if not twin.is_file():
            print(f"MISSING {rel}")
            differ += 1
            continue
        a, b = _diagnosed(log, same), _diagnosed(twin, same)
        if a == b:
            print(f"SAME {rel}")
            continue
        differ += 1
        print(f"DIFF {rel}")
        lines_a = json.dumps(a, indent=1, sort_keys=True).splitlines()
        lines_b = json.dumps(b, indent=1, sort_keys=True).splitlines()
        for line in list(difflib.unified_diff(lines_a, lines_b, lineterm="", n=0))[2:40]:
            print(f"    {line[:200]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

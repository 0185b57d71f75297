"""Record recording.py's records of failed ShapeEnv calls with the installed torch.

    python tests/data/make_shape_env_failed.py    # under each venv: tests/data/<torch>/shape_env_failed/

Runs tests/data/programs/shape_env_failed.py under TORCH_LOGS="dynamic" (recording.py writes
each record's traceback at INFO): one evaluate_expr that raises GuardOnDataDependentSymNode and
one that raises the hint check's AssertionError, both caught by the program. The record's head
is the same for both; only its traceback's last line tells them apart, which
tests/unit/test_recorded_failures.py reads (recorded under 2.4.1 and 2.15.0).
"""

from __future__ import annotations

from record_program import record


def main() -> int:
    record("shape_env_failed.py", "shape_env_failed", "run.log", "dynamic")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Record a guard_fail_fn's print of torch's GuardFail with the installed torch.

    python tests/data/make_guard_fail.py    # under each venv: tests/data/<torch>/guard_fail/

Runs tests/data/programs/guard_fail_print.py without TORCH_LOGS; its stdout (the program's
print of each GuardFail) is the log. 2.15.0's reasons name their cache entry ("0/1: …"),
2.4.1's do not; tests/unit/test_paste_hunt35a_readings.py reads both.
"""

from __future__ import annotations

from record_program import record


def main() -> int:
    record("guard_fail_print.py", "guard_fail", "run.log", None, stream="stdout")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

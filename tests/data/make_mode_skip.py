"""Record the +dynamo log of tests/data/programs/under_a_mode.py with the installed torch.

    python tests/data/make_mode_skip.py    # under each venv: writes tests/data/<torch>/mode_skip/

torch 2.11 keeps dynamo's skip of a frame first called under a TorchDispatchMode for every
later call (the function never compiles); 2.14.1 and 2.15 compile it once the mode is gone
(pytorch#186085). tests/unit/test_diagnose_constraints.py reads both logs.
"""

from __future__ import annotations

from record_program import record


def main() -> int:
    record("under_a_mode.py", "mode_skip", "under_a_mode.log", "+dynamo")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

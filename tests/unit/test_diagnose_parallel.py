"""diagnose --jobs N: rank files parsed in a process pool give the serial run's output exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dyncli.diagnose.api import run
from dyncli.errors import StrictError, UsageError

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def _ranks(tmp_path: Path, count: int) -> Path:
    """``count`` rank files: the captured traces, round-robin, named as torch names them."""
    sources = sorted(TRACES.glob("*/dedicated_log_torch_trace*.log"))
    out = tmp_path / "trace"
    out.mkdir()
    for rank in range(count):
        shutil.copy(sources[rank % len(sources)],
                    out / f"dedicated_log_torch_trace_rank_{rank}_x{rank:03d}.log")
    return out


@pytest.mark.parametrize("case", ["multi_rank", "two_rank_diverge"])
def test_captured_rank_dirs_read_in_parallel_as_in_serial(case: str) -> None:
    serial = run(TRACES / case, jobs=1).to_dict()
    assert serial == run(TRACES / case, jobs=2).to_dict()
    assert len(serial["inputs"]) == 2


def test_many_ranks_in_parallel_as_in_serial(tmp_path: Path) -> None:
    directory = _ranks(tmp_path, 12)
    serial = run(directory, jobs=1)
    parallel = run(directory, jobs=3)  # more files than workers: the pool is refilled in order
    assert serial.to_dict() == parallel.to_dict()
    assert len(serial.inputs) == 12 and serial.recompiles


def test_a_bad_file_fails_as_in_serial(tmp_path: Path) -> None:
    directory = _ranks(tmp_path, 3)
    bad = directory / "dedicated_log_torch_trace_rank_1_x001.log"
    lines = bad.read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:3]) + "V1124 not a trace line at all\n" + "".join(lines[3:]))
    errors = []
    for jobs in (1, 2):
        with pytest.raises(StrictError) as info:
            run(directory, jobs=jobs, strict=True)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "x001.log" in errors[0]


def test_jobs_must_be_positive() -> None:
    with pytest.raises(UsageError, match="--jobs must be >= 1"):
        run(TRACES / "multi_rank", jobs=0)

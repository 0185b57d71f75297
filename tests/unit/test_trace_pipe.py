"""One big trace file parsed in a child process (``trace_pipe``) gives the serial output exactly.

The pipe is used only for files of at least ``children.PIPE_BYTES``; these tests lower the bar
to 0 so that the recorded traces (torch 2.14.1 and 2.15.0) go through it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trace_records as records

from dyncli.diagnose import children, read_trace, trace_pipe
from dyncli.diagnose.processes import Process
from dyncli.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted(p for p in (DATA / "traces").glob("*/dedicated_log_torch_trace_*.log")
               if "rank_" not in p.name) + sorted(
    (DATA / "2.15.0" / "traces").glob("*/dedicated_log_torch_trace_*.log"))[:4]


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(children, "PIPE_BYTES", 0)


def _both(path: Path) -> tuple[dict, dict]:
    serial = read_trace.diagnose_traces([path], jobs=1).to_dict()
    return serial, read_trace.diagnose_traces([path], jobs=2).to_dict()


@pytest.mark.usefixtures("piped")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_recorded_trace_piped_as_in_serial(path: Path) -> None:
    assert trace_pipe.wanted(Process(path.name, path), 2, strict=False)
    serial, piped = _both(path)
    assert serial == piped
    assert serial["frames"]


@pytest.mark.usefixtures("piped")
def test_damage_counted_alike_in_both_processes(tmp_path: Path) -> None:
    """Bad lines (counted by the child), bad records (counted here by the mapper), an intern
    entry given again: the stats, the first bad lines and the files named are the serial ones."""
    src = next(p for p in FILES if p.parent.name == "auto_dynamic_batch")
    lines = src.read_text().splitlines(keepends=True)
    bad = [*records.envelope("create_symbol", {"symbol": "s9", "val": [1], "vr": 5,
                                               "user_stack": "x"}, end="\n", frame_id=0,
                             frame_compile_id=0),
           "garbage line\n", "\torphan payload\n",
           *records.envelope("brand_new_kind", {}, end="\n"),
           *records.intern("/elsewhere/renamed.py", 0, end="\n"),
           *records.envelope("dynamo_start", {"stack": [{"line": "7", "name": 3,
                                                         "filename": 0}]}, end="\n",
                             frame_id=9, frame_compile_id=0)]
    path = tmp_path / "dedicated_log_torch_trace_damaged.log"
    path.write_text("".join(lines[:40] + bad + lines[40:]))
    serial, piped = _both(path)
    assert serial == piped
    stats = serial["stats"]
    assert stats["malformed"] >= 2 and stats["unrecognized"] >= 1


@pytest.mark.usefixtures("piped")
def test_not_a_trace_fails_as_in_serial(tmp_path: Path) -> None:
    path = tmp_path / "dedicated_log_torch_trace_text.log"
    path.write_text("I1122 01:19:12.903000 4440 torch/x.py:1] [0/0] create_symbol s0\n")
    errors = []
    for jobs in (1, 2):
        with pytest.raises(InputError) as info:
            read_trace.diagnose_traces([path], jobs=jobs)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "not a TORCH_TRACE file" in errors[0]


def test_small_strict_or_single_core_reads_stay_in_process(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    shutil.copy(FILES[0], path)
    proc = Process(path.name, path)
    assert not trace_pipe.wanted(proc, 2, strict=False)  # far below PIPE_BYTES
    assert not trace_pipe.wanted(proc, 1, strict=False)
    assert not trace_pipe.wanted(proc, 2, strict=True)
    assert not trace_pipe.wanted(Process("<stdin>"), 2, strict=False)


def test_first_bad_lines_merged_in_line_order() -> None:
    """The serial parser keeps the first five bad lines in line order; the child's and this
    process's lists are merged the same way."""
    from dyncli.logparse.trace import TraceParser
    from dyncli.logparse.trace_format import TraceStats

    here = TraceParser("t.log")
    here.malformed(50, "bad create_symbol record (TypeError)")
    child = TraceStats(lines=70, malformed=5, samples=[(10, "a"), (20, "b"), (30, "c"),
                                                       (60, "d"), (61, "e")])
    trace_pipe._merge(here, child)
    assert [line for line, _ in here.stats.samples] == [10, 20, 30, 50, 60]
    assert here.stats.malformed == 6 and here.stats.lines == 70
    assert here.stats.reasons["bad create_symbol record (TypeError)"] == 1


@pytest.mark.usefixtures("piped")
def test_a_failure_in_the_child_is_raised_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the child's parsing surfaces here as the exception itself (no traceback printed
    by the child, no hang), as the serial reader would raise it."""
    from dyncli.logparse import trace

    def broken(self: object, lines: object) -> object:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(trace.TraceParser, "feed_raw", broken)
    monkeypatch.setattr(trace.TraceParser, "feed_raw_blocks", broken)  # a plain file's way
    with pytest.raises(ZeroDivisionError, match="boom"):
        read_trace.diagnose_traces([FILES[0]], jobs=2)


@pytest.mark.usefixtures("piped")
@pytest.mark.parametrize(("jobs", "idle", "expect"), [(None, True, True), (None, False, False),
                                                      (2, False, True), (1, True, False)])
def test_default_jobs_pipe_only_while_a_core_is_idle(monkeypatch: pytest.MonkeyPatch,
                                                    jobs: int | None, idle: bool,
                                                    expect: bool) -> None:
    """By default the child is used only while the load leaves a core free (on a busy
    machine it costs more than it saves); an explicit --jobs 2 asks for it anyway."""
    calls = []
    real = trace_pipe.read_piped
    monkeypatch.setattr(children, "idle_core", lambda cores: idle)
    monkeypatch.setattr(children, "default_jobs", lambda: 2)
    monkeypatch.setattr(trace_pipe, "read_piped", lambda proc: calls.append(proc) or real(proc))
    read_trace.diagnose_traces([FILES[0]], jobs=jobs)
    assert bool(calls) is expect


@pytest.fixture
def early(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.run's early child (children.prestart) for the small recorded traces."""
    monkeypatch.setattr(children, "PIPE_BYTES", 0)
    yield
    assert not children._EARLY  # taken over or stopped, never left behind


@pytest.mark.usefixtures("early")
def test_early_child_taken_over_gives_the_serial_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child forked before the analysis is imported is the one the reading uses, and
    the result is the serial one."""
    adopted = []
    real = children.adopt
    monkeypatch.setattr(children, "adopt", lambda path: adopted.append(r := real(path)) or r)
    path = FILES[0]
    assert children.prestart([str(path)], 2, False)
    piped = read_trace.diagnose_traces([path], jobs=2).to_dict()
    assert adopted and adopted[0] is not None
    assert piped == read_trace.diagnose_traces([path], jobs=1).to_dict()


@pytest.mark.usefixtures("early")
def test_early_child_of_another_file_is_stopped(tmp_path: Path) -> None:
    """A file changed (or another one read) after the early start: that child is stopped and
    a new one reads what is there now."""
    path = tmp_path / "t.log"
    shutil.copy(FILES[0], path)
    assert children.prestart([str(path)], 2, False)
    early = children._EARLY[0][1]
    shutil.copy(FILES[1], path)  # replaced: another inode, size and time
    piped = read_trace.diagnose_traces([path], jobs=2).to_dict()
    assert piped == read_trace.diagnose_traces([path], jobs=1).to_dict()
    assert piped["summary"] == read_trace.diagnose_traces([FILES[1]], jobs=1).to_dict()["summary"]
    early.join(timeout=5)
    assert not early.is_alive()


@pytest.mark.usefixtures("early")
@pytest.mark.parametrize("case", ["strict", "one job", "two paths", "stdin", "dir", "text log",
                                  "busy"])
def test_early_child_only_where_the_reading_pipes(case: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(children, "idle_core", lambda cores: case != "busy")
    monkeypatch.setattr(children, "default_jobs", lambda: 2)
    text = tmp_path / "run.log"
    text.write_text("V1122 01:19:12.903000 4440 torch/_dynamo/guards.py:5625] a text log\n")
    paths, jobs, strict = [str(FILES[0])], 2, False
    if case == "strict":
        strict = True
    elif case == "one job":
        jobs = 1
    elif case == "two paths":
        paths = [str(FILES[0]), str(FILES[1])]
    elif case == "stdin":
        paths = ["-"]
    elif case == "dir":
        paths = [str(FILES[0].parent)]
    elif case == "text log":
        paths = [str(text)]
    else:
        jobs = None
    assert not children.prestart(paths, jobs, strict)
    assert children.prestart([str(FILES[0])], None if case == "busy" else 2, False) is (
        case != "busy")
    if children._EARLY:  # not read here: stopped as a reading of another file would
        assert children.adopt(tmp_path) is None


@pytest.mark.usefixtures("early")
@pytest.mark.parametrize("jobs", [None, 1])
def test_early_child_used_or_stopped_whatever_the_load_now(jobs: int | None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The load rose between the command's early start and the reading: the child already
    running is used (default --jobs); with --jobs 1 (another decision) it is stopped."""
    monkeypatch.setattr(children, "idle_core", lambda cores: True)
    monkeypatch.setattr(children, "default_jobs", lambda: 2)
    calls = []
    real = trace_pipe.read_piped
    monkeypatch.setattr(trace_pipe, "read_piped", lambda proc: calls.append(proc) or real(proc))
    assert children.prestart([str(FILES[0])], None, False)
    monkeypatch.setattr(children, "idle_core", lambda cores: False)  # the load rose
    early = children._EARLY[0][1]
    result = read_trace.diagnose_traces([FILES[0]], jobs=jobs).to_dict()
    assert bool(calls) is (jobs is None)
    assert result == read_trace.diagnose_traces([FILES[0]], jobs=1).to_dict()
    early.join(timeout=5)
    assert not early.is_alive()


@pytest.mark.skipif(not Path("/proc/sys/fs/pipe-max-size").exists(), reason="Linux only")
def test_the_childs_pipe_is_as_wide_as_the_system_allows() -> None:
    """The child parses ahead while this process imports and analyses: its pipe holds up
    to the system's maximum (1 MB by default) instead of 64 KB."""
    import fcntl

    child, receive = children.start(FILES[0])
    try:
        size = fcntl.fcntl(receive.fileno(), getattr(fcntl, "F_GETPIPE_SZ", 1032))
        wanted = min(int(Path("/proc/sys/fs/pipe-max-size").read_text()), 1 << 24)
        assert size == wanted > 65536
        while receive.recv()[0] not in ("end", "error", "raise"):
            pass
    finally:
        child.join(timeout=30)

"""Inputs that can be read only once: a named pipe, as ``<(zcat run.log.gz)`` gives.

A pipe used to be opened once to sniff its kind and again to parse it, so the sniff consumed
its head: a trace through a pipe was diagnosed as empty, and ``suggest --from-trace`` said
"no such file". Each test writes a real FIFO from a thread, as the shell would.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

DATA = Path(__file__).resolve().parents[1] / "data"
ENV = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


def _trace(case: str) -> Path:
    (path,) = sorted((DATA / "traces" / case).glob("*.log"))
    return path


@contextmanager
def fifo(tmp_path: Path, data: bytes) -> Iterator[Path]:
    """A named pipe that a writer thread fills with ``data`` once a reader opens it."""
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        # BrokenPipeError: the reader stopped early (an error case), nothing to check there
        with suppress(BrokenPipeError), path.open("wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        writer.join(timeout=30)


def _json(runner: CliRunner, args: list[str]) -> dict:
    r = runner.invoke(app, [*args, "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("gz", [False, True])
def test_a_trace_through_a_pipe_is_diagnosed_like_the_file(runner: CliRunner, tmp_path: Path,
                                                         gz: bool) -> None:
    trace = _trace("pgo_recompile")
    data = trace.read_bytes()
    want = _json(runner, ["diagnose", str(trace)])
    with fifo(tmp_path, gzip.compress(data) if gz else data) as pipe:
        got = _json(runner, ["diagnose", str(pipe)])
    assert got["summary"] == want["summary"] and got["summary"]["compiles"] == 2
    assert got["frames"] == want["frames"]
    assert got["stats"]["lines"] == want["stats"]["lines"]
    assert got["stats"]["bytes"] == len(data)  # counted as read: a pipe has no size


def test_a_text_log_through_a_pipe_is_diagnosed_like_the_file(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    log = DATA / "logs" / "multi_rank.log"
    want = _json(runner, ["diagnose", str(log)])
    with fifo(tmp_path, log.read_bytes()) as pipe:
        got = _json(runner, ["diagnose", str(pipe)])
    assert got["summary"] == want["summary"] and got["stats"]["lines"] == want["stats"]["lines"]


def test_suggest_from_a_trace_through_a_pipe(runner: CliRunner, tmp_path: Path) -> None:
    trace = _trace("pgo_recompile")
    # The trace names the recording script by its path on the recording machine, which this
    # machine may have (edited since): a stale frame is not what this test is about.
    args = ["suggest", "--include-stale", "--from-trace"]
    want = runner.invoke(app, [*args, str(trace)], env=ENV)
    assert want.exit_code == 0, want.output
    with fifo(tmp_path, trace.read_bytes()) as pipe:
        got = runner.invoke(app, [*args, str(pipe)], env=ENV)
    assert got.exit_code == 0, got.output
    assert got.stdout == want.stdout and "L['y']:1" in got.stdout

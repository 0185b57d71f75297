"""suggest --redis against a real redis-server filled by real torch programs with remote PGO on.

Each program of tests/data/make_pgo.py runs once with ``TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO=1``
and ``TORCHINDUCTOR_REDIS_URL`` pointing at a private redis-server (127.0.0.1, a free port); torch
writes the same state to its local cache dir in the same run, so ``--redis`` and ``--pgo-dir``
must give the same allow-list.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.config import SuggestConfig
from dyncli.errors import InputError
from dyncli.suggest.api import list_jobs, run

pytestmark = pytest.mark.slow
pytest.importorskip("torch")
redis = pytest.importorskip("redis", reason="the redis client is not installed (pip install redis)")

MAKE_PGO = Path(__file__).resolve().parents[1] / "data" / "make_pgo.py"
PROGRAMS = ("mlp", "ranks")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server on the loopback, always killed afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}"
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def filled(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run each program once with remote (and local) PGO; returns the local cache dir."""
    cache = tmp_path_factory.mktemp("cache")
    env = {k: v for k, v in os.environ.items()
           if k not in ("TORCH_COMPILE_DYNAMIC_SOURCES", "TORCH_TRACE")}
    env.update(TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_NUM_THREADS="1",
               TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO="1", TORCHINDUCTOR_REDIS_URL=redis_url)
    for program in PROGRAMS:
        proc = subprocess.run([sys.executable, str(MAKE_PGO), "--run", program],
                              env={**env, "TORCH_COMPILE_JOB_ID": f"redis-{program}"},
                              capture_output=True, text=True, check=False, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    return cache


@pytest.mark.parametrize("program", PROGRAMS)
def test_redis_gives_the_same_sources_as_local_files(program: str, redis_url: str,
                                                     filled: Path) -> None:
    job = f"redis-{program}"
    remote = run(redis=redis_url, job_id=job, config=SuggestConfig())
    local = run(pgo_dir=filled, job_id=job, config=SuggestConfig())
    assert remote.value and remote.value == local.value
    assert remote.sources == local.sources
    assert [f.frame for f in remote.frames] == [f.frame for f in local.frames]
    assert remote.jobs == (job,) and not remote.skipped
    assert all(k.startswith(f"pt2:dynamo-pgo::{job}:") for k in remote.inputs)
    ranks = 2 if program == "ranks" else 1
    assert len(remote.inputs) == len(local.inputs) == ranks


def test_list_jobs_names_each_job_and_its_ranks(redis_url: str, filled: Path) -> None:
    jobs = list_jobs(redis=redis_url).jobs
    assert jobs["redis-mlp"] == [None] and jobs["redis-ranks"] == [0, 1]
    assert list_jobs(pgo_dir=filled).jobs == jobs
    result = CliRunner().invoke(app, ["suggest", "--redis", redis_url, "--list-jobs"])
    assert result.exit_code == 0, result.stderr
    assert "redis-ranks\tranks 0, 1" in result.stdout


def test_a_corrupt_entry_is_skipped_with_its_key(redis_url: str, filled: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    client = redis.Redis.from_url(redis_url)
    good = client.get("pt2:dynamo-pgo::redis-ranks:0::c1")
    assert good is not None
    client.set("pt2:dynamo-pgo::corrupt:0::c1", good)
    client.set("pt2:dynamo-pgo::corrupt:1::c1", json.dumps({"data": "gARdcQAu"}))  # a list pickle
    try:
        monkeypatch.setenv("TORCHINDUCTOR_REDIS_URL", redis_url)  # --redis env reads it
        result = CliRunner().invoke(app, ["suggest", "--redis", "env", "--job-id", "corrupt",
                                          "--json", "-"])
        assert result.exit_code == 0, result.stderr
        assert "skipped pt2:dynamo-pgo::corrupt:1::c1: not PGO state" in result.stderr
        doc = json.loads(result.stdout)
        assert doc["inputs"] == ["pt2:dynamo-pgo::corrupt:0::c1"]
        assert doc["sources"]
    finally:
        client.delete("pt2:dynamo-pgo::corrupt:0::c1", "pt2:dynamo-pgo::corrupt:1::c1")


def test_unknown_job_and_refused_connection_are_one_line_errors(redis_url: str,
                                                                filled: Path) -> None:
    result = CliRunner().invoke(app, ["suggest", "--redis", redis_url, "--job-id", "nope"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: --redis {redis_url}: no PGO entries for job 'nope'")
    assert "redis-mlp" in result.stderr  # the hint lists the jobs there are
    dead = f"redis://127.0.0.1:{_free_port()}"
    result = CliRunner().invoke(app, ["suggest", "--redis", dead])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: --redis {dead}: ") and "refused" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_oversized_value_is_refused_without_downloading_it(redis_url: str, filled: Path) -> None:
    from dyncli.suggest.pgo_pickle import MAX_PGO_BYTES
    from dyncli.suggest.redis import connect, scan_keys

    client = redis.Redis.from_url(redis_url)
    good = client.get("pt2:dynamo-pgo::redis-ranks:0::c1")
    assert good is not None
    client.set("pt2:dynamo-pgo::huge:0::c1", good)
    client.setrange("pt2:dynamo-pgo::huge:1::c1", MAX_PGO_BYTES, b"x")  # 32 MB + 1 of zeros
    try:
        result = CliRunner().invoke(app, ["suggest", "--redis", redis_url, "--job-id", "huge",
                                          "--json", "-"])
        assert result.exit_code == 0, result.stderr
        assert f"skipped pt2:dynamo-pgo::huge:1::c1: {MAX_PGO_BYTES + 1:,} bytes" in result.stderr
        assert json.loads(result.stdout)["inputs"] == ["pt2:dynamo-pgo::huge:0::c1"]
        # a fleet's worth of keys asks for one job instead of reading them all
        with pytest.raises(InputError, match=r"more than 1 PGO keys for job 'huge'"):
            scan_keys(connect(redis_url), "huge", limit=1)
    finally:
        client.delete("pt2:dynamo-pgo::huge:0::c1", "pt2:dynamo-pgo::huge:1::c1")

"""A setting named in a message the way the user wrote it (``config.spelled``): in a
pyproject.toml under ``tool.dyncli`` (``tool.dyncli.bench.repeat``, ``[tool.dyncli.diagnose]
fail_on``), elsewhere as autodyn.toml writes it. Before round 28 a pyproject's settings were
named as autodyn.toml's (``bench.repeat``, ``[diagnose] fail_on in pyproject.toml``), which
the user's file does not hold, and ``[tool]`` with ``dyncli = 1`` was a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dyncli.bench.core import unused
from dyncli.config import BenchConfig, resolve, spelled
from dyncli.errors import ConfigError


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("DYNCLI_"):
            monkeypatch.delenv(name)
    return tmp_path


def test_spelled_by_where_it_came_from() -> None:
    assert spelled("bench", "repeat", "pyproject.toml") == "tool.dyncli.bench.repeat"
    assert spelled("bench", "repeat", Path("../a/pyproject.toml")) == "tool.dyncli.bench.repeat"
    assert spelled("diagnose", "fail_on", "sub/pyproject.toml", header=True) == \
        "[tool.dyncli.diagnose] fail_on"
    assert spelled("bench", source="pyproject.toml", header=True) == "[tool.dyncli.bench]"
    assert spelled("bench", source="pyproject.toml") == "tool.dyncli.bench"
    for source in ("autodyn.toml", "environment DYNCLI_BENCH_REPEAT", "command line", None):
        assert spelled("bench", "repeat", source) == "bench.repeat"
    assert spelled("diagnose", "fail_on", "autodyn.toml", header=True) == "[diagnose] fail_on"


@pytest.mark.parametrize(("text", "message", "hint"), [
    ("[tool.dyncli.bench]\nrepeat = 'ten'\n",
     "pyproject.toml: tool.dyncli.bench.repeat: expected int, got 'ten'", None),
    ("[tool.dyncli.bench]\nrepaet = 3\n", "pyproject.toml: tool.dyncli.bench.repaet: unknown key",
     "Known keys in [tool.dyncli.bench]: "),
    ("[tool.dyncli.bench]\nmode = 'train'\n",
     "pyproject.toml: tool.dyncli.bench.mode: expected one of inference, training, got 'train'",
     None),
    ("[tool.dyncli.bnech]\nrepeat = 3\n", "pyproject.toml: [tool.dyncli.bnech]: unknown table",
     "Known tables: [tool.dyncli.bench], [tool.dyncli.diagnose], "),
    ("[tool.dyncli]\nbench = 3\n", "pyproject.toml: tool.dyncli.bench: expected a table, got 3",
     None),
    # (the tool's table itself not a table: an AttributeError's traceback before)
    ("[tool]\ndyncli = 1\n", "pyproject.toml: tool.dyncli: expected a table, got 1",
     "Put each setting under its command's table: [tool.dyncli.bench]"),
])
def test_a_pyprojects_errors_name_its_keys(workdir: Path, text: str, message: str,
                                           hint: str | None) -> None:
    (workdir / "pyproject.toml").write_text("[project]\nname = 'x'\n" + text)
    with pytest.raises(ConfigError) as info:
        resolve("diagnose", {}, environ={})
    assert info.value.message == message
    if hint is not None:
        assert (info.value.hint or "").startswith(hint), info.value.hint


def test_autodyn_toml_keeps_its_own_spelling(workdir: Path) -> None:
    (workdir / "autodyn.toml").write_text("[bench]\nrepaet = 3\n")
    with pytest.raises(ConfigError) as info:
        resolve("bench", {}, environ={})
    assert info.value.message == "autodyn.toml: bench.repaet: unknown key"
    assert (info.value.hint or "").startswith("Known keys in [bench]: ")


def test_given_as_and_named_follow_the_origin(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text('[tool.dyncli.diagnose]\nfail_on = ["recompiles"]\n'
                                            "[tool.dyncli.bench]\nrepeat = 4\n")
    r = resolve("diagnose", {}, environ={})
    assert r.given_as("fail_on", "--fail-on") == "[tool.dyncli.diagnose] fail_on in pyproject.toml"
    b = resolve("bench", {"warmup": 2}, environ={"DYNCLI_BENCH_SEED": "3"})
    assert b.named("repeat", "--repeat") == "tool.dyncli.bench.repeat"
    assert b.named("warmup", "--warmup") == "--warmup"
    assert b.named("seed", "--seed") == "DYNCLI_BENCH_SEED"
    assert b.named("spread", "--spread") == "--spread"  # (nobody gave it: the flag to give)
    (workdir / "autodyn.toml").write_text("[bench]\nrepeat = 4\n")  # (found first)
    assert resolve("bench", {}, environ={}).named("repeat", "--repeat") == "bench.repeat"


def test_an_unused_option_from_a_pyproject_is_named_as_written_there() -> None:
    cfg = BenchConfig(buckets="8,16")
    (said,) = unused.notes(cfg, unused.RUN, unused.Model("m.py:build", "file", None),
                           origins={"buckets": "pyproject.toml"})
    assert said.startswith("tool.dyncli.bench.buckets = 8,16 (from pyproject.toml): ")

"""Config layering and every config error path (no torch)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from dyncli.config import TABLES, BenchConfig, documented_fields, find_config, resolve
from dyncli.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in list(__import__("os").environ):
        if name.startswith("DYNCLI_"):
            monkeypatch.delenv(name)
    return tmp_path


def test_defaults_without_any_file(workdir: Path) -> None:
    r = resolve("bench", {}, environ={})
    assert r.file is None
    assert r.config == BenchConfig()
    assert set(r.origins.values()) == {"default"}


def test_file_then_env_then_flags(workdir: Path) -> None:
    (workdir / "autodyn.toml").write_text("[bench]\nrepeat = 7\nvariations = 3\nspread = 1\n")
    env = {"DYNCLI_BENCH_VARIATIONS": "4", "DYNCLI_BENCH_STRATEGY": "static, dynamic"}
    r = resolve("bench", {"variations": 5, "repeat": None}, environ=env)
    assert r.config.repeat == 7 and r.origins["repeat"] == "autodyn.toml"
    assert r.config.spread == 1.0 and isinstance(r.config.spread, float)
    assert r.config.strategy == ["static", "dynamic"]
    assert r.origins["strategy"] == "environment DYNCLI_BENCH_STRATEGY"
    assert r.config.variations == 5 and r.origins["variations"] == "command line"
    assert r.config.warmup == BenchConfig().warmup and r.origins["warmup"] == "default"


def test_found_from_a_subdirectory(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (workdir / "autodyn.toml").write_text("[bench]\nrepeat = 3\n")
    sub = workdir / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    r = resolve("bench", {}, environ={})
    assert r.file == workdir / "autodyn.toml"
    assert r.config.repeat == 3
    assert r.origins["repeat"] == "../../autodyn.toml"


def test_pyproject_tool_table(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text("[project]\nname='x'\n[tool.dyncli.suggest]\nformat = 'shell'\n")
    r = resolve("suggest", {}, environ={})
    assert r.config.format == "shell"
    assert find_config(workdir) == workdir / "pyproject.toml"


def test_pyproject_without_tool_table_is_skipped(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text("[project]\nname='x'\n")
    assert resolve("bench", {}, environ={}).file is None


def test_autodyn_wins_over_pyproject_in_same_dir(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text("[tool.dyncli.bench]\nrepeat = 1\n")
    (workdir / "autodyn.toml").write_text("[bench]\nrepeat = 2\n")
    assert resolve("bench", {}, environ={}).config.repeat == 2


def test_explicit_config_path(workdir: Path) -> None:
    (workdir / "autodyn.toml").write_text("[bench]\nrepeat = 2\n")
    other = workdir / "other.toml"
    other.write_text("[bench]\nrepeat = 9\n")
    assert resolve("bench", {}, config_path=other, environ={}).config.repeat == 9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[bench]\nrepeat = 'ten'\n", "autodyn.toml: bench.repeat: expected int, got 'ten'"),
        ("[bench]\nrepaet = 3\n", "autodyn.toml: bench.repaet: unknown key"),
        ("[bench]\nrepeat = true\n", "autodyn.toml: bench.repeat: expected int, got True"),
        ("[bench]\nstrategy = 'static'\n", "autodyn.toml: bench.strategy: expected list of str, got 'static'"),
        ("[bench]\nstrategy = ['fast']\n", "autodyn.toml: bench.strategy: expected one of static, automatic, mark-dynamic, dynamic, sources, collectives, pad, unbacked, eager-then-compile, pgo, got 'fast'"),
        ("[bench]\nmode = 'train'\n", "autodyn.toml: bench.mode: expected one of inference, training, got 'train'"),
        ("[bnech]\nrepeat = 3\n", "autodyn.toml: [bnech]: unknown table"),
        ("bench = 3\n", "autodyn.toml: bench: expected a table, got 3"),
        ("[suggest]\nfrane = 'x'\n", "autodyn.toml: suggest.frane: unknown key"),
    ],
)
def test_file_errors_name_file_and_key(workdir: Path, text: str, message: str) -> None:
    (workdir / "autodyn.toml").write_text(text)
    # Errors in any table surface whichever command runs: checked before any work starts.
    with pytest.raises(ConfigError) as info:
        resolve("diagnose", {}, environ={})
    assert info.value.message == message
    assert "\n" not in info.value.message


def test_unknown_key_hint_lists_known_keys(workdir: Path) -> None:
    (workdir / "autodyn.toml").write_text("[bench]\nrepaet = 3\n")
    with pytest.raises(ConfigError) as info:
        resolve("bench", {}, environ={})
    assert info.value.hint is not None and "repeat" in info.value.hint


def test_invalid_toml(workdir: Path) -> None:
    (workdir / "autodyn.toml").write_text("[bench\nrepeat = 3\n")
    with pytest.raises(ConfigError, match=r"^autodyn.toml: not valid TOML: "):
        resolve("bench", {}, environ={})


def test_missing_explicit_config(workdir: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.toml: no such config file"):
        resolve("bench", {}, config_path=Path("nope.toml"), environ={})


def test_directory_as_config(workdir: Path) -> None:
    (workdir / "d").mkdir()
    with pytest.raises(ConfigError, match=r"d: is a directory"):
        resolve("bench", {}, config_path=Path("d"), environ={})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DYNCLI_BENCH_REPEAT", "ten", "environment DYNCLI_BENCH_REPEAT: bench.repeat: expected int, got 'ten'"),
        ("DYNCLI_BENCH_FAIL_ON", "oops", "environment DYNCLI_BENCH_FAIL_ON: bench.fail_on: expected one of failures, got 'oops'"),
        ("DYNCLI_BENCH_NOPE", "1", "environment DYNCLI_BENCH_NOPE: bench.nope: unknown key"),
        ("DYNCLI_BENCH_HF_CONFIG", "{bad", "environment DYNCLI_BENCH_HF_CONFIG: bench.hf_config: expected table (as JSON), got '{bad'"),
    ],
)
def test_env_errors(workdir: Path, name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve("bench", {}, environ={name: value})
    assert info.value.message == message


def test_env_parsing(workdir: Path) -> None:
    env = {
        "DYNCLI_BENCH_FAIL_ON": "failures",
        "DYNCLI_BENCH_BATCH_SIZE": "16",
        "DYNCLI_BENCH_SPREAD": "0.5",
        "DYNCLI_BENCH_HF_CONFIG": '{"num_hidden_layers": 2}',
        "DYNCLI_SUGGEST_FRAME": "none",
        "DYNCLI_DIAGNOSE_STRICT": "0",
    }
    b = resolve("bench", {}, environ=env).config
    assert (b.fail_on, b.batch_size, b.spread, b.hf_config) == (["failures"], 16, 0.5, {"num_hidden_layers": 2})
    assert resolve("suggest", {}, environ=env).config.frame is None
    assert resolve("diagnose", {}, environ=env).config.strict is False


def test_env_of_other_tables_is_ignored(workdir: Path) -> None:
    assert resolve("bench", {}, environ={"DYNCLI_SUGGEST_FORMAT": "toml"}).config == BenchConfig()


def test_flag_values_are_validated_too(workdir: Path) -> None:
    with pytest.raises(ConfigError, match=r"command line: bench.strategy: expected one of"):
        resolve("bench", {"strategy": ["static", "warp"]}, environ={})


def test_config_is_frozen(workdir: Path) -> None:
    cfg = resolve("bench", {}, environ={}).config
    with pytest.raises(AttributeError):
        cfg.repeat = 3


def test_repo_autodyn_toml_documents_every_key_with_its_default() -> None:
    text = (REPO / "autodyn.toml").read_text()
    data = tomllib.loads(text)
    assert set(data) == set(TABLES)
    for table in TABLES:
        section = text.split(f"[{table}]", 1)[1].split("\n[", 1)[0]
        for key, default, doc in documented_fields(table):
            assert doc, f"{table}.{key} has no doc"
            if default is None:
                assert re.search(rf"^# {key} = ", section, re.M), f"{table}.{key} missing (commented)"
            else:
                assert data[table].get(key) == default, f"{table}.{key}: file differs from default"
        assert set(data[table]) <= {k for k, _, _ in documented_fields(table)}


def test_config_and_suite_files_are_read_only_up_to_a_bound(tmp_path: Path) -> None:
    from dyncli.bench.core import suites
    from dyncli.config import load_file
    from dyncli.errors import InputError

    # a device or FIFO is refused before it is read (a FIFO with no writer blocked open())
    with pytest.raises(ConfigError, match=r"not a regular file \(a FIFO or device\), not a config file"):
        load_file(Path("/dev/zero"))
    with pytest.raises(InputError, match=r"^/dev/zero: not a regular file"):
        suites.load("/dev/zero")
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(17 << 20)  # sparse: 17 MB of NULs without writing them
    with pytest.raises(ConfigError, match=r"over 16 MB, not a config file"):
        load_file(big)

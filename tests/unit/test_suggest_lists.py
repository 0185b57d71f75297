"""Every source list torch reads (dynamic, unbacked, static), per target torch, and stale state."""

from __future__ import annotations

import json
import re
import shlex
import zlib
from pathlib import Path

import pytest
import suggest_fake_pgo as fake
import tomllib

from dyncli.config import SuggestConfig
from dyncli.errors import UsageError
from dyncli.suggest import source_lists
from dyncli.suggest.api import run
from dyncli.suggest.render import render_fix
from dyncli.suggest.source_lists import NEWEST_KNOWN, parse_entries, resolve_target
from dyncli.suggest.stale import file_hash

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
CFG = SuggestConfig(torch_version="2.15")
HF_IDS = "L['kwargs']['input_ids']"


def _lists(result: object) -> dict[str, str]:
    return {sl.name: sl.value for sl in result.emitted}  # type: ignore[attr-defined]


def test_a_dim_seen_with_size_one_goes_to_the_unbacked_list() -> None:
    result = run(pgo_dir=DATA / "serve", config=CFG)
    assert _lists(result) == {"dynamic": "", "unbacked": "L['args'][0]:0"}
    assert result.env == "TORCH_COMPILE_UNBACKED_SOURCES=\"L['args'][0]:0\""
    assert any("data-dependent" in n for n in result.notes)
    kept = run(pgo_dir=DATA / "serve", unbacked=False, config=CFG)
    assert _lists(kept) == {"dynamic": "L['args'][0]:0"}
    assert kept.sources[0].maybe_dims == (0,)
    # No size 0/1 seen: nothing unbacked.
    assert _lists(run(pgo_dir=DATA / "mlp", config=CFG)) == {"dynamic": "L['args'][0]:0"}


def test_static_sources_leave_the_other_lists_and_are_emitted_for_2_15() -> None:
    result = run(pgo_dir=DATA / "hf", static=f"{HF_IDS}:1", config=CFG)
    assert _lists(result) == {"dynamic": f"{HF_IDS}:0,L['kwargs']['attention_mask']",
                              "static": f"{HF_IDS}:1"}
    assert result.sources[0].static_dims == (1,)
    doc = result.to_dict()
    assert doc["torch_version"] == {"target": "2.15", "from": "--torch-version"}
    assert [(sl["name"], sl["read"]) for sl in doc["lists"]] == [
        ("dynamic", True), ("unbacked", True), ("static", True)]


def test_a_target_that_does_not_read_a_list_gets_a_note_and_no_list() -> None:
    result = run(pgo_dir=DATA / "hf", static=[f"{HF_IDS}:1"], config=SuggestConfig(torch_version="2.14.1"))
    assert _lists(result) == {"dynamic": f"{HF_IDS}:0,L['kwargs']['attention_mask']"}
    assert "TORCH_COMPILE_STATIC_SOURCES" not in render_fix(result, "env")
    assert "TORCH_COMPILE_STATIC_SOURCES" not in render_fix(result, "python")
    assert any("does not read TORCH_COMPILE_STATIC_SOURCES" in n for n in result.notes)
    assert result.source_list("static").entries == (f"{HF_IDS}:1",)  # type: ignore[union-attr]
    assert not result.source_list("static").read  # type: ignore[union-attr]


def test_a_static_scalar_or_whole_source_is_out_of_every_list() -> None:
    result = run(pgo_dir=DATA / "intarg", static="L\\['n", config=CFG)
    assert _lists(result) == {"dynamic": "", "static": "L\\['n"}
    assert not result.sources
    assert any("kept static by --static" in n for n in result.notes)
    # torch ignores ':N' on a scalar source: the entry still pins it.
    assert not run(pgo_dir=DATA / "intarg", static="L['n']:0", config=CFG).sources


def test_every_form_carries_every_list() -> None:
    result = run(pgo_dir=DATA / "serve", static="L['y']", config=CFG)
    env = render_fix(result, "env")
    assert shlex.split(env) == ["TORCH_COMPILE_UNBACKED_SOURCES=L['args'][0]:0",
                                "TORCH_COMPILE_STATIC_SOURCES=L['y']"]
    shell = render_fix(result, "shell").splitlines()
    assert [shlex.split(line) for line in shell] == [["export", w] for w in shlex.split(env)]
    toml_text = render_fix(result, "toml")
    assert tomllib.loads(toml_text)["bench"]["dynamic_sources"] == []
    assert "# TORCH_COMPILE_UNBACKED_SOURCES = [\"L['args'][0]:0\"]" in toml_text
    python = render_fix(result, "python")
    assert python.index("os.environ['TORCH_COMPILE_UNBACKED_SOURCES'] = \"L['args'][0]:0\"") \
        < python.index("import torch")
    compile(python, "<suggest>", "exec")
    doc = json.loads(render_fix(result, "json"))
    assert {sl["env_var"]: sl["value"] for sl in doc["lists"]} == {
        "TORCH_COMPILE_DYNAMIC_SOURCES": "", "TORCH_COMPILE_UNBACKED_SOURCES": "L['args'][0]:0",
        "TORCH_COMPILE_STATIC_SOURCES": "L['y']"}


def test_hostile_static_entries_stay_data_in_every_form() -> None:
    nasty = "L['x\n');import_os#$(id)`'\"]"
    result = run(pgo_dir=DATA / "mlp", static=nasty, config=CFG)
    assert shlex.split(render_fix(result, "env"))[-1] == f"TORCH_COMPILE_STATIC_SOURCES={nasty}"
    code = render_fix(result, "python")
    namespace: dict[str, object] = {}
    env_lines = "\n".join(line for line in code.splitlines() if line.startswith(("import os", "os.environ")))
    exec(compile(env_lines.replace("os.environ", "env"), "<suggest>", "exec"), {"env": namespace, "os": None})
    assert namespace == {"TORCH_COMPILE_STATIC_SOURCES": nasty}
    assert tomllib.loads(render_fix(result, "toml")) == {"bench": {"dynamic_sources": ["L['args'][0]:0"]}}


def test_static_entries_are_checked_as_torch_parses_them() -> None:
    assert [(p.pattern, p.dim) for p in parse_entries("L['x']:1, L['y'],,L\\['z.*", "--static")] == [
        ("L['x']", 1), ("L['y']", None), ("L\\['z.*", None)]
    with pytest.raises(UsageError, match=r"--static: 'L\[' is not a valid regex"):
        parse_entries("L[", "--static")
    with pytest.raises(UsageError, match="longer than 1000"):
        parse_entries("x" * 1001, "--static")


@pytest.mark.filterwarnings("error")
def test_a_pattern_python_warns_about_is_read_as_today_without_pythons_warning() -> None:
    """"[[" in a class: Python's re warns (FutureWarning) and reads it as it does today."""
    from dyncli.diagnose.entries import covers

    [p] = parse_entries("a[[b]:1", "--static")  # "a" then one of "[" and "b"
    assert p.pattern == "a[[b]" and p.dim == 1
    assert p.rx.match("a[") and p.rx.match("ab") and not p.rx.match("ac")
    assert covers(".*[[x]:0", "L['x']:0") and not covers(".*[[x]:0", "L['x']:1")


@pytest.mark.filterwarnings("error")
def test_whether_python_warns_does_not_depend_on_what_the_process_compiled_before() -> None:
    """re.compile answers a pattern it compiled before from its cache, without parsing it
    again and so without the warning: suggest wrote "L['f'][[0]" raw into its lists once
    diagnose or --exclude had compiled the same text quietly earlier in the process."""
    from dyncli.sources import python_warns_about, source_regex
    from dyncli.suggest.entry_text import NameIndex, pattern_for

    name = "L['f'][[0]"
    source_regex(name)  # in re's cache now, compiled with the warning kept quiet
    assert python_warns_about(name) and python_warns_about(name)
    for _ in range(2):
        said: list[str] = []
        assert pattern_for(name, NameIndex({name}), said) == (r"L\['f'\]\[\[0\]$", True)
        assert len(said) == 1 and "set operations" in said[0]
    assert not python_warns_about("L['x']") and not python_warns_about("a[-b]")
    with pytest.raises(re.error):
        python_warns_about("L[")


def test_target_torch_default_is_the_installed_one_else_the_newest_known(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_target("2.13.0") == source_lists.Target("2.13.0", "--torch-version")
    monkeypatch.setattr(source_lists, "installed_torch_version", lambda: "2.14.1+cu130")
    assert resolve_target(None) == source_lists.Target("2.14.1+cu130", "installed torch")
    assert run(pgo_dir=DATA / "hf", static=f"{HF_IDS}:1", config=SuggestConfig()).source_list(
        "static").read is False  # type: ignore[union-attr]
    monkeypatch.setattr(source_lists, "installed_torch_version", lambda: None)
    assert resolve_target(None) == source_lists.Target(NEWEST_KNOWN, "newest known")
    with pytest.raises(UsageError, match="--torch-version"):
        resolve_target("latest")


def test_installed_torch_is_read_from_its_dist_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch-9.8.7+cu999.dist-info").mkdir()
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing"), str(tmp_path), str(site)])
    assert source_lists.installed_torch_version() == "9.8.7+cu999"
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    assert source_lists.installed_torch_version() is None


def test_file_hash_is_torchs_crc32(tmp_path: Path) -> None:
    src = tmp_path / "prog.py"
    src.write_bytes(b"def f(x):\n    return x\n")
    assert file_hash(src) == format(zlib.crc32(src.read_bytes()) & 0xFFFFFFFF, "08x")
    assert re.fullmatch(r"[0-9a-f]{8}", file_hash(src) or "")
    assert file_hash(tmp_path / "missing.py") is None


def _recorded(tmp_path: Path, text: bytes) -> tuple[Path, Path]:
    src = tmp_path / "src" / "prog.py"
    src.parent.mkdir()
    src.write_bytes(text)
    pgo = tmp_path / "code_state_job_None_.pkl"
    pgo.write_bytes(fake.dumps({(str(src), 1, "f"): {"L['x']": fake.tensor(fake.DYN, 3)},
                                ("/elsewhere/other.py", 5, "g"): {"L['y']": fake.tensor(fake.DYN, 2)}},
                               file_hash=file_hash(src)))
    return src, pgo


def test_frames_of_an_edited_file_are_stale_and_left_out(tmp_path: Path) -> None:
    src, pgo = _recorded(tmp_path, b"def f(x):\n    return x * 2\n")
    fresh = run(pgo_dir=pgo, config=CFG)
    assert fresh.stale == () and fresh.value == "L['x']:0,L['y']:0"
    assert any("1 frame(s) not checked" in n for n in fresh.notes)  # /elsewhere/other.py
    src.write_bytes(b"def f(x):\n    return x * 3\n")
    result = run(pgo_dir=pgo, config=CFG)
    [stale] = result.stale
    assert (stale.file, stale.line, stale.function, stale.checked) == (str(src), 1, "f", str(src))
    assert result.value == "L['y']:0"
    assert [r.status for r in result.frames[0].inputs] == ["stale"]
    assert run(pgo_dir=pgo, include_stale=True, config=CFG).value == "L['x']:0,L['y']:0"


def test_source_root_finds_the_file_on_this_machine(tmp_path: Path) -> None:
    _, pgo = _recorded(tmp_path, b"x = 1\n")
    elsewhere = tmp_path / "checkout" / "src"
    elsewhere.mkdir(parents=True)
    (elsewhere / "prog.py").write_bytes(b"x = 2\n")  # the same file, edited, under another root
    result = run(pgo_dir=pgo, source_root=tmp_path / "checkout", config=CFG)
    assert [s.checked for s in result.stale] == [str(elsewhere / "prog.py")]
    with pytest.raises(UsageError, match=r"--source-root .*: not a directory"):
        run(pgo_dir=pgo, source_root=tmp_path / "nope", config=CFG)

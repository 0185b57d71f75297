"""CI's pins, the published floors, bench's oldest torch and the docs say the same thing (no torch
needed)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import tomllib

from dyncli.bench import torch_compat
from dyncli.bench.core import strategy as table

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
TORCH_PINS = ("constraints.txt", "constraints-previous.txt", "constraints-2.11.txt",
              "constraints-oldest.txt")  # newest first
# direct dependencies CI does not install at their floor: the oldest torch and its torchvision
# have their own pins, and the developer's tools are not what a user runs
NOT_LOWEST = {"torch", "torchvision", "ruff", "mypy", "tlparse", "dyncli"}


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / ".ci" / name).read_text()
    return dict(re.findall(r"^([a-z][a-z0-9_-]*)==(\S+)$", text, flags=re.M))


def _key(v: str) -> tuple[int, ...]:
    parts = [int(x) for x in v.split("+")[0].split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def _floors() -> dict[str, str]:
    """Every direct dependency with a ``>=`` floor, from the base and every extra."""
    project = PYPROJECT["project"]
    reqs = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values()
                                       for r in extra)]
    out = {}
    for r in reqs:
        m = re.match(r"^([A-Za-z0-9_.-]+)[^;]*?>=\s*([0-9][0-9.]*)", r)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_every_torch_venv_pins_torch_and_its_torchvision_newest_first() -> None:
    pins = [_pins(name) for name in TORCH_PINS]
    for name, p in zip(TORCH_PINS, pins, strict=True):
        assert set(p) == {"torch", "torchvision"}, name
    releases = [_key(p["torch"]) for p in pins]
    assert releases == sorted(releases, reverse=True) and len(set(releases)) == len(releases)
    assert releases[2][:2] == (2, 11), "a release current CUDA images ship"


def test_the_floor_is_the_oldest_release_ci_tests() -> None:
    oldest = _pins("constraints-oldest.txt")
    floors = _floors()
    assert _key(floors["torch"])[:2] == _key(oldest["torch"])[:2] == torch_compat.OLDEST
    # the oldest torch's own torchvision meets the torchvision floor: pip keeps that pair
    assert _key(floors["torchvision"]) <= _key(oldest["torchvision"])
    assert _key(floors["torchvision"])[:2] == _key(oldest["torchvision"])[:2]
    for row in table.TABLE:  # a strategy that needs a newer torch than the floor says which
        assert row.needs_torch is None or table.release(row.needs_torch) > torch_compat.OLDEST


def test_lowest_pins_are_the_floors() -> None:
    """CI installs the lowest version the metadata allows of every other direct dependency."""
    lowest, floors = _pins("constraints-lowest.txt"), _floors()
    assert "torch" not in lowest and "torchvision" not in lowest  # the user's, kept
    wanted = {name for name in floors if name not in NOT_LOWEST}
    assert set(lowest) == wanted
    for name in wanted:
        assert _key(lowest[name]) == _key(floors[name]), name


def test_ci_runs_every_venv_as_documented() -> None:
    # one line per command: continuations joined, runs of spaces as one
    script = re.sub(r"[ \t]+", " ", (ROOT / ".ci" / "run").read_text().replace("\\\n", " "))
    assert 'PIP_CONSTRAINT="$ROOT/$2"' in script  # replaces a machine-wide cap
    assert "install .venv .ci/constraints.txt" in script
    assert "install .venv-previous .ci/constraints-previous.txt" in script
    assert "install_onto_torch .venv-2.11 .ci/constraints-2.11.txt /dev/null" in script
    assert ('install_onto_torch .venv-oldest .ci/constraints-oldest.txt '
            '"$ROOT/.ci/constraints-lowest.txt"') in script
    first = script.split("ready previous", 1)[0]  # the newest venv's steps, in this order
    # (the timing step: three workers stealing work, so its three long waits overlap)
    steps = ["run_pytest .venv/bin/python -m pytest -m timing -n 3 --dist worksteal\n",
             "run_pytest .venv/bin/python -m pytest -m 'not long' -n auto --dist loadfile\n",
             "run_pytest .venv/bin/python -m pytest -m 'long and not timing' -n auto --dist "
             "loadfile\n"]
    assert all(step in first for step in steps), first
    assert [first.index(step) for step in steps] == sorted(first.index(step) for step in steps)
    assert "XDIST=(-n auto --dist loadfile)" in script  # a worker per core, a file on each
    # the previous release's, 2.11's and the oldest's side by side, each checked when it ends
    assert ('run_pytest_beside previous .venv-previous/bin/python -m pytest "${XDIST[@]}" '
            '"${BENCH_VERSION_TESTS[@]}" "${TORCH_FORMAT_TESTS[@]}"') in script
    # (2.11's two long files first, each on a worker from the start: its tail left a core idle)
    assert ('run_pytest_beside 2.11 .venv-2.11/bin/python -m pytest "${XDIST[@]}" '
            '--no-loadscope-reorder "${PROCESS_EACH_TESTS[@]}" "${BENCH_VERSION_TESTS[@]}"') in script
    assert re.search(r"BENCH_VERSION_TESTS=\(\n\s*tests/integration/test_bench_stream\.py::", script)
    assert ('run_pytest_beside oldest .venv-oldest/bin/python -m pytest "${XDIST[@]}" '
            '"${BENCH_VERSION_TESTS[@]}" "${EVERY_TORCH_TESTS[@]}" "${OLDEST_ERRORS_TESTS[@]}" '
            'tests/docs/test_docs_parse.py') in script
    assert ("finish_pytest 2.11 || failed=1\nfinish_pytest previous || failed=1\n"
            "finish_pytest oldest || failed=1\n") in script
    # all three started before the first is waited for
    last_start = max(script.index(f"run_pytest_beside {name} ") for name in
                     ("previous", "2.11", "oldest"))
    assert last_start < script.index("finish_pytest 2.11")
    # the other venvs' installs start before the newest's
    assert script.index('install_the_others "$logs" &') < script.index("\ninstall .venv ")
    assert "tests/docs/test_docs_parse.py" in script.split("ready oldest", 1)[1]
    for name in ("BENCH_VERSION_TESTS", "PROCESS_EACH_TESTS", "TORCH_FORMAT_TESTS",
                 "OLDEST_ERRORS_TESTS"):
        listed = re.search(name + r"=\((.*?)\)", script, re.S)
        assert listed, name
        for test in shlex.split(listed.group(1)):  # a test with a parameter id is quoted
            path, _, function = test.partition("::")
            function, _, param = function.partition("[")
            assert not param or (param.endswith("]") and "[" not in param), test
            assert (ROOT / path).is_file(), test  # pytest errors on a missing one too; this
            assert not function or re.search(  # says which, without running torch
                rf"^def {re.escape(function)}\(", (ROOT / path).read_text(), re.M), test
    markers = PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("torch:") for m in markers)


def test_ci_python_writes_byte_code_for_what_the_installs_left_uncompiled() -> None:
    # pip installs with --no-compile; with PYTHONDONTWRITEBYTECODE=1 inherited from the
    # machine, every process would compile torch's sources again (22 CPU-s against 8 to import
    # torch, dynamo and inductor): the script unsets it before it installs or runs anything
    script = (ROOT / ".ci" / "run").read_text()
    assert "--no-compile" in script
    unset = script.index("\nunset PYTHONDONTWRITEBYTECODE\n")
    assert unset < script.index("\ninstall .venv ") and unset < script.index("\nstart_hog\n")


def test_ci_keeps_no_wheel_cache_and_prints_the_free_disk() -> None:
    # four CUDA torch venvs (about 23 GB) on a shared disk: CI failed once with 'No space left
    # on device'; pip keeps no cache of their wheels, and the free space is in the log
    script = (ROOT / ".ci" / "run").read_text()
    export = script.index("\nexport PIP_NO_CACHE_DIR=1\n")
    assert export < script.index("\ninstall .venv ")
    assert export < script.index("\ninstall_the_others() {")
    run_pytest = script[script.index("run_pytest() {"):]
    assert "$(disk_free)" in run_pytest.split("\n}\n", 1)[0]
    disk_free = re.search(r"^disk_free\(\) \{.*?^\}$", script, re.M | re.S)
    assert disk_free
    out = subprocess.run(["bash", "-c", f"ROOT=.\n{disk_free.group(0)}\ndisk_free"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=30).stdout
    assert re.fullmatch(r"\d+ GB free", out), out


def test_the_docs_name_every_tested_torch() -> None:
    for doc in ("README.md", "docs/torch-versions.md"):
        text = (ROOT / doc).read_text()
        for name in TORCH_PINS:
            assert _pins(name)["torch"] in text, (doc, name)


def test_test_files_have_unique_names() -> None:
    # tests/ has no __init__.py files: pytest imports each test module by its basename, so two
    # files of one name (tests/unit/x.py, tests/integration/x.py) stop the whole run at
    # collection ("import file mismatch") though each passes alone.
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {n: p for n, p in names.items() if len(p) > 1}

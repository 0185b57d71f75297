"""bench's layers, read from the imports: command -> api -> engine -> core -> render, one way."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "dyncli" / "bench"
RENDER = {"dyncli.bench.render", "dyncli.bench.render_files", "dyncli.bench.render_ranks",
          "dyncli.bench.suite_render"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_core_imports_only_the_core_and_shared_modules() -> None:
    for path in sorted((BENCH / "core").glob("*.py")):
        bench = {m for m in _imports(path) if m.startswith("dyncli.bench")}
        assert all(m.startswith("dyncli.bench.core") for m in bench), (path.name, bench)
        assert not any(m.split(".")[0] == "torch" for m in _imports(path)), path.name


def test_the_engine_never_imports_the_renderers_or_the_commands() -> None:
    for path in sorted(BENCH.glob("*.py")):
        if f"dyncli.bench.{path.stem}" in RENDER:
            continue
        wrong = {m for m in _imports(path)
                 if m in RENDER or m.startswith(("dyncli.commands", "dyncli.cli"))}
        assert not wrong, (path.name, wrong)


def test_renderers_read_only_the_core() -> None:
    for name in RENDER:
        path = BENCH / f"{name.rsplit('.', 1)[1]}.py"
        bench = {m for m in _imports(path) if m.startswith("dyncli.bench")}
        assert all(m.startswith("dyncli.bench.core") or m in RENDER
                   or m.rsplit(".", 1)[0] in RENDER or m == "dyncli.bench" for m in bench), \
            (path.name, bench)

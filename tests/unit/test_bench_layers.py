"""Layers, read from the imports: no circle anywhere in dyncli; bench's command -> api -> engine
-> core -> render, one way; the serving code ``--emit python`` copies stands alone."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DYNCLI = ROOT / "dyncli"
BENCH = DYNCLI / "bench"
RENDER = {"dyncli.bench.render", "dyncli.bench.render_files", "dyncli.bench.render_ranks",
          "dyncli.bench.suite_render"}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:`` (never imported at run time)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            out.update(id(x) for b in node.body for x in ast.walk(b))
    return out


def _imports(path: Path, package: str = "") -> set[str]:
    """Every name a module imports at run time (also inside functions), relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def _modules() -> dict[str, Path]:
    out = {}
    for path in DYNCLI.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the dyncli modules importing it runs: each one named, and every package
    ``__init__`` on the way to it (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for imported in _imports(path, package):
            parts = imported.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in mods and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_the_import_graph_of_dyncli_has_no_circles() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "dyncli.bench.core.strategy" in graph["dyncli.config"]
    assert [sorted(c) for c in cycles(graph)] == []


def test_the_cycle_finder_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [frozenset("abc")]
    assert cycles({"a": {"b"}, "b": set()}) == []


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


def test_the_serving_code_stands_alone() -> None:
    """``--emit python`` copies dyncli/bench/served.py below its docstring: it may import only
    torch and the standard library, assign nothing at module level (the plan literal is the
    emitted module's one assignment) and run without ``from __future__``."""
    tree = ast.parse((BENCH / "served.py").read_text(encoding="utf-8"))
    roots = {m.split(".")[0] for m in _imports(BENCH / "served.py")}
    assert roots <= {"torch"} | set(sys.stdlib_module_names), roots
    assert not [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))]
    assert not [n for n in tree.body if isinstance(n, ast.ImportFrom)
                and n.module == "__future__"]


def test_no_engine_module_branches_on_a_strategy_name() -> None:
    """What a strategy does is its row's: no ``strategy == "pgo"`` (or ``in (…)``) anywhere
    but the table."""
    names = {row for row in _table_names()}
    for path in sorted(BENCH.rglob("*.py")):
        if path.name == "strategy.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                consts = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
                assert not (consts & names), (path.name, node.lineno, consts & names)


def _table_names() -> set[str]:
    from dyncli.bench.core import strategy

    return {s.name for s in strategy.TABLE if s.compiles}

"""Output injection, as properties: a hostile name never becomes code, config, a shell command
or a terminal control sequence (issue 22, classes 11-14).

For file, function and source names made of newlines, quotes, control, bidi and shell
characters: the generated Python parses with ``ast`` into exactly the expected statements,
the TOML parses back to the same entries, the shell line sets exactly the intended variable in
``sh`` and runs nothing, and no ESC/C0/C1/DEL character of an input reaches a human view.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dyncli.config import SuggestConfig
from dyncli.quoting import py_comment, py_str, shell_quote, toml_comment, toml_str
from dyncli.suggest.allowlist import build_allowlist
from dyncli.suggest.pgo_state import DYNAMIC, Entry, FrameKey, PgoState
from dyncli.suggest.render import print_allowlist, render_fix
from dyncli.suggest.result import ENV_VAR, AllowList
from dyncli.textsafe import UNSAFE, visible

HOSTILE = [*"ab_x0'\"\\$`;()|&<>!*?~#,:.[]{} =\n\r\t",
    "\x1b", "\x07", "\x00", "\x7f", "\x9b", "\x85", "\u202e", "\u2028", "\udcff", "$(touch pwned)",
    "\x1b]0;title\x07", "\x1b[2J", "'; import os; os.system('id') #"]
names = st.lists(st.sampled_from(HOSTILE), max_size=8).map("".join)


def _sources(draw: st.DrawFn) -> str:
    name = draw(names)
    form = draw(st.integers(0, 4))
    return [f"L[{name!r}]", f"L['x'][{name!r}]", f"L['x']['{name}']", f"L['self'].{name}",
            name][form]


@st.composite
def states(draw: st.DrawFn) -> PgoState:
    state = PgoState()
    for i in range(draw(st.integers(1, 3))):
        key = FrameKey(draw(names) or "f.py", i + 1, draw(names) or "fn")
        for _ in range(draw(st.integers(1, 3))):
            size = (DYNAMIC, 3) if draw(st.booleans()) else (DYNAMIC,)
            state.add(key, _sources(draw), Entry(scalar=DYNAMIC, size=size, stride=DYNAMIC))
    return state


CFG = SuggestConfig(include_params=True)
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _allowlist(state: PgoState) -> AllowList:
    return build_allowlist(state, CFG)


def _source_of(node: ast.expr) -> str:
    """The dynamo source name a mark_dynamic argument stands for (``kwargs['ids']`` → L[…])."""
    if isinstance(node, ast.Name):
        return f"L[{node.id!r}]"
    assert isinstance(node, ast.Subscript), ast.dump(node)
    key = node.slice
    assert isinstance(key, ast.Constant) and type(key.value) in (int, str), ast.dump(node)
    return f"{_source_of(node.value)}[{key.value!r}]"


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    assert isinstance(node, ast.Attribute), ast.dump(node)
    return f"{_dotted(node.value)}.{node.attr}"


@PROPS
@given(states())
def test_python_form_parses_into_exactly_the_expected_statements(state: PgoState) -> None:
    s = _allowlist(state)
    code = render_fix(s, "python")
    tree = ast.parse(code)
    rest = [e for src in s.sources if src.local is None for e in src.entries]
    marked = {src.source: src for src in s.sources if src.local is not None}
    body = list(tree.body)
    environ: dict[str, str] = {}
    if isinstance(body[0], ast.Import) and [a.name for a in body[0].names] == ["os"]:
        body.pop(0)  # the lists, as os.environ[NAME] = 'value' before torch
        while isinstance(body[0], ast.Assign) and _dotted(body[0].targets[0].value) == "os.environ":  # type: ignore[attr-defined]
            assign = body.pop(0)
            assert isinstance(assign, ast.Assign)
            key = assign.targets[0].slice  # type: ignore[attr-defined]
            assert isinstance(key, ast.Constant) and type(key.value) is str
            assert isinstance(assign.value, ast.Constant) and type(assign.value.value) is str
            environ[key.value] = assign.value.value
    first = body.pop(0)
    assert isinstance(first, ast.Import) and [a.name for a in first.names] == ["torch"]
    # Round 26: the sources no mark reaches are the dynamic list's default, set in the
    # environment (a torch.compiler.config override is thread-local)
    assert environ.get("TORCH_COMPILE_DYNAMIC_SOURCES") == (",".join(rest) if rest else None)
    calls = 0
    for stmt in body:  # nothing but calls of mark_dynamic on a frame's own input
        assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call), ast.dump(stmt)
        call = stmt.value
        assert _dotted(call.func) in ("torch._dynamo.mark_dynamic", "torch._dynamo.maybe_mark_dynamic")
        assert len(call.args) == 2 and not call.keywords
        assert _source_of(call.args[0]) in marked
        dims = call.args[1]
        assert (isinstance(dims, ast.Constant) and type(dims.value) is int) or \
            (isinstance(dims, ast.List) and all(isinstance(d, ast.Constant) for d in dims.elts))
        calls += 1
    assert calls >= len(marked)
    assert not UNSAFE.search(code.replace("\n", ""))


@PROPS
@given(states())
def test_toml_form_parses_back_to_the_same_entries(state: PgoState) -> None:
    s = _allowlist(state)
    text = render_fix(s, "toml")
    doc = tomllib.loads(text)
    assert doc == {"bench": {"dynamic_sources": [e for src in s.sources for e in src.entries]}}
    assert not UNSAFE.search(text.replace("\n", ""))


SH = shutil.which("sh")


def _run_sh(script: str, cwd: Path) -> tuple[str, set[str]]:
    out = subprocess.run([SH or "sh", "-c", script + '\nenv > "$HOME/.env.txt"\n'
                          f'printf %s "${ENV_VAR}"'], cwd=cwd, capture_output=True, text=True,
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)},
                         timeout=10, check=False)
    names = {line.split("=", 1)[0] for line in (cwd / ".env.txt").read_text().splitlines() if "=" in line}
    (cwd / ".env.txt").unlink()
    return out.stdout, names


@pytest.mark.skipif(SH is None, reason="no sh")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(states())
def test_shell_form_sets_exactly_the_variable_and_runs_nothing(tmp_path: Path, state: PgoState) -> None:
    s = _allowlist(state)
    work = tmp_path / "w"
    work.mkdir(exist_ok=True)
    _, baseline = _run_sh("", work)
    for fmt in ("shell", "env"):
        value, env = _run_sh(render_fix(s, fmt), work)
        assert value == s.value
        assert sorted(p.name for p in work.iterdir()) == []  # nothing ran: `touch pwned` made nothing
        assert env - baseline == ({ENV_VAR} if fmt == "shell" else set())


@PROPS
@given(states())
def test_no_control_character_of_a_name_reaches_the_terminal(state: PgoState) -> None:
    import contextlib
    import io

    s = _allowlist(state)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for fmt in ("env", "shell", "toml", "python"):
            print_allowlist(s, fmt, None)
    text = out.getvalue() + err.getvalue()
    assert not UNSAFE.search(text.replace("\n", "")), ascii(text)


@PROPS
@given(names)
def test_the_quoting_helpers(name: str) -> None:
    assert ast.literal_eval(py_str(name)) == name
    assert "\n" not in py_comment(name) and "\r" not in py_comment(name)
    assert ast.parse(py_comment(name) + "\nx = 1").body[0].lineno == 2  # one comment line
    if "\udcff" not in name:
        assert tomllib.loads(f"k = {toml_str(name)}  {toml_comment(name)}\n") == {"k": name}
    else:
        with pytest.raises(ValueError):
            toml_str(name)
    quoted = shell_quote(name)
    assert not UNSAFE.search(visible(name))
    if "\x00" not in name and "\udcff" not in name and SH:
        out = subprocess.run([SH, "-c", f"printf %s {quoted}"], capture_output=True, timeout=10,
                             check=False)
        assert out.stdout == name.encode()

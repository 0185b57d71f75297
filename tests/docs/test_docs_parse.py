"""Every documented ``dyncli`` command line parses with the typer and click installed here.

No torch, nothing run: each line of README.md and docs/*.md that calls dyncli (also inside
``$(…)`` and after ``.venv/bin/``) goes through click's own parser — every option must exist
and every value must convert — the way the installed typer builds the app. CI runs this file in
the venv that holds the lowest versions the metadata allows (``.ci/constraints-lowest.txt``):
typer 0.27.2 turned ``device: … typer.Option(metavar="DEVICE")`` into ``--DEVICE``, so the
README's ``--device cpu`` failed there and nowhere else (issue #32).

And every document (each file under docs/, and the top-level ``*.md``: README.md, CHANGELOG.md)
is refused by ``dyncli diagnose`` as not a torch log: they quote torch's lines in prose
(inline code, tables) and show them in fences, and diagnose read CHANGELOG.md as a log with a
graph break (its one record a warning quoted in a code span over a line's end) and
docs/diagnose-trace.md as one with a record it did not understand (a trace's line).
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
from pathlib import Path
from types import ModuleType
from typing import Any, get_args, get_type_hints

import doccmds
import pytest
import typer
import typer.main
from typer.models import OptionInfo
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError

# `dyncli ARGS` up to the end of the command: a shell operator, a redirection or `$(…)`'s end.
_CALL = re.compile(r"(?:^|[\s(/])dyncli(?![\w.\[-])((?:\s+[^|&;>)\s\"']+|\s+\"[^\"]*\"|\s+'[^']*')*)")
COMMANDS = [info.name for info in app.registered_commands]


def _calls() -> dict[str, list[str]]:
    """``{dyncli argument string: [file:line, …]}`` for every documented dyncli call."""
    out: dict[str, list[str]] = {}
    for line, where in doccmds.commands().items():
        for m in _CALL.finditer(line):
            args = m.group(1).strip()
            for one in ([args.replace("COMMAND", c) for c in COMMANDS]
                        if "COMMAND" in args else [args]):
                out.setdefault(one, []).extend(where)
    return out


CALLS = _calls()
GROUP: Any = typer.main.get_command(app)


def _click_exceptions() -> ModuleType:
    """The click that typer builds on: the ``click`` package, or its own copy
    (``typer._click``, typer 0.2x)."""
    core = next(c for c in type(GROUP).__mro__ if c.__name__ == "Command").__module__
    return importlib.import_module(core.rsplit(".", 1)[0] + ".exceptions")


EXC = _click_exceptions()


def parse(argv: list[str]) -> None:
    """Parse ``dyncli ARGV`` as the installed click would, without running the command."""
    group = GROUP
    with group.make_context("dyncli", list(argv)) as ctx:
        # click 8.2 keeps the command's name in _protected_args (protected_args is deprecated)
        protected = getattr(ctx, "_protected_args", None) or ctx.protected_args
        rest = [*protected, *ctx.args]
        if not rest:
            return
        name, cmd, args = group.resolve_command(ctx, rest)
        assert cmd is not None, name
        with cmd.make_context(name, args, parent=ctx):
            pass


def test_the_docs_call_every_command() -> None:
    called = {shlex.split(c)[0] for c in CALLS if c and not c.startswith("-")}
    assert called == set(COMMANDS), called


@pytest.mark.parametrize("args", sorted(CALLS), ids=lambda a: a[:60])
def test_documented_call_parses(args: str) -> None:
    try:
        parse(shlex.split(args))
    except typer.Exit as e:  # --help, --version: eager, and they exit 0
        assert e.exit_code == 0, (args, CALLS[args])
    except EXC.UsageError as e:
        raise AssertionError(f"{CALLS[args]}: dyncli {args}: {e.format_message()}") from None


def test_bench_has_the_options_the_readme_uses() -> None:
    """The options issue #32 lost on typer 0.27.2, by the names click will accept."""
    bench = GROUP.commands["bench"]
    names = {o for p in bench.params for o in getattr(p, "opts", ())}
    assert {"--device", "--mode", "--dtype"} <= names, sorted(names)
    parse(["bench", "x", "--device", "cpu", "--mode", "inference", "--dtype", "float32"])


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)], ids=lambda c: " ".join(c))
def test_help_of_every_command(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_every_option_names_its_flag() -> None:
    """No option's flag is derived from its parameter name: typer 0.27 derived ``--DEVICE``
    from ``device`` with ``metavar="DEVICE"`` (its flag took the metavar's case)."""
    derived = []
    for info in app.registered_commands:
        fn: Any = info.callback
        hints = get_type_hints(fn, include_extras=True)
        for name in inspect.signature(fn).parameters:
            opts = [a for a in get_args(hints.get(name)) if isinstance(a, OptionInfo)]
            # in Annotated, typer takes a first positional "--flag" (OptionInfo.default) as a
            # declaration, like the later ones (param_decls)
            decls = [d for d in (opts[0].default, *(opts[0].param_decls or ()))
                     if isinstance(d, str) and d.startswith("-")] if opts else []
            if opts and not decls:
                derived.append(f"{info.name}: {name}")
    assert not derived, derived


ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted({*(p for p in (ROOT / "docs").rglob("*") if p.is_file()), *ROOT.glob("*.md")})


def test_the_documents_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in DOCUMENTS}
    assert {"README.md", "CHANGELOG.md", "docs/diagnose.md", "docs/diagnose-trace.md"} <= names


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_diagnose_refuses_every_document(doc: Path) -> None:
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([doc])

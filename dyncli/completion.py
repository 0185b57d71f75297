"""Shell completion: option values and model names, and the scripts for bash, zsh and fish.

Completing runs ``dyncli`` once per TAB, so nothing here imports torch, torchvision or timm:
torchvision's model names are read from its source files (the ``@register_model`` functions
of ``torchvision/models/*.py``), which takes milliseconds where importing it takes seconds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")

# compiled on first use (re caches it): nothing is compiled while the app starts
_REGISTERED = r"@register_model\([^)]*\)\s*(?:@[^\n]*\n\s*)*def\s+(\w+)\s*\("


def _torchvision_names() -> list[str]:
    """torchvision's classification models (the names ``bench`` accepts bare), without import."""
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("torchvision")
        if spec is None or not spec.submodule_search_locations:
            return []
        models = Path(next(iter(spec.submodule_search_locations))) / "models"
        names: set[str] = set()
        for file in models.glob("*.py"):  # the top level only: detection etc. are not bench's
            with contextlib.suppress(OSError, UnicodeDecodeError):
                names.update(re.findall(_REGISTERED, file.read_text(encoding="utf-8")))
        return sorted(names)
    return []


def _python_files(incomplete: str) -> list[str]:
    """``FILE.py:`` candidates under the directory being typed (one level, no hidden files)."""
    base = Path(incomplete).parent if "/" in incomplete else Path(".")
    out: list[str] = []
    with contextlib.suppress(OSError):
        for p in sorted(base.iterdir()):
            if p.name.startswith(".") or p.name.startswith("__"):
                continue
            text = str(p) if "/" in incomplete else p.name
            if p.is_dir():
                out.append(text + "/")
            elif p.suffix == ".py":
                out.append(text + ":")
    return out


def complete_model(incomplete: str) -> list[str]:
    """Model names for ``dyncli bench <TAB>``: torchvision names, ``hf:`` examples, ``timm:``,
    and ``.py`` files in the directory being typed (``examples/model.py:``)."""
    examples: Sequence[str] = ()
    # dyncli.bench refuses to import without torch: then no hf: names, files still
    with contextlib.suppress(Exception):
        from dyncli.bench.models import HF_EXAMPLES as examples

    if ":" in incomplete and incomplete.partition(":")[0].endswith(".py"):
        path = incomplete.partition(":")[0]
        with contextlib.suppress(OSError, UnicodeDecodeError):
            funcs = re.findall(r"^def\s+(\w+)\s*\(", Path(path).read_text(encoding="utf-8"),
                               re.MULTILINE)
            return [f"{path}:{f}" for f in funcs if f"{path}:{f}".startswith(incomplete)]
        return []
    names = _torchvision_names() + [f"hf:{n}" for n in examples] + ["timm:"]
    if incomplete.startswith((".", "/", "~")) or "/" in incomplete:
        names = []
    names += _python_files(incomplete)
    return [n for n in names if n.startswith(incomplete)]


def comma_list(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """Completion of a comma list: ``static,au<TAB>`` -> ``static,automatic``."""

    def complete(incomplete: str) -> list[str]:
        done, _, last = incomplete.rpartition(",")
        head = f"{done}," if done else ""
        taken = set(done.split(",")) if done else set()
        return [head + c for c in choices if c.startswith(last) and c not in taken]

    return complete


def one_of(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """Completion of one value among ``choices``."""

    def complete(incomplete: str) -> list[str]:
        return [c for c in choices if c.startswith(incomplete)]

    return complete


def strategies(incomplete: str) -> list[str]:
    """``--strategy`` values (dyncli.config is imported on TAB, not at start-up)."""
    from dyncli.config import STRATEGIES

    return comma_list(STRATEGIES)(incomplete)


def rank_shapes(incomplete: str) -> list[str]:
    """``--rank-shapes`` values."""
    from dyncli.config import RANK_SHAPES

    return one_of(RANK_SHAPES)(incomplete)


devices = one_of(("auto", "cpu", "cuda"))
dtypes = one_of(("float32", "bfloat16", "float16", "amp"))
modes = one_of(("inference", "training"))
vary = comma_list(("batch", "seq"))
bench_fail_on = comma_list(("failures",))
diagnose_fail_on = comma_list(("recompiles", "specializations", "graph-breaks"))
compare_fail_on = comma_list(("regression", "recompiles"))
compare_formats = one_of(("table", "markdown", "json"))
suggest_formats = one_of(("env", "shell", "toml", "python", "json"))


def _script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="dyncli", complete_var="_DYNCLI_COMPLETE", shell=shell)


def _shell(value: str) -> str:
    if value and value != "auto":
        if value not in SHELLS:
            raise typer.BadParameter(f"no completion for shell {value!r}; give one of: "
                                     + ", ".join(SHELLS))
        return value
    from typer._completion_shared import _get_shell_name

    return _get_shell_name() or "bash"


def show(ctx: Any, _param: Any, value: str | None) -> None:
    """``--show-completion [SHELL]``: print the script for SHELL (default: the current shell)."""
    if value is None or ctx.resilient_parsing:
        return
    typer.echo(_script(_shell(value)))
    raise typer.Exit(0)


def install(ctx: Any, _param: Any, value: str | None) -> None:
    """``--install-completion [SHELL]``: install the script into SHELL's start-up files."""
    if value is None or ctx.resilient_parsing:
        return
    from typer._completion_shared import install as typer_install

    shell, path = typer_install(shell=_shell(value), prog_name="dyncli",
                                complete_var="_DYNCLI_COMPLETE")
    typer.echo(f"{shell} completion installed in {path}; it takes effect in a new shell")
    raise typer.Exit(0)


def init() -> None:
    """Typer's completion classes (they read ``_TYPER_COMPLETE_ARGS`` from its zsh/fish
    scripts); registered once, before the app runs."""
    from typer._completion_classes import completion_init

    completion_init()



def default_shell(argv: list[str]) -> None:
    """``--show-completion`` / ``--install-completion`` given without a shell (last, or before
    another option): the current shell, as ``auto``. The options take a value so that
    ``--show-completion zsh`` prints zsh's script."""
    for i, arg in enumerate(argv):
        if arg in ("--show-completion", "--install-completion") and (
                i + 1 == len(argv) or argv[i + 1].startswith("-")):
            argv.insert(i + 1, "auto")
            return

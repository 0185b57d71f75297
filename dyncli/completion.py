"""Shell completion: option values and model names, and the scripts for bash, zsh and fish.

Completing runs ``dyncli`` once per TAB, so nothing here imports torch, torchvision, timm or
transformers: model names are read from their source files (:mod:`dyncli.completion_models`).

bash splits a word at the characters of ``COMP_WORDBREAKS``, ``:`` among them, so
``examples/model.py:bu`` reaches a completion function as three words and bash replaces only
what follows the last ``:``. dyncli's bash script therefore also sends the line up to the
cursor: the word is read from it whole, and each completion is given back without the part
before its last break character (what bash-completion's ``__ltrim_colon_completions`` does).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import typer

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def complete_model(incomplete: str) -> list[str]:
    """Model names for ``dyncli bench <TAB>`` (:mod:`dyncli.completion_models`, on TAB only)."""
    from dyncli.completion_models import complete_model as names

    return names(incomplete)


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


# typer's bash script (typer 0.12-0.28) with the line up to the cursor and the break
# characters sent along, and no space after a directory or a FILE.py: (completed further)
BASH_SCRIPT = """
%(complete_func)s() {
    local IFS=$'\\n'
    COMPREPLY=( $( env COMP_WORDS="${COMP_WORDS[*]}" \\
                   COMP_CWORD=$COMP_CWORD \\
                   _DYNCLI_COMP_LINE="${COMP_LINE:0:COMP_POINT}" \\
                   _DYNCLI_COMP_WORDBREAKS="$COMP_WORDBREAKS" \\
                   %(autocomplete_var)s=complete_bash $1 ) )
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *[/:] ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}

complete -o default -F %(complete_func)s %(prog_name)s
"""


def init() -> None:
    """Typer's completion classes (they read ``_TYPER_COMPLETE_ARGS`` from its zsh/fish
    scripts), and dyncli's bash script and class in place of typer's; registered once, before
    the app runs. The bash class is only made when completing (its environment is set)."""
    from typer import _completion_shared
    from typer._completion_classes import completion_init

    completion_init()
    _completion_shared._completion_scripts["bash"] = BASH_SCRIPT
    if os.environ.get("_DYNCLI_COMPLETE") == "complete_bash":
        from typer._completion_classes import BashComplete

        # click's registry, wherever this typer takes click from (its own copy since 0.2x)
        registry = sys.modules[BashComplete.__mro__[1].__module__]
        registry.add_completion_class(_bash_class(BashComplete), "bash")


def _bash_class(base: Any) -> Any:
    from typer._completion_classes import click_split_arg_string as split

    class DyncliBash(base):
        """Reads the word from the line (``_DYNCLI_COMP_LINE``), not from bash's pieces."""

        cut = ""

        def get_completion_args(self) -> tuple[list[str], str]:
            line = os.environ.get("_DYNCLI_COMP_LINE", "")
            if not line.strip():  # an older script, or a test setting COMP_WORDS alone
                return super().get_completion_args()
            words = split(line)
            incomplete = "" if line[-1:].isspace() or not words else words.pop()
            breaks = set(os.environ.get("_DYNCLI_COMP_WORDBREAKS", "")) - set(" \t\n\"'")
            last = max((incomplete.rfind(c) for c in breaks), default=-1)
            self.cut = incomplete[: last + 1]
            return words[1:], incomplete

        def format_completion(self, item: Any) -> str:
            value = str(item.value)
            return value[len(self.cut):] if self.cut and value.startswith(self.cut) else value

    return DyncliBash



def default_shell(argv: list[str]) -> None:
    """``--show-completion`` / ``--install-completion`` given without a shell (last, or before
    another option): the current shell, as ``auto``. The options take a value so that
    ``--show-completion zsh`` prints zsh's script."""
    for i, arg in enumerate(argv):
        if arg in ("--show-completion", "--install-completion") and (
                i + 1 == len(argv) or argv[i + 1].startswith("-")):
            argv.insert(i + 1, "auto")
            return

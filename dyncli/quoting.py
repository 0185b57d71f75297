"""Names from PGO state, written into generated Python, TOML and shell by each one's own quoting.

A file, function or source name comes from a shared cache, a copied pickle or a trace: it can
hold a newline, a quote, ``$( … )``, an ESC. ``suggest`` prints code, config and shell lines
that users paste, so a name must never become a statement there. Each form has one function
here, and every renderer of every source list calls these (never an f-string with a name):

- Python: :func:`py_str` (``repr``) and :func:`py_comment` (a comment that cannot hold a newline);
- TOML: :func:`toml_str` (a basic string, every control character escaped) and :func:`toml_comment`;
- shell: :func:`shell_quote` (double quotes only for a plain set of characters, else single
  quotes as ``shlex.quote`` writes them), and :func:`shell_word` for an argument of a command
  line (a path as the user gave it: bare when nothing in it needs quoting).

:func:`representable` says whether a name can be emitted in every form and shown on a terminal
as it is; ``suggest`` leaves out a source that cannot, with a warning.
"""

from __future__ import annotations

import re

from dyncli.textsafe import is_safe, visible

# Characters that stay literal inside double quotes in sh, bash (also interactive: no '!') and zsh.
_PLAIN_SHELL = re.compile(r"[A-Za-z0-9_.,:\[\]'*()+\-/=@%^~{} ]*\Z")
# Characters a shell word may hold bare (shlex.quote's own set)
_BARE_SHELL = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")


def representable(name: str) -> bool:
    """Whether ``name`` can go into every generated form and onto a terminal unchanged: no
    control, bidi or surrogate character, and no NUL (which no shell string can hold)."""
    return is_safe(name)


def py_str(text: str) -> str:
    """A Python string literal of ``text`` on one line (``repr`` escapes newlines and quotes)."""
    return repr(text)


def py_comment(text: str) -> str:
    """``# text`` with every line break and control character escaped: one comment line."""
    return "# " + visible(text)


def toml_str(text: str) -> str:
    """A TOML basic string of ``text``; ``ValueError`` for a lone surrogate (TOML has none)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0xD800 <= code < 0xE000:
            raise ValueError("a lone surrogate cannot be written in TOML")
        elif code < 0x20 or 0x7F <= code < 0xA0 or not is_safe(ch):
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_comment(text: str) -> str:
    """``# text`` with control characters escaped (TOML forbids them in comments, too)."""
    return "# " + visible(text)


def shell_quote(value: str) -> str:
    """A shell word for ``value``: in double quotes as torch's own hint writes them when every
    character is plain, else in single quotes (``'`` written ``'\\''``, as ``shlex.quote``)."""
    if _PLAIN_SHELL.match(value):
        return f'"{value}"'
    return "'" + value.replace("'", "'\\''") + "'"


def shell_word(value: str) -> str:
    """``value`` as one argument of a shell command line: as it is when every character may
    stand bare (``examples/model.py``), else :func:`shell_quote`'s (``'my model.py'``,
    ``'$(x).py'``)."""
    return value if _BARE_SHELL.match(value) else shell_quote(value)

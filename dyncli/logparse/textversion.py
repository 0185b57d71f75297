"""The torch version a paste states beside its log (``TorchVersion``), read from the lines
users paste with it in an issue: ``python -m torch.utils.collect_env``'s output, a pip or conda
package list, a printed ``torch.__version__``, and (``VersionLines``, two lines in a row) the
Python prompt's answer to ``>>> torch.__version__`` (``'2.5.1+cu121'``) or to
``>>> print(torch.__version__)`` (``2.5.1``), and ``pip show torch``'s ``Name: torch`` with the
``Version: 2.5.1`` under it.

Only those lines' own forms are read, anchored at the line's start: a version in prose ("this
worked on torch 2.4") is no statement of the install, and lines of other packages
(``torchvision==0.20.1``, ``pytorch-triton==3.1.0``, ``[conda] torch-geometric 2.2.0``) name no
torch. Linear in the line: bounded quantifiers, no nested repeats. Such a line is the paste's
text, not a torch record: it is no evidence of a torch log (a paste of nothing else is still
refused as "not a torch log").
"""

from __future__ import annotations

import re

from dyncli.logparse import events as ev

# a release's version as its wheel names it: 2.5.1, 2.5.1+cu124, 2.10.0.dev20251021+cu128,
# 2.1.0a0+git1234567, 2.4.0rc1 (PEP 440's forms torch uses); 1.14.0a0 (a pre-2.0 build) is read
# too, and judged by diagnose (only 2.x tells a release)
_VERSION = rb"(?P<v>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:(?:a|b|rc|\.dev|\.post)\d{0,12})?(?:\+[\w.]{1,40})?)"
# collect_env's "PyTorch version: 2.5.1+cu124" (torch/utils/collect_env.py's env_info_fmt);
# vLLM's collect_env pads the label to a column, "PyTorch version              : 2.9.0+cu129"
_COLLECT_ENV_RE = re.compile(rb"^PyTorch version {0,40}: {1,4}" + _VERSION + rb"$")
# pip freeze, and collect_env's "Versions of relevant libraries" ("[pip3] torch==2.5.1")
_PIP_RE = re.compile(rb"^(?:\[pip3?\] {1,8})?torch ?== ?" + _VERSION + rb"$")
# conda list, and collect_env's "[conda] torch    2.5.1    pypi_0    pypi" (pytorch, conda's own
# package name); its build and channel columns after the version
_CONDA_RE = re.compile(rb"^\[conda\] {1,8}(?:py)?torch {1,60}" + _VERSION
                       + rb"(?: {1,60}[^ ]{1,120}){0,2}$")
# pip list's columns, "torch                     2.5.1" (two blanks or more: a column), or the
# package and its version alone on the line
_PIP_LIST_RE = re.compile(rb"^torch(?: {2,60}| )" + _VERSION + rb"$")
# a printed torch.__version__: print(f"{torch.__version__=}") writes
# "torch.__version__='2.5.1+cu124'"; "torch.__version__: 2.5.1", "torch.__version__ 2.5.1"
_DUNDER_RE = re.compile(rb"^(?:>>> )?torch\.__version__ {0,4}(?:=|==|:)? {0,4}(?P<q>['\"]?)"
                        + _VERSION + rb"(?P=q)$")
_FORMS = (("collect_env", _COLLECT_ENV_RE), ("pip", _PIP_RE), ("conda", _CONDA_RE),
          ("pip list", _PIP_LIST_RE), ("torch.__version__", _DUNDER_RE))
# (every form's line starts with one of these: a line that starts otherwise costs one check)
_STARTS = (b"PyTorch version", b"torch", b"[pip", b"[conda]", b">>> torch")
_MAX_LINE = 300


def stated(raw: bytes, line: int) -> ev.TorchVersion | None:
    """The torch version ``raw`` states (one of ``_FORMS``), or None."""
    text = raw.strip()
    if len(text) > _MAX_LINE or not text.startswith(_STARTS):
        return None
    for form, pattern in _FORMS:
        m = pattern.match(text)
        if m is not None:
            return ev.TorchVersion(version=m["v"].decode("ascii"), form=form,
                                   text=text.decode("utf-8", "replace"), line=line)
    return None


# Two-line forms: a line that asks (the opener), and the next line that answers. The Python
# prompt echoes an expression's repr, quoted ('2.5.1+cu121': torch.__version__ is a str), and
# print() writes it bare; pip show writes "Name: <project>" then "Version: <version>" (pip's
# commands/show.py, those two first, in that order, for each package it shows).
_REPL_RE = re.compile(rb"^>>> {0,4}torch\.__version__ {0,4}$")
_PRINT_RE = re.compile(rb"^>>> {0,4}print\( {0,4}torch\.__version__ {0,4}\)$")
_PIP_SHOW_RE = re.compile(rb"^Name: {1,4}torch$")
_QUOTED_RE = re.compile(rb"^(?P<q>['\"])" + _VERSION + rb"(?P=q)$")
_BARE_RE = re.compile(rb"^" + _VERSION + rb"$")
_SHOW_VERSION_RE = re.compile(rb"^Version: {1,4}" + _VERSION + rb"$")
# (the opener, the answer's pattern, the form)
_OPENERS = ((_REPL_RE, _QUOTED_RE, "torch.__version__"), (_PRINT_RE, _BARE_RE, "torch.__version__"),
            (_PIP_SHOW_RE, _SHOW_VERSION_RE, "pip show"))
_OPENS = (b">>>", b"Name:")


class VersionLines:
    """The torch version a paste's lines state, fed in order (one reader's): a line's own form
    (``stated``), or an opener and the line right under it that answers it. ``read`` gives
    None for a line that is none of these, ``()`` for an opener (the paste's text: it states
    nothing yet), and the version for a line that states it."""

    def __init__(self) -> None:
        self._open: tuple[re.Pattern[bytes], str, str, int] | None = None  # answer, form, text, line

    def read(self, raw: bytes, line: int) -> tuple[ev.TorchVersion, ...] | None:
        """What ``raw`` (line ``line``) states; see the class."""
        opened, self._open = self._open, None
        text = raw.strip()
        if len(text) > _MAX_LINE:
            return None
        if opened is not None and opened[3] == line - 1:
            answer, form, asked, at = opened
            m = answer.match(text)
            if m is not None:
                said = f"{asked} / {text.decode('utf-8', 'replace')}"
                return (ev.TorchVersion(version=m["v"].decode("ascii"), form=form, text=said,
                                        line=at),)
        if text.startswith(_OPENS):
            for opener, answer, form in _OPENERS:
                if opener.match(text) is not None:
                    self._open = (answer, form, text.decode("ascii"), line)
                    return ()
        version = stated(raw, line)
        return None if version is None else (version,)

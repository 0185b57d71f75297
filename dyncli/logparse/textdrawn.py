"""Tracebacks as tools draw them, turned back into the lines Python prints. Pure.

Two drawings reach ``dyncli diagnose`` from users' tools:

- Terminal colours: IPython in a terminal (and a notebook's output saved raw) writes SGR escape
  sequences around every part of a frame (``\\x1b[96mFile \\x1b[39m\\x1b[32m/…/eval_frame.py:1282
  \\x1b[39m, in …``); a paste that lost the ESC byte keeps ``[0;31m`` (``uncoloured``).
- rich's traceback (``rich.traceback.install()``, as accelerate, kohya's scripts and SD.Next show
  errors): a box, ``╭── Traceback (most recent call last) ──╮``, each frame's header
  ``│ PATH:LINE in FUNCTION │`` (wrapped onto the next box line where it is longer than the
  box), a blank box line, the code with ``❱`` at the frame's line, and ``╰──╯``; then the
  exception as ``ClassName: message`` (rich writes the class's name without its module).
  ``RichBox`` turns those lines into Python's (``Traceback (most recent call last):``,
  ``  File "PATH", line N, in FUNCTION``, the ``❱`` line's code indented under it), so that the
  tracebacks' reader (``textcrash``) and the other readers see the form they know.

Linear in the line: bounded quantifiers, one substitution per coloured line.
"""

from __future__ import annotations

import re

_ESC = b"\x1b["
# SGR ("select graphic rendition") sequences: ESC [ params m. A paste that lost the ESC keeps
# "[0;31m", "[1;32m", "[39m" (read only on a line that has a reset, "[0m" or "[39m"/"[49m",
# of its own: torch's text has no such bracket)
_SGR_RE = re.compile(rb"\x1b\[[0-9;]{0,32}m")
_BARE_SGR_RE = re.compile(rb"\[(?:[0-9]{1,3};){0,7}[0-9]{1,3}m")
_RESETS = (b"[0m", b"[39m", b"[49m")


def _reset_in(raw: bytes) -> bool:
    """Whether one of ``_RESETS`` is in ``raw`` (a loop, not any() over a generator: asked of
    every line of a program's output, most of which have an "m")."""
    for reset in _RESETS:  # noqa: SIM110 (faster than any() over a generator)
        if reset in raw:
            return True
    return False


def uncoloured(raw: bytes) -> bytes:
    """``raw`` without terminal colours (SGR sequences, with or without their ESC byte)."""
    if _ESC in raw:
        raw = _SGR_RE.sub(b"", raw)
    if b"m" in raw and _reset_in(raw):
        raw = _BARE_SGR_RE.sub(b"", raw)
    return raw


def coloured(raw: bytes) -> bool:
    """Whether ``raw`` has a colour for ``uncoloured`` to take off (a cheap look first)."""
    return _ESC in raw or (b"m" in raw and _reset_in(raw))


_SIDE = "│"
_TOP = "╭"
_BOTTOM = "╰"
BOX_STARTS = tuple(c.encode() for c in (_SIDE, _TOP, _BOTTOM))
# rich's frame header: "PATH:LINE in FUNCTION" (rich/traceback.py, Traceback._render_stack)
_HEADER_RE = re.compile(r"^(?P<file>\S.{0,4096}?):(?P<line>\d{1,9}) in (?P<fn>[^\s(]{1,400})$")
# a code line: its number (after "❱ " at the frame's own line), a "│", the code
# (or the number alone: an empty line of code, or a line the paste cut: kohya_ss#1141's "│   874")
_CODE_RE = re.compile(r"^\s{0,8}(?P<arrow>❱ ?)?\s{0,8}\d{1,9}(?: │(?P<code>.{0,4000}))?$")
_MAX_HEADER = 3  # box lines a header may be wrapped onto (a path of ~300 characters)
# IPython's and rich's exception line names the class without its module ("Unsupported: Call
# to `torch._dynamo.graph_break()`"): the qualified name of torch's classes whose readers tell a
# raised one by it (textforeign_messages' Unsupported: fullgraph=True made the break an error)
_QUALIFIED = {b"Unsupported": b"torch._dynamo.exc.Unsupported"}


def qualified(raw: bytes) -> bytes:
    """A traceback's exception line with its class's module where IPython or rich left it
    off (``_QUALIFIED``); any other line as it is."""
    name, sep, rest = raw.partition(b": ")
    full = _QUALIFIED.get(name) if sep else None
    return full + sep + rest if full is not None else raw


class RichBox:
    """rich's traceback lines, one at a time, as Python's (``line``); ``b""`` for a line of
    the box that says nothing (a border, a blank, code away from the frame's line, a header's
    first pieces until the blank line that ends it)."""

    def __init__(self) -> None:
        self._header: list[str] = []  # a frame header's pieces, wrapped onto box lines

    def line(self, raw: bytes) -> bytes:
        """The Python line a box line stands for."""
        text = raw.decode("utf-8", "replace").rstrip()
        if text.startswith(_TOP):
            self._header = []
            return b"Traceback (most recent call last):" \
                if "Traceback (most recent call last)" in text[:400] else b""
        if text.startswith(_BOTTOM):
            return self._flush()
        inner = text[1:]
        if inner.endswith(_SIDE):
            inner = inner[:-1]
        code = _CODE_RE.match(inner)
        if code is not None:
            frame = self._flush()
            if frame:
                return frame
            return b"    " + code["code"].strip().encode() if code["arrow"] and code["code"] \
                else b""
        if not inner.strip():
            return self._flush()
        if len(self._header) >= _MAX_HEADER:
            del self._header[0]
        self._header.append(inner.strip())
        return b""

    def outside(self) -> None:
        """A line that is none of the box's: a header begun above it is no longer continued."""
        if self._header:
            self._header = []

    def _flush(self) -> bytes:
        """The frame the header's pieces name (joined as rich wrapped them: a path folded
        mid-word, or at a blank it dropped), or ``b""``."""
        pieces, self._header = self._header, []
        if not pieces:
            return b""
        for joined in ("".join(pieces), " ".join(pieces)):
            m = _HEADER_RE.match(joined)
            if m is not None:
                return f'  File "{m["file"]}", line {m["line"]}, in {m["fn"]}'.encode()
        return b""

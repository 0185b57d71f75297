"""The command lines of README.md and docs/*.md, as a reader would copy them.

A command block is a fenced ``bash``/``sh``/``console`` block (and the ``text`` usage block
of the README whose lines start with ``dyncli``). In a ``console`` block the commands are the
lines after ``$ `` (with their ``\\`` continuations) and the other lines are output; in a
``bash`` block every line that is not a comment is a command. A trailing ``# comment`` is
dropped; nothing else is changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
COMMENT = re.compile(r"\s+#\s.*$")


@dataclass
class Block:
    """One fenced block: where it is, its commands and (console blocks) its output lines."""

    file: str
    line: int
    lang: str
    commands: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


def doc_files() -> list[Path]:
    """README.md and every docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _join(lines: list[str]) -> list[str]:
    out: list[str] = []
    buf = ""
    for raw in lines:
        text = raw.rstrip()
        if text.endswith("\\"):
            buf += text[:-1].rstrip() + " "
            continue
        out.append(" ".join((buf + text).split()) if buf else text.strip())
        buf = ""
    return out


def blocks() -> list[Block]:
    """Every command block of the docs, in order."""
    found: list[Block] = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            lang, body = m.group(1), m.group(2)
            block = Block(str(path.relative_to(ROOT)), text[:m.start()].count("\n") + 1, lang)
            lines = body.splitlines()
            if lang == "console":
                cmd: list[str] = []
                for ln in lines:
                    if ln.startswith("$ ") or (cmd and cmd[-1].rstrip().endswith("\\")):
                        cmd.append(ln[2:] if ln.startswith("$ ") else ln)
                        if not ln.rstrip().endswith("\\"):
                            block.commands += [COMMENT.sub("", c) for c in _join(cmd)]
                            cmd = []
                    else:
                        block.output.append(ln)
            elif lang in ("bash", "sh", "shell") or (
                    lang == "text" and lines and all(ln.startswith("dyncli ") for ln in lines)):
                code = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
                block.commands += [COMMENT.sub("", c) for c in _join(code)]
            else:
                continue
            found.append(block)
    return found


def commands() -> dict[str, list[str]]:
    """``{command: [file:line, …]}`` for every documented command."""
    out: dict[str, list[str]] = {}
    for b in blocks():
        for c in b.commands:
            out.setdefault(c, []).append(f"{b.file}:{b.line}")
    return out


def excerpt(file: str, starts_with: str) -> list[str]:
    """The lines of the first ``text`` block of ``file`` whose first line starts so."""
    text = (ROOT / file).read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        lines = m.group(2).splitlines()
        if lines and lines[0].startswith(starts_with):
            return lines
    raise AssertionError(f"{file}: no block starting with {starts_with!r}")


def columns(header: str) -> list[str]:
    """The column names of a rich table header line (separated by 2+ spaces)."""
    return [c for c in re.split(r"\s{2,}|[┃│]", header.strip()) if c.strip()]

"""The fixes a user can apply, read from what dyncli printed (torch-free).

A printed fix may carry several forms (an allow-list, "or, in code, …" mark_dynamic lines, a
config line); each form is applied on its own, as a user would pick one. What is not in one of
these forms (prose such as "rewrite the branch") is advice, not an applicable fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Environment lists torch reads (torch/compiler/config.py); debugging switches such as
# TORCHDYNAMO_EXTENDED_DEBUG_* are "run with" aids, not fixes.
_ENV_RE = re.compile(r"\b(TORCH_COMPILE_[A-Z_]+)=(?:\"([^\"]*)\"|'([^']*)')")
_CONFIG_RE = re.compile(
    r"\b(torch\.(?:_dynamo|compiler|_inductor)\.config|torch\.fx\.experimental\._config)"
    r"\.(\w+) = (True|False|None|-?\d+|\"[^\"]*\"|'[^']*')")
# a compile argument: "torch.compile(…, dynamic=True)"
_COMPILE_RE = re.compile(r"\btorch\.compile\((?:…|\.\.\.), (\w+)=(True|False|None)\)")
_EACH_CALL_RE = re.compile(r"^before each call of (?P<fn>[\w.<>]+)[^:]*: (?P<lines>.+)$")
_IN_CODE = re.compile(r"\((?:or, )?in code, ")


def _in_code(text: str) -> str:
    """The text of ``(or, in code, …)`` up to its closing parenthesis."""
    m = _IN_CODE.search(text)
    if m is None:
        return ""
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


@dataclass(frozen=True)
class Fix:
    """One applicable form: env variables, config lines, a python text (runner's format), or
    torch.compile arguments."""

    where: str  # which output printed it (``diagnose full: mark-dynamic``)
    form: str  # env | config | python
    text: str  # as printed
    env: tuple[tuple[str, str], ...] = ()
    config: tuple[tuple[str, str, str], ...] = ()
    python: str = ""
    compile: tuple[tuple[str, str], ...] = ()  # torch.compile arguments (name, literal)
    extra: dict[str, str] = field(default_factory=dict, compare=False)

    def job(self) -> dict[str, object]:
        return {"env": dict(self.env), "config": [list(c) for c in self.config],
                "python": self.python, "compile": dict(self.compile)}


def from_text(where: str, text: str) -> list[Fix]:
    """Every applicable form in one printed fix line."""
    out: list[Fix] = []
    env = tuple((m[1], m[2] if m[2] is not None else m[3]) for m in _ENV_RE.finditer(text))
    if env:
        out.append(Fix(where, "env", text, env=env))
    config = tuple((m[1], m[2], m[3]) for m in _CONFIG_RE.finditer(text))
    if config:
        out.append(Fix(where, "config", text, config=config))
    compile_args = tuple((m[1], m[2]) for m in _COMPILE_RE.finditer(text))
    if compile_args:
        out.append(Fix(where, "compile", text, compile=compile_args))
    code = _in_code(text)
    if code:
        blocks = []
        for part in code.split(" / "):
            m = _EACH_CALL_RE.match(part)
            if m is None:
                continue
            lines = [x.strip() for x in m["lines"].split("; ") if x.strip()]
            blocks.append(f"# ?:0 {m['fn']}: before calling it, on the tensors passed in\n"
                          + "\n".join(lines) + "\n")
        if blocks:
            out.append(Fix(where, "python", text, python="\n".join(blocks)))
    return out


def from_python_form(where: str, text: str) -> list[Fix]:
    """``dyncli suggest -f python``: the whole text is one fix (runner reads its blocks)."""
    if "mark_dynamic" not in text and "os.environ[" not in text:
        return []
    return [Fix(where, "python", text, python=text)]

"""torch's own Python warnings that are notes on what it did, with nothing to fix.

Python prints a warning as ``FILE:LINE: UserWarning: MESSAGE``; torch's inductor writes some
messages that start on the line after (``textwrap.dedent`` of a text that begins with a line
end), so a paste has the head alone, then the message's lines at the margin. Such a paste is
torch's output (never "not a torch log") and says nothing to fix: each note of ``NOTES`` is
read as an understood torch record. Linear in the line: bounded quantifiers.
"""

from __future__ import annotations

import re

# each note's text as torch writes it, one line a line
NOTES = (
    # inductor's softmax lowering when it splits the reduction: a performance note (2.7
    # _inductor/lowering.py:7010 to 2.11 :7839; gone in 2.15), pytorch#153241
    "Online softmax is disabled on the fly since Inductor decides to\n"
    "split the reduction. Cut an issue to PyTorch if this is an\n"
    "important use case and you want to speed it up with online\n"
    "softmax.",
)
FIRST_LINES = frozenset(note.splitlines()[0].encode() for note in NOTES)
_LINES = frozenset(line.encode() for note in NOTES for line in note.splitlines())
# the head of a Python warning raised in inductor's code: "…/torch/_inductor/lowering.py:7007:
# UserWarning: " (its message on the line, or on the lines after)
_HEAD_RE = re.compile(rb"^\S{0,1024}torch[/\\]_inductor[/\\][\w/\\]{1,200}\.py:\d{1,9}: "
                      rb"UserWarning:(?: (?P<msg>.{0,4000}))?$")


def note_line(raw: bytes) -> bytes | None:
    """The line of a note that ``raw`` is (a warning's head with the note on it, or empty,
    gives its message: b"" where the note follows); None for any other line."""
    line = raw.strip()
    if line in _LINES:
        return line
    if b"UserWarning:" in line[:1300] and (m := _HEAD_RE.match(line)) is not None:
        msg = (m["msg"] or b"").strip()
        return msg if not msg or msg in FIRST_LINES else None
    return None

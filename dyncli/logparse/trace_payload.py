"""TORCH_TRACE payloads: a record's payload lines joined, filtered to the lines holding given
words, and the ``recompile_reasons`` artifact decoded.

Used by the reader (``dyncli.logparse.trace``: ``_join`` and ``_lines_holding`` run once per
kept record, never per line) and by the mapper (``dyncli.logparse.trace_map``). The joins
work on the whole payload at once, so a payload of thousands of lines costs a few ``bytes``
calls, not a Python step per line.
"""

from __future__ import annotations

from dyncli.logparse import safe


def _join(chunks: list[bytes], strip: bytes, nlines: int | None = None) -> bytes:
    """A record's payload: its payload lines without their tab and line end (``strip``: the
    line-end bytes to cut), joined by newlines.

    ``chunks`` are the payload's lines, or (``nlines`` given: how many lines they hold) runs
    of whole lines as the block reader cuts them, each ending in a newline but the last.
    Done on the whole payload at once (one join, one replace) when every line ends in exactly
    one newline and no ``\\r`` is about, else line by line.
    """
    if not chunks:
        return b""
    joined = b"".join(chunks)
    n = joined.count(b"\n")
    lines = len(chunks) if nlines is None else nlines
    whole = n == lines or (n == lines - 1 and not chunks[-1].endswith(b"\n"))
    if whole and (strip == b"\n" or b"\r" not in joined):
        return joined[1:].replace(b"\n\t", b"\n").removesuffix(b"\n")
    if nlines is not None:
        chunks = split_lines(chunks)
    return b"\n".join(c[1:].rstrip(strip) for c in chunks)


def split_lines(runs: list[bytes]) -> list[bytes]:
    """The lines of runs cut by the block reader: each run split after its newlines; a run
    that does not end in one ends in a line without it (a piece of an over-long line, or the
    file's last line), which stays a line of its own as ``readline`` gives it."""
    lines: list[bytes] = []
    for run in runs:
        parts = run.split(b"\n")
        last = parts.pop()
        lines += [p + b"\n" for p in parts]
        if last:
            lines.append(last)
    return lines


def _lines_holding(chunks: list[bytes], words: tuple[bytes, ...],
                   nlines: int | None = None) -> str:
    """The lines of a payload (as ``str.splitlines`` cuts the joined payload) that hold one of
    ``words`` (ASCII), joined by newlines; found with ``bytes.find`` on the joined lines, so
    the thousands of lines without them cost no Python step each. ``chunks`` and ``nlines``
    as for :func:`_join`."""
    joined = b"".join(chunks)
    n = joined.count(b"\n")
    lines = len(chunks) if nlines is None else nlines
    if not (n == lines or (n == lines - 1 and not chunks[-1].endswith(b"\n"))):
        # lines without their line end (pieces of an over-long line, lines given in a list)
        text = _join(chunks, b"\r\n", nlines).decode("utf-8", "replace")
        return "\n".join(x for x in text.splitlines() if any(w.decode() in x for w in words))
    spans = set()
    for word in words:
        at = joined.find(word)
        while at >= 0:
            end = joined.find(b"\n", at)
            end = len(joined) if end < 0 else end
            spans.add((joined.rfind(b"\n", 0, at) + 1, end))
            at = joined.find(word, end)
    texts = []
    for start, end in sorted(spans):
        # one payload line: its tab off, its line end cut as _join does; then the cuts
        # str.splitlines makes inside it (\r, \f, \x1c…) and only the parts with a word
        line = joined[start + 1:end].rstrip(b"\r\n").decode("utf-8", "replace")
        texts += [x for x in line.splitlines() if any(w.decode() in x for w in words)]
    return "\n".join(texts)


def decode_recompile_reasons(payload: str) -> list[str]:
    """The reasons of a ``recompile_reasons`` artifact.

    torch (guards.py, 2.5–2.14) logs ``reasons[0] if len(reasons) == 1 else reasons`` with
    encoding "json": one reason arrives as raw text, several as a JSON list.
    """
    text = payload.strip()
    if text.startswith("["):
        try:
            value = safe.loads(text)
        except ValueError:
            return [text]
        if isinstance(value, list):
            return [v if isinstance(v, str) else safe.short(v, 200) for v in value]
    if text.startswith('"'):
        try:
            return [str(safe.loads(text))]
        except ValueError:
            pass
    return [text] if text else []

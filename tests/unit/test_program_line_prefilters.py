"""The literal checks that let a program's own output lines skip regexes (round 26) skip only
lines the regexes could not match: on every line of the recorded logs and pastes, and on
lines built to sit at each check's edge, a match of the regex implies the check passes."""

from __future__ import annotations

from pathlib import Path

from dyncli.logparse import textcrash, textpaste

DATA = Path(__file__).resolve().parents[1] / "data"

EDGES = [
    b"V1125 11:59:20.387000 30386 torch/_dynamo/x.py:1] [0/0] hi",
    b"[rank0]:W1125 11:59:20.3 x",
    b"[2024-05-01 12:00:00,123] torch._dynamo.x: [WARNING] hi",
    b"INFO:torch._dynamo.x:hi", b"DEBUG torchdynamo.x", b"> WARNING torchinductor.y",
    b"torch._dynamo.convert_frame: [INFO] hi", b"2025-01-01 12:00:00,123 INFO trainer: step 1",
    b"Epoch 3/10 loss=0.123", b"", b"torch", b"12:00:00.5",
]


def _lines() -> list[bytes]:
    out = list(EDGES)
    for path in sorted(DATA.glob("**/*")):
        if path.suffix in (".log", ".txt") and path.is_file() and path.stat().st_size < 2_000_000:
            out += path.read_bytes().splitlines()
    return out


def test_start_prefilter_keeps_every_match() -> None:
    found = 0
    for line in _lines():
        if textpaste._START_RE.search(line) is not None:
            found += 1
            assert textpaste._may_start(line), line
    assert found > 1000  # (the check was asked of lines that match)


def test_crash_prefilters_keep_every_match() -> None:
    frames = (textcrash._IPY_FILE_RE, textcrash._IPY_FILE_LINK_RE, textcrash._IPY_CELL_RE,
              textcrash._IPY_LINK_RE, textcrash._IPY_OLD_RE, textcrash.FILE_RE)
    extra = ['  File "/a/b.py", line 3, in f', "File /a/b.py:3, in f", "Cell In[1], line 4",
             "Cell In [2], line 5, in g", "[/a/b.py](http://x) in f", "/a/b.py in f(x)",
             "x: BackendCompilerFailed", "BackendCompilerFailed",
             "Foo  Traceback (most recent call last)", "Traceback (most recent call last):"]
    found = [0, 0, 0]
    for text in extra + [raw.decode("utf-8", "replace").rstrip() for raw in _lines()]:
        if any(form.match(text) for form in frames):
            found[0] += 1
            assert textcrash._frame(text) is not None, text
        if textcrash._HEAD_RE.match(text) is not None:
            found[1] += 1
            assert textcrash._TRACEBACK_WORDS in text, text
        m = textcrash._NAMED_RE.search(text[-64:])
        if m is not None and m["cls"] in textcrash.COMPILER_ERRORS:
            found[2] += 1
            assert textcrash.named_class(text) == m["cls"], text
    assert min(found) >= 2, found

"""The one regex for torch's glog-style log prefix, and what it captures.

torch 2.x ``TorchLogsFormatter`` (torch/_logging/_internal.py) writes every line of a record as::

    [rank1]:V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/1] [__recompiles] message
    ^rank    ^level/date time      ^pid ^emitting file:line          ^compile id ^artifact

The number after the time is the process id since torch 2.5; torch 2.3 and 2.4 wrote the
thread id there (``%(thread)d``: 15 digits and more, e.g. ``139877824898048``), so it is
read as up to 20 digits (a 64-bit value) and called ``pid`` either way: it stays the same
within one process's thread, which is all the parsers use it for.

``[rankN]:`` appears only when torch.distributed is initialized; the compile id only inside a
compile (``0/1``, restart attempts ``0/1_1``, compiled autograd ``!0/0/1``); the artifact tag
only for artifact loggers (``recompiles``, ``guards``, ``graph_breaks``…). A multi-line message
repeats the whole prefix on every line, which is how continuation lines are recognized.

Every number has a bounded count of digits and the file name a bounded length, so whatever
the line, the match is linear and every ``int()`` of a group is small: a line with a
5,000-digit pid is not a glog line (counted as unrecognized), not a ``ValueError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GLOG_RE = re.compile(
    # (the colon after the rank tag is torch's; a paste can lose it: pytorch#148439's
    # "[rank3]V0304 17:57:43…")
    rb"(?:\[rank(?P<rank>\d{1,9})\]:?)?"
    rb"(?P<level>[VIWEC])(?P<date>\d{4}) (?P<time>\d\d:\d\d:\d\d\.\d{1,9}) (?P<pid>\d{1,20}) "
    rb"(?P<file>[^\s\]][^\]\n]{0,1023}):(?P<lineno>\d{1,9})\]"
    rb"(?: \[(?P<cid>!?\d{1,9}(?:/\d{1,9}){0,3}(?:_\d{1,9})?)\])?"
    rb"(?: \[__(?P<artifact>\w+)\])?"
    rb"(?P<end> |$)"
)


# torch 2.1 and 2.2 wrote TORCH_LOGS with Python logging's own layout, not glog's:
#   [2026-11-25 18:46:51,248] [0/1] torch._dynamo.guards.__guards: [DEBUG] GUARDS:
# (no pid, no emitting line, milliseconds; TORCH_TRACE does not exist yet).
# The same layout as a prefix the text parser reads: its groups numbered as GLOG_RE's where
# the parser reads them by number (rank 1, pid 5, compile id 8); the pid, which these logs do
# not have, is an empty group (one process per file).
OLD_PREFIX_RE = re.compile(
    rb"(?:\[rank(?P<rank>\d{1,9})\]:)?"
    rb"\[(?P<date>\d{4}-\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d,\d{3})\]"
    rb"(?P<level>)(?P<pid>)(?P<file>)(?P<lineno>)"
    rb"(?: \[(?P<cid>!?\d{1,9}(?:/\d{1,9}){0,3}(?:_\d{1,9})?)\])?"
    rb" (?P<logger>torch\.[\w.]{1,200}?)(?:\.__(?P<artifact>\w+))?: \[(?P<lvl>[A-Z]{1,10})\]"
    rb"(?P<end> |$)"
    # 2.1's nightlies of Apr-Aug 2023 (ShapeEnvLoggerAdapter): the ShapeEnv's id before each
    # symbolic_shapes message, "0: create_env", "3.0: eval …" (pytorch#98941's paste; gone
    # by 2.1.0): part of the prefix, so the message's first word is its kind
    rb"(?:(?:(?<=symbolic_shapes: \[INFO\] )|(?<=symbolic_shapes: \[DEBUG\] )"
    rb"|(?<=symbolic_shapes: \[WARNING\] ))\d{1,6}(?:\.\d{1,6})?: )?"
)
assert all(OLD_PREFIX_RE.groupindex[g] == GLOG_RE.groupindex[g] for g in ("rank", "pid", "cid"))


@dataclass(frozen=True, slots=True)
class Prefix:
    """A decoded glog prefix (used by tests and tools; the parser reads the match directly)."""

    rank: int | None
    level: str
    date: str
    time: str
    pid: int
    file: str
    lineno: int
    compile_id: str | None
    artifact: str | None


def level_of(prefix: bytes) -> bytes:
    """The first byte of a matched prefix after its rank tag: a glog prefix's level letter
    (``V``, ``I``, ``W``, ``E``, ``C``)."""
    return prefix.lstrip(b"[rank0123456789]:")[:1]


def match(line: bytes) -> re.Match[bytes] | None:
    """Match the glog prefix at the start of ``line`` (bytes, without the newline)."""
    return GLOG_RE.match(line)


def parse_prefix(line: str | bytes) -> Prefix | None:
    """The prefix of one line as a ``Prefix``; None when the line is not a glog line."""
    raw = line.encode("utf-8", "replace") if isinstance(line, str) else line
    m = GLOG_RE.match(raw)
    if m is None:
        return None
    return Prefix(
        rank=int(m["rank"]) if m["rank"] is not None else None,
        level=m["level"].decode(), date=m["date"].decode(), time=m["time"].decode(),
        pid=int(m["pid"]), file=m["file"].decode("utf-8", "replace"), lineno=int(m["lineno"]),
        compile_id=m["cid"].decode() if m["cid"] is not None else None,
        artifact=m["artifact"].decode() if m["artifact"] is not None else None,
    )

"""Torch's records where a paste put them: lines the glog prefix does not start.

Logs reach ``dyncli diagnose`` as users paste them (issue 33): behind a markdown quote
(``> ``), a launcher's own stamp (``[2025-08-12 03:17:45.177] V0812 …``), a progress bar or a
shell prompt; with the prefix elided (``.../torch/_dynamo/guards.py:2772] [16/8] …``) or cut
down to the compile id (``[0/1] [__recompiles] …``, ``[0/1] torch.fx…: [INFO] …``); in
``logging.basicConfig``'s layout (``DEBUG:torch._dynamo….__graph_breaks:Graph break: …``);
from torchdynamo before torch 2.0 (``torchdynamo.convert_frame: [WARNING] …``, with or without
a date); with paths, or glog's level and date, turned into markdown links; with HTML entities.

``normalize`` turns such a line into the glog line torch would have written, so that the text
parser reads it as any other: the prefix found inside the line is kept as it is; a prefix that
is not whole is rebuilt from what is left of it (level, rank, file and line, compile id,
artifact; the time and pid it lost are zeros, one process). It is only asked about lines the
parser's own prefix regex rejected, so a clean log never pays for it. Everything here is
linear in the line: bounded quantifiers, one search per line for where a prefix may start.
"""

from __future__ import annotations

import html
import re

from dyncli.logparse.glog import GLOG_RE

# Where a torch prefix may start inside a line (the cheap search; each hit is then matched).
# A prefix cut short (elided, or down to the compile id) is only looked for at the start of a
# line, after a quote's ">" and blanks: it has too little of its own to be found anywhere.
_START_RE = re.compile(
    rb"(?:\[rank\d{1,9}\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d"  # glog
    rb"|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] "  # torch 2.0-2.2 logging layout
    rb"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):torch"  # logging.basicConfig
    # torchdynamo's and torchinductor's 2022 layout, where a line (or a quote of it) starts
    rb"|(?:^|(?<=[\s>|]))(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) torch(?:dynamo|inductor)\.\w"
    rb"|(?<![\w.])torch(?:dynamo|inductor)?\.[\w.]{1,200}: \[[A-Z]{1,10}\] ")  # logger: [LEVEL]
# What every match of _START_RE holds: its first two forms a clock ("…:12:34.5" of glog's,
# "…:12:34,567] " of the logging layout's), the others ":torch", "torchdynamo.",
# "torchinductor." or (a logger's name, then its level) ": [" with "torch" (``_may_start``).
# A line without any of them has no match, and costs no scan of its every position by
# _START_RE's forms (~15 µs a line: most of the time on a program's own output lines)
_CLOCK_RE = re.compile(rb":\d\d:\d\d(?:\.\d|,\d{3}\] )")
_START_MARKS = (b":torch", b"torchdynamo.", b"torchinductor.")


def _may_start(line: bytes) -> bool:
    """Whether ``line`` holds what any match of ``_START_RE`` holds (above)."""
    if b"torch" in line:
        for mark in _START_MARKS:
            if mark in line:
                return True
        if b": [" in line:
            return True
    return _CLOCK_RE.search(line) is not None


_CID = rb"(?: \[(?P<cid>!?\d{1,9}(?:/\d{1,9}){0,3}(?:_\d{1,9})?)\])?"
# A glog prefix whose head (level, date, time, pid, directories) was elided.
_ELIDED_RE = re.compile(rb"(?:\.\.\.|\xe2\x80\xa6)(?P<file>/?[^\s\]]{1,1024}):(?P<lineno>\d{1,9})\]"
                        + _CID + rb"(?: \[__(?P<artifact>\w{1,64})\])?(?: |$)")
# A glog prefix cut at torch's own directory: "torch/fx/experimental/symbolic_shapes.py:3239]
# [0/0] create_symbol …" (the level, date, time and pid trimmed away: pytorch#125641).
_TRIMMED_RE = re.compile(rb"(?P<file>torch[/\\][^\s\]]{1,1024}\.py):(?P<lineno>\d{1,9})\]"
                         + _CID + rb"(?: \[__(?P<artifact>\w{1,64})\])?(?: |$)")
# A glog prefix with its time and pid removed, the level and date kept: "V0627
# torch/_dynamo/exc.py:209] [0/0] [__graph_breaks] WON'T CONVERT …" (lovely-tensors#24: the user
# shortened every prefix); read where the file is torch's
_DATED_RE = re.compile(rb"(?:\[rank(?P<rank>\d{1,9})\]:)?(?P<lvl>[VIWEC])\d{4} "
                       rb"(?P<file>[^\s\]]{1,1024}\.py):(?P<lineno>\d{1,9})\]"
                       + _CID + rb"(?: \[__(?P<artifact>\w{1,64})\])?(?: |$)")
# a rank tag right before a layout the start expression found (its first alternative, glog,
# takes it itself; the logging layouts' own expressions read it at their start)
_RANK_BEFORE_RE = re.compile(rb"\[rank\d{1,9}\]: ?$")
# Cut down to the compile id: "[0/1] [__recompiles] …" or "[0/1] torch.fx…: [INFO] …" (behind
# a rank tag, with a blank after it too: "[rank0]: [0/1] [__recompiles] …", sglang#23428).
_CUT_RE = re.compile(
    rb"(?:\[rank(?P<rank>\d{1,9})\]: ?)?\[(?P<cid>!?\d{1,9}(?:/\d{1,9}){0,3}(?:_\d{1,9})?)\] "
    rb"(?:\[__(?P<artifact>\w{1,64})\]|(?P<logger>torch[\w.]{0,200}?)(?:\.__(?P<art2>\w{1,64}))?:"
    rb" \[(?P<lvl>[A-Z]{1,10})\])(?: |$)")
# Python logging's own layouts: "[date] [0/1] torch.x.__art: [LVL] " (torch 2.0-2.2, also
# torchdynamo's before 2.0), without the date (torchdynamo 2022), and logging.basicConfig's
# "LEVEL:torch.x.__art:" (no space after the colon).
_LOGGING_RE = re.compile(
    rb"(?:\[rank(?P<rank>\d{1,9})\]:)?(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] )?"
    rb"(?:\[(?P<cid>!?\d{1,9}(?:/\d{1,9}){0,3}(?:_\d{1,9})?)\] )?"
    rb"(?P<logger>torch(?:dynamo|inductor)?\.[\w.]{1,200}?)(?:\.__(?P<artifact>\w{1,64}))?: "
    rb"\[(?P<lvl>[A-Z]{1,10})\](?: |$)")
_BASIC_RE = re.compile(
    rb"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):"
    rb"(?P<logger>torch(?:dynamo|inductor)?(?:\.[\w]{1,64}){0,10}?)(?:\.__(?P<artifact>\w{1,64}))?:")
# torchinductor's and torchdynamo's own layout of 2022, "LEVEL logger: " (torchdynamo#748:
# "WARNING torchinductor.compile_fx: skipping cudagraphs due to multple devices")
_SPACED_RE = re.compile(
    rb"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    rb"(?P<logger>torch(?:dynamo|inductor)?(?:\.\w{1,64}){1,10}?)(?:\.__(?P<artifact>\w{1,64}))?: ")
# torch's recompile-limit warning pasted without any prefix (often quoted), as a terminal or a
# handler without torch's format shows it: the only record whose message alone says what it is
# and where (function, file, limit, last reason). torchdynamo's one line of 2022 ("torchdynamo
# hit recompilation cache limit (64) for function 'f' (…)"), and the head of the warning of
# every later release, its function and reason on the lines under it: "torchdynamo hit
# config.cache_size_limit (64)" (torchdynamo, late 2022), "torch._dynamo hit
# config.cache_size_limit (64)" (2.0-2.5; 8 from 2.2), config.accumulated_cache_size_limit
# (2.2-2.5), config.recompile_limit / accumulated_recompile_limit (2.6-2.15: convert_frame.py)
_BARE_HEAD = (rb"torchdynamo hit recompilation cache limit \(\d"
              rb"|torch(?:\._dynamo|dynamo) hit config\.\w{1,64} \(\d")
_BARE_RE = re.compile(rb"(?:>\s?){0,8}(?=" + _BARE_HEAD + rb")")
_BARE_HEAD_RE = re.compile(_BARE_HEAD)
# What a terminal shows before that bare head on its line, other than a quote (every other
# text before it is prose about the warning, not the warning): a progress bar that was drawn
# there (tqdm's rate and "]" end it; a raw capture keeps its carriage returns), or the stamp of
# the handler that printed torch's record in a format of its own (TORCH_LOGS_FORMAT, or a
# server's logging config: "%(asctime)s %(levelname)s", its logger's name, uvicorn's padded
# "INFO:     "), whose formatter stamps a message's first line only, so the lines under it stay
# bare; either of them, or nothing, behind a rank's tag: torchrun's (tail_log.py's header with
# --role rank, "[rank0]:"; "[default0]:" comes here as that) or a launcher's with a blank
# after it ("[rank0]: ", as torch's own excepthook writes it: distributed_c10d.py)
_BAR_BEFORE_RE = re.compile(rb"\|[^|]{0,200}(?:it/s|s/it)\]\s{0,4}$")
_RANK_LEAD_RE = re.compile(rb"\[rank(?P<rank>\d{1,6})\]: ?")
_STAMP_RE = re.compile(
    rb"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,6})?\]?(?:[ \t]{1,4}(?:-[ \t]{1,4})?"
    rb"(?:torch[\w.]{0,200}[ \t]{1,4}-[ \t]{1,4})?\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]?:?"
    rb"(?:[ \t]{1,4}-)?)?[ \t]{1,12}$"
    rb"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL):[ \t]{1,12}$")


def _bare_head(line: bytes) -> tuple[bytes | None, int] | None:
    """(rank, where torch's text starts) of a bare recompile-limit head in ``line``: at its
    start (after a quote's marks), or after one of the leaders above; None elsewhere."""
    bare = _BARE_RE.match(line)
    if bare is not None:
        return None, bare.end()
    if b" hit " not in line:
        return None
    head = _BARE_HEAD_RE.search(line)
    if head is None:
        return None
    before = line[:head.start()]
    if b"\r" in before:  # a raw capture: what the terminal shows is after the last return
        before = before[before.rfind(b"\r") + 1:]
        if not before.strip():
            return None, head.start()
    rank = None
    if (tag := _RANK_LEAD_RE.match(before)) is not None:
        rank, before = tag["rank"], before[tag.end():]
        if not before:
            return rank, head.start()
    if _BAR_BEFORE_RE.search(before[-256:]) is not None or _STAMP_RE.match(before) is not None \
            or (before[:2] == b"W " and not before[2:].strip(b" ")):
        # (the last: torch's prefix cut down to its level by the user, "[rank0]:W torch._dynamo
        # hit config.accumulated_cache_size_limit (256)", a bug write-up's excerpt)
        return rank, head.start()
    return None


# ComfyUI's words before an exception's message, which it prints without the exception's class:
# its console's (execution.py) and its error report's
COMFYUI_HEADS = ("!!! Exception during processing !!! ", "- **Exception Message:** ")
_LEVELS = {b"DEBUG": b"V", b"INFO": b"I", b"WARNING": b"W", b"ERROR": b"E", b"CRITICAL": b"C"}
# A markdown link an editor made of a path: "[model.py](http://_vscodecontentref_/3):120" or
# "[/a/b.py:38](https://file+.vscode-resource.vscode-cdn.net/a/b.py:38)".
_LINK_RE = re.compile(r"\[(?P<text>[^\[\]\n]{1,1024})\]\((?:https?|file|vscode)[^()\s]{0,2048}\)")
_LINK_RE_B = re.compile(rb"\[(?P<text>[^\[\]\n]{1,1024})\]\((?:https?|file|vscode)[^()\s]{0,2048}\)")
_ENTITY_RE = re.compile(rb"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")


def unlink(text: str) -> str:
    """A path an editor turned into a markdown link, back to the path (other text unchanged)."""
    return _LINK_RE.sub(r"\g<text>", text) if "](" in text else text


def clean(text: str) -> str:
    """``unlink`` and HTML entities decoded: the text torch wrote, as far as it can be told."""
    text = unlink(text)
    return html.unescape(text) if "&" in text and ";" in text else text


def _canonical(rank: bytes | None, level: bytes, file: bytes, lineno: bytes, cid: bytes | None,
               artifact: bytes | None) -> bytes:
    """The glog prefix torch would have written, with zeros for what the paste lost."""
    return b"".join((b"[rank" + rank + b"]:" if rank else b"", level[:1] or b"V",
                     b"0101 00:00:00.000000 0 ", file or b"?", b":", lineno or b"0", b"]",
                     b" [" + cid + b"]" if cid else b"", b" [__" + artifact + b"]" if artifact else b"",
                     b" "))


def _rebuilt(line: bytes, at: int) -> tuple[bytes, int] | None:
    """(canonical prefix, where the message starts) for a partial prefix at ``at``."""
    m = _ELIDED_RE.match(line, at) or _TRIMMED_RE.match(line, at)
    if m is not None:
        return _canonical(None, b"V", m["file"], m["lineno"], m["cid"], m["artifact"]), m.end()
    m = _CUT_RE.match(line, at)
    if m is not None:
        level = m["lvl"][:1] if m["lvl"] else b"V"
        if level == b"D":
            level = b"V"
        return (_canonical(m["rank"], level, m["logger"] or b"", b"0", m["cid"],
                           m["artifact"] or m["art2"]), m.end())
    m = _LOGGING_RE.match(line, at)
    if m is not None:
        return (_canonical(m["rank"], _LEVELS.get(m["lvl"], b"V"), m["logger"], b"0", m["cid"],
                           m["artifact"]), m.end())
    m = _BASIC_RE.match(line, at)
    if m is not None:
        return _canonical(None, _LEVELS[m["lvl"]], m["logger"], b"0", None, m["artifact"]), m.end()
    m = _SPACED_RE.match(line, at)
    if m is not None:
        return _canonical(None, _LEVELS[m["lvl"]], m["logger"], b"0", None, m["artifact"]), m.end()
    return None


def _decoded(message: bytes) -> bytes:
    """Links and HTML entities of a pasted message undone (most messages have neither)."""
    if b"](" in message:
        message = _LINK_RE_B.sub(rb"\g<text>", message)
    if b"&" in message and _ENTITY_RE.search(message):
        message = html.unescape(message.decode("utf-8", "replace")).encode("utf-8")
    return message


# A glog time the user masked before pasting (comfyui#10377: "W1017 xx:50:14.963000 …"): the
# digits they hid read as zeros (the time is not read; the rest of the prefix is torch's)
_MASKED_RE = re.compile(rb"(?:\[rank\d{1,9}\]:)?[VIWEC]\d{4} (?P<time>[\dxX]{2}:[\dxX]{2}:[\dxX]{2}"
                        rb"\.[\dxX]{6}) \d{1,10} ")


_NO_LEVEL_RE = re.compile(rb"\d{4} \d\d:\d\d:\d\d\.\d{6} {1,3}\d{1,10} \S{1,1024}\.py:\d{1,9}\] ")

# glog's level and date made a markdown link by the tool a log was pasted through, the rest of
# the prefix as torch wrote it (pytorch#148479, through Workplace: "# [W0225](https://l.workplace
# .com/l.php?u=…workorder%2F0225&…) 13:16:17.932000 76863 torch/fx/…/symbolic_shapes.py:6974]
# runtime_asserts_frozen but then got …"): read where it starts the line (behind a quote's, a
# comment's or a list's marks, and torch's rank tag) and a glog clock follows the link
_LINKED_LEVEL_RE = re.compile(
    rb"[ \t>#*-]{0,16}(?:\[rank\d{1,9}\]:)?(?P<link>\[(?P<lvl>[VIWEC]\d{4})\]"
    rb"\((?:https?|file)://[^()\s]{1,4096}\))(?= \d\d:\d\d:\d\d\.\d)")

# glog's path and compile id made links by JupyterLab, which links what looks like a path in a
# cell's output ("E0311 12:53:59.334000 1318… torch[/_guards.py:250](http://localhost:8888/
# _guards.py#line=249)] [0[/0](http://localhost:8888/0)]     Source: shape_env", pytorch#121036):
# read where glog's level, clock and pid start the line and a link follows in the path
_LINKED_PATH_RE = re.compile(
    rb"[ \t>]{0,16}(?:\[rank\d{1,9}\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} {1,3}\d{1,20} "
    rb"[^\s\[\]]{0,1024}\[[^\[\]\s]{1,1024}\]\((?:https?|file)://")


# torch's TORCH_LOGS_FORMAT example "%(levelname)s: %(message)s" (torch/_logging/_internal.py,
# 2.2 on: float8_experimental#192), a record's first line with its level and nothing else: read
# only where a kind of record begins there
_LEVEL_ONLY_RE = re.compile(rb"^(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL): (?P<word>[^\s:]{1,60})")
# torchdynamo's layout of August 2022 (its logger named "Torchdynamo": torchdynamo#930, #955)
_LEVEL_ONLY_WORDS = frozenset({b"torch._dynamo", b"torchdynamo", b"Recompiling", b"Graph", b"WON'T",
                               b"skipping", b"Step", b"create_symbol", b"eval", b"set_replacement",
                               b"produce_guards", b"create_env", b"Recording"})
_TORCHDYNAMO_RE = re.compile(rb"^Torchdynamo: \[(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ")


# torchrun's tag on a line of a rank's output under a role of its own ("[default0]:", tail_log.py
# 2.1-2.15 with --tee; "[trainer0]:"): its local rank, written as torch's "[rank0]:" tag so
# that torch's records on the line are that rank's, as the program's other lines under the
# tag are (textforeign's _untagged): one limit hit is one, not one with a rank and one without
_ROLE_TAG_RE = re.compile(rb"[ \t]{0,8}\[(?P<role>[A-Za-z_]{1,40})(?P<n>\d{1,6})\]:")

# What a tool writes before every line of a program's output, torch's glog lines and its
# tracebacks alike; one is taken off the lines without torch's prefix only where torch's own
# lines showed it (``wrapper_of``), so that a line of a log that merely starts like one keeps
# its text:
WRAPPERS = (
    # GitHub Actions' raw log: each line's time, 7 digits after the second ("…04.7440000Z ")
    re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z(?: |$)"),
    # Ray's tag of a worker's output on the driver: "(RayWorkerWrapper pid=4321) ", "(pid=4321) ",
    # ", ip=10.0.0.2" for another node's
    re.compile(rb"\((?:[A-Za-z_][\w:]{0,63} )?pid=\d{1,10}(?:, ip=[0-9a-fA-F.:]{3,45})?\)(?: |$)"),
    # srun --label: the task's number, padded to the widest ("0: ", " 3: ")
    re.compile(rb" {0,6}\d{1,7}:(?: |$)"),
    # journalctl's short format: "Nov 30 06:53:04 host program[pid]: "
    re.compile(rb"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} [\w.@/-]{1,64}\[\d{1,10}\]:(?: |$)"),
    # a Kubernetes container's log file (CRI): "2025-11-30T06:53:04.744Z stderr F ", a
    # collector's pod name in front of it or not
    re.compile(rb"(?:[a-z0-9][a-z0-9.-]{0,252} )?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?"
               rb"(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP](?: |$)"),
)


def wrapper_of(line: bytes) -> re.Pattern[bytes] | None:
    """The form of ``WRAPPERS`` in front of torch's glog line ``line`` (a rank tag of torch's
    or torchrun's may come between), or None."""
    for form in WRAPPERS:
        m = form.match(line)
        if m is not None:
            tag = _ROLE_TAG_RE.match(line, m.end())
            if GLOG_RE.match(line, tag.end() if tag is not None else m.end()) is not None:
                return form
    return None


# A quote's line whose text is all one inline code span ("> `[0/1] [__recompiles] …`": a user
# quoting their log so): the span is the log line, its backticks the quote's markup. A span
# with text after it, or a second span, is prose about torch's words (refused below)
_QUOTED_CODE_RE = re.compile(rb"[ \t]{0,3}(?:>[ \t]?){1,8}(?P<tick>`)(?!`)")


def _quoted_code(line: bytes) -> bytes | None:
    """``line`` without the backticks of the one inline code span that is its quoted text,
    or None where it is not such a line."""
    m = _QUOTED_CODE_RE.match(line)
    if m is None:
        return None
    body = line[m.end():].rstrip()
    if body.endswith(b"`"):
        body = body[:-1]
    return line[:m.start("tick")] + body if b"`" not in body else None


def normalize(line: bytes) -> tuple[bytes, str] | None:
    """The glog line a pasted ``line`` stands for, and what was done ("prefixes trimmed" or
    "prefixes rebuilt"); None when no torch prefix is in it (the line is not torch's).

    ``line`` has no line end; the parser asks only about lines its prefix regex rejected.
    """
    if b"`" in line[:32] and (code := _quoted_code(line)) is not None:
        return normalize(code)
    if b"](" in line[:4200] and (linked := _LINKED_LEVEL_RE.match(line)) is not None:
        found = normalize(line[:linked.start("link")] + linked["lvl"] + line[linked.end("link"):])
        return (found[0], "glog levels unlinked") if found is not None else None
    if b"](" in line[:4200] and _LINKED_PATH_RE.match(line) is not None:
        unlinked = _LINK_RE_B.sub(rb"\g<text>", line)
        if GLOG_RE.match(unlinked) is not None:
            return unlinked, "glog paths unlinked"
        # (behind a quote's or a list's marks; a link left inside a link is not undone twice)
        found = normalize(unlinked) if b"](" not in unlinked[:4200] else None
        return (found[0], "glog paths unlinked") if found is not None else None
    if line[:1] in (b"[", b" ", b"\t") and (role := _ROLE_TAG_RE.match(line)) is not None \
            and role["role"] != b"rank":
        found = normalize(b"[rank" + role["n"] + b"]:" + line[role.end():])
        return (found[0], found[1] or "prefixes trimmed") if found is not None else None
    if b"x" in line[:200].lower() and (masked := _MASKED_RE.search(line)) is not None:
        time = masked["time"]
        if time.lower().count(b"x"):  # (a time of digits alone is not masked)
            fixed = line[:masked.start("time")] + time.replace(b"x", b"0").replace(b"X", b"0") \
                + line[masked.end("time"):]
            found = normalize(fixed)
            return (found[0], "prefixes rebuilt") if found is not None else None
    if line[:1] in b"DIWECT" and (level := _LEVEL_ONLY_RE.match(line)) is not None \
            and level["word"] in _LEVEL_ONLY_WORDS:
        return (_canonical(None, _LEVELS[level["lvl"]], b"?", b"0", None, None)
                + line[level.start("word"):], "prefixes rebuilt")
    if line[:12] == b"Torchdynamo:" and (old := _TORCHDYNAMO_RE.match(line)) is not None:
        return (_canonical(None, _LEVELS[old["lvl"]], b"torchdynamo", b"0", None, None)
                + line[old.end():], "prefixes rebuilt")
    head = len(line) - len(line.lstrip(b" \t>"))
    if line[head:head + 1].isdigit() and _NO_LEVEL_RE.match(line, head) is not None:
        # a glog prefix whose level letter the paste cut off (sd-webui-forge-classic#1006:
        # "0422 10:42:21.639000 23752 venv\Lib\…\utils.py:1731] [18/4] …"): its level unknown,
        # read as a warning's (the records a user sees without TORCH_LOGS)
        found = normalize(b"W" + line[head:])
        return (found[0], "prefixes rebuilt") if found is not None else None
    if line[head:head + 1] in (b"V", b"I", b"W", b"E", b"C", b"[") \
            and (dated := _DATED_RE.match(line, head)) is not None \
            and (b"torch/" in dated["file"] or b"torch\\" in dated["file"]):
        return (_canonical(dated["rank"], dated["lvl"], dated["file"], dated["lineno"], dated["cid"],
                           dated["artifact"]) + _decoded(line[dated.end():]), "prefixes rebuilt")
    if line[head:head + 1] in (b".", b"[", b"\xe2") or line[head:head + 6] in (b"torch/", b"torch\\"):
        # a prefix cut short, at the line's start
        cut = _rebuilt(line, head)
        if cut is not None:
            return cut[0] + _decoded(line[cut[1]:]), "prefixes rebuilt"
    start = _START_RE.search(line) if _may_start(line) else None
    if start is not None:
        before = line[:start.start()]
        if before.count(b"`") % 2 and before.lstrip(b" >") != b"```":
            return None  # an example in a document's inline code (`[0/1] [__recompiles] …`)
        found = _at_layout(line, start.start())
        if found is not None:
            return found
    # (a stamp that starts like a layout, "[2024-05-01 12:00:00,123] WARNING: ", is not one)
    bare = _bare_head(line)
    if bare is None:
        return None
    return _canonical(bare[0], b"W", b"?", b"0", None, None) + line[bare[1]:], "prefixes rebuilt"


def _at_layout(line: bytes, layout_at: int) -> tuple[bytes, str] | None:
    """``normalize`` of a line where a torch layout may start at ``layout_at``: the layout
    read there, behind the rank tag right before it where there is one."""
    rank = _RANK_BEFORE_RE.search(line, max(layout_at - 24, 0), layout_at)
    # "[trainer0]:[rank0]:[2024-02-06 …] …": the rank before the layout (pytorch#119309; a
    # launcher's own tag in front of it); "[rank3]:[rank3]:W1209 …" (torchtitan#2130: torchrun's
    # tag before torch's own): the layout with its own tag, where the one before it is extra. A
    # launcher's tag with a blank after it ("[rank0]: W1130 …", the form of torch's excepthook)
    # is torch's own without the blank.
    tagged = () if rank is None else (
        (line[rank.start():rank.end()].rstrip(b" ") + line[layout_at:],
         rank.start() > 0 or line[rank.end() - 1:rank.end()] == b" "),)
    for text, trimmed in (*tagged, (line[layout_at:], layout_at > 0)):
        m = GLOG_RE.match(text)
        if m is not None:
            message = _decoded(text[m.end():])
            done = "prefixes trimmed" if trimmed else (
                "links undone" if message != text[m.end():] else "")
            return text[:m.end()] + message, done
        rebuilt = _rebuilt(text, 0)
        if rebuilt is not None:
            prefix, end = rebuilt
            return prefix + _decoded(text[end:]), "prefixes rebuilt"
    return None


# The tail of torch's rank tag ("[rank0]:") before a glog prefix, at a paste's first line: the
# paste began inside the tag (":V0707 …", "0]:V0707 …"), so the line lost its rank
_RANK_CUT_RE = re.compile(rb"(?:(?:(?:(?:r?a)?n)?k)?\d{1,9}\]|\])?:")


def rank_cut(line: bytes) -> tuple[int, bytes] | None:
    """(where torch's prefix starts, its pid) where ``line`` begins inside a rank tag; None
    for any other line."""
    m = _RANK_CUT_RE.match(line)
    if m is None:
        return None
    glog = GLOG_RE.match(line, m.end())
    return (m.end(), glog["pid"]) if glog is not None and glog["rank"] is None else None


# A record's location cut at the end of its line by a paste's wrap ("… [guard added] at
# transformers/src/transformers/models/bert/modeling_") and its rest at the start of the next,
# behind the paste's quote marks ("||          bert.py:235 in forward (…)"): pytorch#107200
_CUT_AT_RE = re.compile(rb" at [^\s:()]{1,1024}$")
_AT_REST_RE = re.compile(rb"^[\s|>]{0,64}(?P<rest>[^\s:()|>]{1,1024}:\d{1,9} in \S.{0,4000})$")


def rejoined_location(first: bytes, line: bytes) -> bytes | None:
    """``first`` with ``line`` joined to it where ``first`` ends inside a location (`` at``
    and a path without its ``:line``) and ``line`` begins with the path's rest, else None."""
    first = first.rstrip()
    if _CUT_AT_RE.search(first[-1100:]) is None:
        return None
    m = _AT_REST_RE.match(line.rstrip(b"\r\n"))
    return first + m["rest"] if m is not None else None


# A one-line message of torch's cut by a paste's wrap inside the reprs it names
# (pytorch#141964: "torch._dynamo.exc.Unsupported: call_method GetAttrVariable(…) __setitem__
# [ConstantVariable(str: '__lock_par" and, at the next line's margin, "ents_weakrefs'),
# ListVariable(length=0)] {}"): a wrap keeps every character, so the rest joins as it stands
_OPENERS = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}")}
_CLOSERS = frozenset(_OPENERS.values())
WRAP_MIN = 60  # a line shorter than this was not wrapped by a terminal or a page


def _open_brackets(text: bytes) -> int:
    """How many brackets ``text`` leaves open (closers without an opener not counted)."""
    depth = 0
    for c in text:
        if c in _OPENERS:
            depth += 1
        elif c in _CLOSERS and depth:
            depth -= 1
    return depth


def rejoined_message(first: bytes, line: bytes) -> bytes | None:
    """``first`` with ``line`` joined to it where ``first`` (a long line) ends inside brackets
    it opened and ``line``, at the margin, closes them all; else None (a line of its own)."""
    first = first.rstrip()
    line = line.rstrip(b"\r\n")
    if len(first) < WRAP_MIN or not line or line[:1] in (b" ", b"\t", b">") \
            or len(line) > 4000 or len(first) > 8000:
        return None
    depth = _open_brackets(first)
    if not depth:
        return None
    for c in line:
        if c in _OPENERS:
            depth += 1
        elif c in _CLOSERS:
            if not depth:
                return None  # (a closer with nothing open: not this message's rest)
            depth -= 1
    return first + line if depth == 0 else None


# Markdown around torch's text (a GitHub issue, a changelog, a page of docs). torch's lines in a
# fence (``` or ~~~) or behind a quote's ">" are a user's paste, read as such; quoted in prose
# (in an inline code span, a table's cell) they are words about torch's output, not records of
# it: dyncli's own CHANGELOG quoted "`…/functions.py:725:" at a line's end and "UserWarning:
# Graph break due to unsupported builtin X`" at the next one's start, and was read as a log.
_FENCES = (b"```", b"~~~")
_TICKS_RE = re.compile(rb"`+")
# GNU tools' quotes, `like this' (make's "target `all'", ld's "undefined reference to
# `cuLaunchKernel'", bash's "unexpected token `('"), in a program's output between torch's
# lines: a backtick that opens no span (a word without blanks from a blank to an apostrophe that
# ends it: a span's `don't` or `x')` is not one)
_GNU_QUOTE_RE = re.compile(rb"(?:^|(?<=\s))`[^`'\s]{1,200}'(?=[\s.,:;]|$)")
# pytest's short test summary ("FAILED tests/t.py::Case::test - ImportError: … Run `pip install
# ti..."): pytest's own line, the exception's message cut at the terminal's width, so a backtick
# in it opens no span of prose (diffusers#11085: the cut "`pip install ti..." made the next
# summary lines, torch's RecompileErrors, "prose" and the paste "not a torch log"). Its test's
# id names a file (".py") or a test ("::") before anything else. Quoted in a span that a line
# of prose above it opened, it is still that span's text
_PYTEST_LINE_RE = re.compile(rb"(?:FAILED|ERROR|XFAIL|XPASS) [^\s:]{1,1000}?(?:\.py\b|::)")


def is_fence(line: bytes) -> bool:
    """Whether ``line`` opens or closes a markdown fence (a torch line after the marks, where
    a paste began the fence on it, torchdynamo#1955, is still read)."""
    return line.lstrip(b" \t>")[:3] in _FENCES


def _prose(line: bytes, carried: bool) -> bool:
    """Whether ``line`` (outside a fence) may be prose: not a quote's, not indented as code
    (4 blanks: a traceback's code line) and not pytest's summary line (``_PYTEST_LINE_RE``)
    unless an inline code span carried into it, and not a
    paste that a backtick opens (a backtick, then "!!! Exception during processing !!! …": the user's
    error as inline code: comfyui-wanvideowrapper-287), whose span runs to its end."""
    body = line.lstrip(b" \t")
    if not body.strip():  # (a blank line ends a paragraph, and its spans)
        return False
    if carried:
        return body[:1] != b">"
    if _PYTEST_LINE_RE.match(body) is not None:  # (pytest's output, not a paragraph's line)
        return False
    if body[:1] == b">" or len(line) - len(body) >= 4:
        return False
    if body[:1] == b"`":
        ticks = _TICKS_RE.findall(body)
        return len(ticks) > 1 and not body.rstrip().endswith(ticks[-1])
    return True


def is_table_row(line: bytes) -> bool:
    """A markdown table's row (``| … | … |``): its cells are prose, whatever they quote."""
    body = line.strip()
    return body[:1] == b"|" and body[-1:] == b"|" and body.count(b"|") >= 3


# A markdown table's delimiter row (GFM: "--- | :---: |", its outer pipes optional): the rows
# under it are the table's, a leading pipe or none ("name | value |"), up to a blank line. A
# line of dashes with no pipe is a heading's underline or a rule, no table's. Each cell between
# the pipes is dashes with a colon at either end for its alignment
_DELIMITER_CELL_RE = re.compile(rb":?-+:?")


def is_table_delimiter(line: bytes) -> bool:
    """A markdown table's delimiter row (``---- | ----``), which makes the line above its
    header and the lines below its rows."""
    body = line.strip()
    if b"|" not in body or body[:1] not in (b"|", b"-", b":") or len(body) > 4000:
        return False
    cells = body.removeprefix(b"|").removesuffix(b"|").split(b"|")
    return all(_DELIMITER_CELL_RE.fullmatch(c.strip(b" \t")) is not None for c in cells)


def prose_code(line: bytes, carried: bool) -> int | None:
    """Where ``line``, outside a fence, begins to quote in prose's code: 0 where it begins
    inside an inline code span an earlier line of its paragraph opened (``carried``) or is a
    table's row; else the position of its first backtick; None where it quotes nothing (no
    backtick, a quote's line, a line indented as code, a paste in inline code)."""
    if not _prose(line, carried):
        return None
    if carried or is_table_row(line):
        return 0
    at = line.find(b"`")
    return at if at >= 0 else None


def leaves_span_open(line: bytes, carried: bool) -> bool:
    """Whether prose's inline code span is open after ``line`` (a line nobody read), by the
    parity of its runs of backticks (a GNU tool's `quote' is none)."""
    if not _prose(line, carried):
        return False
    if b"`" not in line:  # (no run of backticks: the span stays as it was)
        return carried
    if b"'" in line:
        line = _GNU_QUOTE_RE.sub(b"", line)
    return carried != (len(_TICKS_RE.findall(line)) % 2 == 1)

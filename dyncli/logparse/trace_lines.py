"""The trace mapper's record filters and line helpers: what ``TraceEventMapper`` reads, cut fast.

``install_filters`` tells a ``TraceParser`` which records and payload lines the mapper's
handlers (``dyncli.logparse.trace_map``) read, so that the rest of a trace is never decoded;
it depends on nothing but the lines, so a parser in another process can filter too. The
helpers cut what the handlers read out of a guards-tree payload (``_lines_with``, ``_dims``,
``_comment_loc``, ``_shape_guard``) and a compile's ``fail_reason`` (``_limit_hit``,
``_limit_exceeded``), with
``str.find`` and anchored, bounded regexes: linear on any line.
"""

from __future__ import annotations

import functools
import re

from dyncli.logparse import events as ev
from dyncli.logparse import safe
from dyncli.logparse.textmsg import parse_sloc
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_format import PAYLOAD_ARTIFACTS

# The guards tree's lines are cut with str.find and fixed-width regexes: the lazy regexes
# these replace re-scanned the line from every "#" or "(" and were quadratic or worse.
_COMMENT = re.compile(r"\s#\s")
_SHAPE_WORDS = (".size()", ".stride()", "storage_offset")


_MARKED_DIMS = b'"dynamo_dynamic_indices"'
# the guards-tree lines _guards_tree reads (the marking guard: mark_static, issue 26)
_TREE_WORDS = ("TENSOR_MATCH", "LAMBDA_GUARD", "DIMENSION_DYNAMIC_MARKING_GUARD")
# What the reader keeps of a guards tree: the lines _guards_tree can make an event of. Of the
# DIMENSION_DYNAMIC_MARKING_GUARD lines (five per tensor, most of a tree) only mark_static's
# ``getattr(src, '_dynamo_static_indices', set()).issubset({…})`` (textguards.
# _STATIC_INDICES_RE) says anything; its words are in every line that can match it.
_KEPT_TREE_WORDS = (b"TENSOR_MATCH", b"LAMBDA_GUARD",
                    b"'_dynamo_static_indices', set()).issubset({")
# the entries of torch 2.3's ``dynamo_guards`` list that _guards_list reads
_FLAT_WORDS = (b'"code": "check_tensor(', b".size()[", b".stride()[")
_ARTIFACT_NAMES = tuple(name.encode() for name in sorted(PAYLOAD_ARTIFACTS))


def _wanted_artifact(line: bytes) -> bool:
    """An artifact whose name may be one ``_artifact`` reads (its name is in the line)."""
    return any(name in line for name in _ARTIFACT_NAMES)


def install_filters(parser: TraceParser) -> None:
    """Tell ``parser`` which records and payload lines the handlers below read, so that the
    rest is never decoded (most of a trace's JSON): tensors without mark_dynamic dims,
    sources before any such tensor, payloads of artifacts of other names, guards-tree lines
    other than those of _TREE_WORDS. Depends on nothing but the lines, so that a parser in
    another process (``dyncli.diagnose.trace_pipe``) can filter too; what it lets through is a
    superset of what the mapper then reads (``TraceEventMapper`` narrows the sources to those
    a marked tensor awaits)."""
    marked = [False]  # a describe_tensor with mark_dynamic dims went by: sources matter now

    def tensor(line: bytes) -> bool:
        if _MARKED_DIMS in line:
            marked[0] = True
            return True
        return False

    parser.wanted.update({"describe_tensor": tensor, "describe_source": lambda line: marked[0]})
    # every artifact is decoded (a malformed one is counted), but only the payloads of the
    # names read here are collected
    parser.payload_wanted["artifact"] = _wanted_artifact
    parser.payload_words["dynamo_cpp_guards_str"] = _KEPT_TREE_WORDS
    parser.payload_words["dynamo_guards"] = _FLAT_WORDS


def _lines_with(text: str, words: tuple[str, ...]) -> list[str]:
    """The lines of ``text`` (as ``str.splitlines`` cuts them) that hold one of ``words``, in
    order: found with ``str.find``, so a 100 KB guards tree with a dozen such lines is not
    split into its thousands of lines first."""
    spans = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            spans.add((text.rfind("\n", 0, at) + 1, end))
            at = text.find(word, end)
    out = []
    for start, end in sorted(spans):
        piece = text[start:end]
        # splitlines also cuts at \r, \f, \x1c… : keep its lines exactly
        out += [x for x in piece.splitlines() if any(w in x for w in words)]
    return out


@functools.lru_cache(maxsize=4096)  # the same few size strings, guard after guard
def _dims(text: str) -> tuple[int | None, ...]:
    return tuple(safe.small_int(part) for part in text.split(",") if part.strip())


def _comment_loc(line: str) -> ev.UserLoc | None:
    """The user location of a guard's comment: ``…  # code  # file:line in fn``."""
    cut = line.find("# ")
    if cut < 0:
        return None
    return parse_sloc(line[cut + 2:])[0] if "# " in line[cut + 2:] else None


def _shape_guard(line: str) -> str | None:
    """The expression of a shape ``LAMBDA_GUARD`` (one on sizes, strides or offsets)."""
    start = line.find("LAMBDA_GUARD: ")
    if start < 0:
        return None
    start += len("LAMBDA_GUARD: ")
    end = _COMMENT.search(line, start)
    expr = line[start:end.start() if end else len(line)]
    return expr if any(w in expr for w in _SHAPE_WORDS) else None


# compilation_metrics.fail_reason of a compile refused by a recompile limit (torch 2.14):
# "Dynamo recompile limit exceeded … (currently set to 2) … Limit type: recompile_limit"
_WORD = re.compile(r"\w{1,64}")
_DIGITS = re.compile(r"\d{1,9}")


def _limit_hit(text: str) -> tuple[str, str] | None:
    """(limit name, limit) of a recompile-limit ``fail_reason``, found with str.find."""
    start = text.find("recompile limit exceeded")
    if start < 0:
        return None
    kind = text.find("Limit type: ", start)
    name = _WORD.match(text, kind + 12) if kind >= 0 else None
    if name is None:
        return None
    at = text.find("currently set to ", start, kind)
    limit = _DIGITS.match(text, at + 17) if at >= 0 else None
    return name[0], limit[0] if limit else ""


# torch 2.5-2.10 refuse the compile with an exception of their own, whose fail_reason is only
# "<limit> reached" (convert_frame.py: ``RecompileLimitExceeded(f"{limit_type} reached")``, the
# exception named CacheLimitExceeded before 2.7); the limit's value is in the same record's
# dynamo_config. Unread, the refused compile had counted as one that ran.
_LIMIT_EXCEPTIONS = ("RecompileLimitExceeded", "CacheLimitExceeded")
_REACHED = re.compile(r"(\w{1,64}) reached$")


def _limit_exceeded(fail_type: str | None, fail_reason: str | None,
                    dynamo_config: str | None) -> tuple[str, str] | None:
    """(limit name, limit) of a compile refused by torch 2.5-2.10's limit exception."""
    if fail_type not in _LIMIT_EXCEPTIONS:
        return None
    m = _REACHED.match(fail_reason or "")
    if m is None:
        return None
    return m[1], _config_int(dynamo_config or "", m[1]) or ""


_LIMIT_NAMES = ("recompile_limit", "cache_size_limit")  # 2.7 on; before 2.7


def _limit_setting(dynamo_config: str) -> tuple[str, str] | None:
    """(name, value) of the recompile limit in a compilation_metrics' ``dynamo_config``."""
    return next(((name, value) for name in _LIMIT_NAMES
                 if (value := _config_int(dynamo_config, name))), None)


def _config_int(dynamo_config: str, name: str) -> str | None:
    """The digits of ``"name": N`` in a ``dynamo_config`` JSON text (found with str.find)."""
    key = f'"{name}": '
    at = dynamo_config.find(key)
    value = _DIGITS.match(dynamo_config, at + len(key)) if at >= 0 else None
    return value[0] if value else None

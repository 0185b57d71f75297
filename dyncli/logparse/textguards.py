"""The guards tree of the TORCH_LOGS text format (``TORCH_LOGS=guards``), line by line.

``tree_line`` turns one line of the tree into an event: ``TENSOR_MATCH`` → ``TensorMatch``,
a shape ``LAMBDA_GUARD`` → ``ShapeGuard``, the mark_static marking guard → ``MarkedStatic``.
``tensor_check`` and ``_STATIC_INDICES_RE`` are shared with the trace's copy of the tree
(``dynamo_cpp_guards_str`` in ``dyncli.logparse.trace_map``). Lines are cut with ``str.find``
and bounded regexes: linear on any line. Format: torch 2.14 (torch/_dynamo/guards.py).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.guardtext import user_comment
from dyncli.logparse.safe import need_int
from dyncli.logparse.textmsg import _need, parse_sloc

LAMBDA_RE = re.compile(r"LAMBDA_GUARD: (?P<expr>.+?)(?:  # (?P<rest>.*))?$")


def _dims(text: str) -> tuple[int | None, ...]:
    """``2, None, 8`` -> ``(2, None, 8)``; a part that is no small number is a ``ValueError``."""
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part == "None":
            out.append(None)
        elif len(part) <= 18 and part.isdigit() and part.isascii():  # the usual case, at once
            out.append(int(part))
        else:
            out.append(need_int(part, "size"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TensorCheck:
    """The fields of ``TENSOR_MATCH: check_tensor(src, Tensor, DispatchKeySet(…), dtype,
    device=…, requires_grad=…, size=[…], stride=[…])  # comment``."""

    source: str
    dtype: str
    size: str
    stride: str
    rest: str


_TM_HEAD = "TENSOR_MATCH: check_tensor("
_DKS = ", DispatchKeySet("
_DTYPE_RE = re.compile(r"\), (?P<dtype>[\w.]{1,64}), device=")


def tensor_check(text: str) -> TensorCheck | None:
    r"""Cut a TENSOR_MATCH guard into its fields with str.find (linear on any line).

    The regex this replaces (``check_tensor[(](.+?), [\w.]+, DispatchKeySet[(].*?[)], …``)
    nested lazy groups and took 22 s on a 250 KB line.
    """
    start = text.find(_TM_HEAD)
    if start < 0:
        return None
    start += len(_TM_HEAD)
    dks = text.find(_DKS, start)
    if dks < 0:
        return None
    src_end = text.rfind(", ", start, dks)  # src, <tensor type>, DispatchKeySet(
    dtype = _DTYPE_RE.search(text, dks + len(_DKS))
    if src_end <= start or dtype is None:
        return None
    size = text.find(" size=[", dtype.end())
    size_end = text.find("], stride=[", size + 7)
    stride_end = text.find("])", size_end + 11)
    if size < 0 or size_end < 0 or stride_end < 0:
        return None
    return TensorCheck(source=text[start:src_end], dtype=dtype["dtype"],
                       size=text[size + 7:size_end], stride=text[size_end + 11:stride_end],
                       rest=text[stride_end + 2:])


_STATIC_INDICES_RE = re.compile(
    r"getattr\((?P<src>[LG]\[[^,]{1,500}?), '_dynamo_static_indices', set\(\)\)"
    r"\.issubset\(\{(?P<dims>[\d, ]{0,200})\}\)")


def tree_line(text: str, common: dict[str, Any]) -> ev.Event | None:
    """One line of the guards tree: TENSOR_MATCH → TensorMatch, shape LAMBDA_GUARD → ShapeGuard,
    the mark_static marking guard → MarkedStatic.

    Every compile of a frame logs its guards tree again, mostly the same lines: what a line
    says is kept per distinct text (lines up to ``_TREE_CACHED`` characters, the last 2,048),
    and only the event is made anew with the record's fields."""
    made = _tree_fields_cached(text) if len(text) <= _TREE_CACHED else _tree_fields(text)
    return None if made is None else made[0](**made[1], **common)


_TREE_CACHED = 2048


# torch's guard tree pasted without its prefixes (the tree alone, as a user copies it out of a
# guards log: pytorch#167416's "TREE_GUARD_MANAGER:", "+- RootGuardManager", "| +- GLOBAL_STATE:
# ___check_global_state()"): each line read as the tree's line of a guards record is
BARE_TREE_HEAD = "TREE_GUARD_MANAGER:"


def bare_tree(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """The events of a guard tree pasted without its prefixes (its head, then its lines)."""
    return [e for text in lines[1:] if (e := tree_line(text, common)) is not None]


def flat_guard(text: str, common: dict[str, Any]) -> ev.Event | None:
    """One guard of torch 2.1–2.3, which have no guards tree: in the text log a line per guard
    (``check_tensor(L['x'], …, size=[None, 3], …)``, ``2 <= L['x'].size()[0]  # …``), in the
    trace an entry of ``dynamo_guards``. Read as the tree's TENSOR_MATCH or shape LAMBDA_GUARD
    line would be; other guards (``hasattr(…)``, ``___check_…``) say nothing dyncli uses."""
    if text.startswith("check_tensor("):
        return tree_line("TENSOR_MATCH: " + text, common)
    if "L[" in text and (".size()[" in text or ".stride()[" in text) and not text.startswith(
            ("hasattr(", "___")):
        return tree_line("LAMBDA_GUARD: " + text, common)
    return None


def _tree_fields(text: str) -> tuple[type[ev.Event], dict[str, Any]] | None:
    """The event type and fields (but the record's) of one line of the guards tree."""
    if "DIMENSION_DYNAMIC_MARKING_GUARD:" in text:
        sm = _STATIC_INDICES_RE.search(text)
        if sm is None:
            return None
        dims = tuple(int(d) for d in sm["dims"].split(",") if d.strip())
        return (ev.MarkedStatic, {"source": sm["src"], "dims": dims}) if dims else None
    if "TENSOR_MATCH:" in text:
        tm = tensor_check(text)
        if tm is None or not tm.dtype.startswith("torch."):
            raise ValueError("unparsable TENSOR_MATCH")
        rest = tm.rest
        user = parse_sloc(rest.split("# ", 1)[1])[0] if "# " in rest else None
        return ev.TensorMatch, {"source": tm.source, "sizes": _dims(tm.size),
                                "strides": _dims(tm.stride), "dtype": tm.dtype, "user": user}
    if "LAMBDA_GUARD:" in text:
        m = _need(LAMBDA_RE.search(text), "LAMBDA_GUARD")
        if "L[" not in m["expr"]:
            return None  # ambient guards (saved tensor hooks, ...)
        rest = m["rest"] or ""
        return ev.ShapeGuard, {"expr": m["expr"].strip(), "user": parse_sloc(user_comment(rest)[0])[0],
                               "zero_one": "0/1 specialization" in rest}
    return None


# (a failure, a ValueError, is not kept: the line is counted as malformed each time)
_tree_fields_cached = functools.lru_cache(maxsize=2048)(_tree_fields)

"""Compiled autograd's cache misses: ``Cache miss due to …`` → ``AutogradCacheMiss``.

Compiled autograd (``torch._dynamo.config.compiled_autograd = True``) keeps the backward graphs
it captured in a cache of its own, keyed by the autograd nodes and their sizes, before dynamo
sees anything; a miss captures the graph again and dynamo compiles it under the id ``!N``. Its
C++ cache (torch/csrc/dynamo/python_compiled_autograd.cpp) logs each miss at DEBUG through the
``compiled_autograd_verbose`` artifact, and only there: ``TORCH_LOGS=compiled_autograd`` alone
prints the graphs, not the misses. The lines, by release (2.7, 2.11 and 2.15 read from their
libtorch_python.so, 2.11 and 2.15 recorded; the old form read in 2.4's and 2.5's, and in torch's
own test and tutorial; 2.3 logs no miss; 2.6 unread, placed by the date of pytorch#146386, which
brought the one-line form in February 2025):

    Cache miss due to new autograd node: torch::autograd::GraphRoot (NodeCall 0) with key size 39, previous key sizes=[]
    Cache miss due to 1 changed tensor shapes (total of 2): sizes[1]              (2.7 on)
    Cache miss due to changed shapes: marking size idx 0 of AddmmBackward0 (NodeCall 3) as dynamic   (2.4-2.6)

A 2.7+ miss is one line (one reason per capture), its indexes into the graph's sizes; an old
one logs a line per size, its index into that node's sizes. A trace
carries the same sentences, each after its capture's id (``"!2: Cache miss due to …"``).
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev

HEAD = "Cache miss due to "
HEAD_B = HEAD.encode()

_NODE_RE = re.compile(re.escape(HEAD) + r"new autograd node: (?P<node>[^\n]{1,500}?)"
                      r" with key size (?P<key>\d{1,12}), previous key sizes=\[(?P<prev>[\d,]{0,4000})\]")
_SHAPES_RE = re.compile(re.escape(HEAD) + r"(?P<n>\d{1,9}) changed tensor shapes "
                        r"\(total of (?P<total>\d{1,9})\): (?P<sizes>[^\n]{0,20000})")
_OLD_RE = re.compile(re.escape(HEAD) + r"changed shapes: marking size idx (?P<idx>\d{1,9}) of "
                     r"(?P<node>[^\n]{1,500}) as dynamic")
_CALL_RE = re.compile(r"^(?P<name>.{0,500}?) \(NodeCall (?P<call>\d{1,9})\)$")
_SIZE_RE = re.compile(r"sizes\[(\d{1,9})\]")
KEPT_SIZES = 32  # size indexes kept per miss (a miss of a big model names hundreds)


def _node(text: str) -> tuple[str, int | None]:
    """``torch::autograd::GraphRoot (NodeCall 0)`` → (its name, its NodeCall index)."""
    m = _CALL_RE.match(text)
    return (m["name"], int(m["call"])) if m else (text, None)


def miss(text: str, common: dict[str, Any]) -> ev.AutogradCacheMiss | None:
    """The miss a line (its message, from ``Cache miss due to``) says; None: not one."""
    if (m := _NODE_RE.match(text)) is not None:
        node, call = _node(m["node"])
        previous = tuple(int(p) for p in m["prev"].split(",") if p)
        return ev.AutogradCacheMiss(reason="node", node=node, call=call,
                                    key_size=int(m["key"]), previous=previous, **common)
    if (m := _SHAPES_RE.match(text)) is not None:
        sizes = tuple(int(i) for i in _SIZE_RE.findall(m["sizes"])[:KEPT_SIZES])
        return ev.AutogradCacheMiss(reason="shapes", changed=int(m["n"]),
                                    total=int(m["total"]), sizes=sizes, **common)
    if (m := _OLD_RE.match(text)) is not None:
        node, call = _node(m["node"])
        return ev.AutogradCacheMiss(reason="shapes", node=node, call=call, changed=1,
                                    sizes=(int(m["idx"]),), **common)
    return None


def cache_miss(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A ``Cache miss due to …`` record of the text log (its first line)."""
    found = miss(lines[0], common)
    return [found] if found is not None else []

"""Compiled autograd's recompiles: the backward graph captured again after a cache miss.

Under ``torch._dynamo.config.compiled_autograd = True`` the backward is not AOTAutograd's alone:
compiled autograd captures the whole backward graph as autograd runs it and hands it to dynamo
(compile ids ``!N/…``). Its cache sits before dynamo's guards: a miss (``AutogradCacheMiss``,
``dyncli.logparse.textautograd``) captures again and dynamo compiles the new graph. Two reasons:

- a new autograd node: the backward holds a node the cache has not seen. The first capture is
  one (an empty cache at the root, NodeCall 0); after it, a new ``CompiledFunctionBackward`` is
  the forward's new compiled graph bringing its own backward: where the forward recompiled just
  before, the forward's fix removes this capture too (measured: tests/integration).
- changed sizes: compiled autograd follows torch.compile's ``dynamic`` (_dynamo/eval_frame.py,
  2.7, 2.11 and 2.15), so under the default (None) it captures with static sizes, and on a
  change it marks the sizes that changed dynamic and captures again, as automatic dynamic does
  for the forward. ``torch.compile(…, dynamic=True)`` captures them dynamic from the first
  backward. torch 2.4-2.6 log such a miss a line per size (the form tells the release: 2.4 and
  2.5 wrote it, 2.7 the one-line form), and there compiled autograd takes no ``dynamic``
  (2.4's and 2.5's ``compiled_autograd.enable(compiler_fn)``): ``OLD_DYNAMIC_FIX``.

``MissAccumulator`` keeps the misses (one per capture: an old release's lines, one per size,
merge); ``autograd_findings`` says them, ``dyncli.diagnose.causes`` ranks them with the rest.
"""

from __future__ import annotations

import dataclasses

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import AutogradMissReport, Diagnosis
from dyncli.diagnose.reasons import cite
from dyncli.logparse import events as ev
from dyncli.logparse.textautograd import KEPT_SIZES

KEPT = 2000  # misses kept per input (a capture each: a run with more says the same)
_FORWARD_NODE = "CompiledFunctionBackward"  # the backward of a graph torch.compile made

# torch reads torch._dynamo.config.compiled_autograd once, when torch.compile(fn, …) builds its
# OptimizeContext (_dynamo/eval_frame.py, 2.4-2.15: "if config.compiled_autograd:" in __init__),
# and turns compiled autograd on for each call of the compiled fn (its enter_exit_hooks): the
# flag set after torch.compile changes nothing, and a backward run after fn returns is not
# captured (tests/integration/test_compiled_autograd_fix.py runs both)
DYNAMIC_FIX = ("compile with dynamic=True: torch.compile(fn, dynamic=True), with "
               "torch._dynamo.config.compiled_autograd = True set before that torch.compile "
               "call (torch reads the flag when torch.compile is called, not when the backward "
               "runs) and fn running the backward (compiled autograd is on while the compiled fn "
               "runs). Compiled autograd takes torch.compile's dynamic: with None it captures "
               "static sizes first and marks a size dynamic only after it changed (torch 2.7, "
               "2.11 and 2.15 read). It makes the forward's sizes dynamic from its first compile "
               "too. Under "
               "torch._dynamo.compiled_autograd._enable(compiler_fn) its dynamic=True is the "
               "default (2.11 and 2.15; 2.7's is False)")
# the same miss as torch 2.4-2.6 log it, a line per size: that compiled autograd takes no dynamic
OLD_DYNAMIC_FIX = ("this log's form of the miss (a line per size) is torch 2.4-2.6's, whose "
                   "compiled autograd captures every size static first whatever torch.compile's "
                   "dynamic says (2.4's and 2.5's compiled_autograd.enable(compiler_fn) takes "
                   "none), and captures again once for each size that changes, which then stays "
                   "dynamic. To capture them dynamic from the first backward: torch 2.7 or "
                   "newer, where compiled autograd takes torch.compile's dynamic, and there "
                   "torch.compile(fn, dynamic=True)")


class MissAccumulator:
    """Collects ``AutogradCacheMiss`` events; ``finish`` gives one row per capture."""

    def __init__(self) -> None:
        self._rows: list[AutogradMissReport] = []
        self._started: set[tuple[int | None, int]] = set()  # (rank, pid) with a miss seen

    def feed(self, e: ev.AutogradCacheMiss) -> None:
        """Take one miss."""
        capture = str(e.compile_id) if e.compile_id is not None else ""
        # an old release's line names one size of one node (its index into that node's sizes)
        marked = tuple(f"size idx {i} of {e.node}" + (f" (NodeCall {e.call})" if e.call is not None
                                                      else "") for i in e.sizes) \
            if e.reason == "shapes" and e.node else ()
        last = self._rows[-1] if self._rows else None
        if last is not None and last.rank == e.rank and e.reason == last.reason == "shapes" and (
                (capture and capture == last.capture)
                or (not capture and not last.capture and e.line == last.line + last.lines)):
            # one capture's lines (an old release's: a line per size that changed)
            self._rows[-1] = dataclasses.replace(
                last, changed=last.changed + e.changed,
                sizes=(last.sizes + (() if marked else e.sizes))[:KEPT_SIZES],
                marked=(last.marked + marked)[:KEPT_SIZES], lines=last.lines + 1)
            return
        first = (e.reason == "node" and e.call == 0 and not e.previous
                 and (e.rank, e.pid) not in self._started)
        self._started.add((e.rank, e.pid))
        if len(self._rows) < KEPT:
            self._rows.append(AutogradMissReport(
                rank=e.rank, line=e.line, capture=capture, reason=e.reason,
                node="" if marked else e.node, call=None if marked else e.call,
                key_size=e.key_size, previous=e.previous, changed=e.changed, total=e.total,
                sizes=() if marked else e.sizes, after=str(e.after) if e.after else "",
                first=first, marked=marked))

    def finish(self) -> tuple[AutogradMissReport, ...]:
        """The rows, in log order."""
        return tuple(self._rows)


def _said(x: AutogradMissReport) -> str:
    """A miss as the log says it, for a finding's evidence."""
    at = f"[{x.capture}] " if x.capture else ""
    if x.reason == "node":
        call = f" (NodeCall {x.call})" if x.call is not None else ""
        return (f"{at}cache miss: new autograd node {x.node}{call}, key size {x.key_size}, "
                f"previous key sizes {list(x.previous)}")
    of = f" (total of {x.total})" if x.total is not None else ""
    return f"{at}cache miss: {x.changed} changed size(s){of}: " + ", ".join(_sizes([x]))


def _sizes(rows: list[AutogradMissReport]) -> list[str]:
    """The sizes that changed, as torch named them: ``sizes[i]`` of the graph's sizes (2.7 on),
    an old release's ``size idx I of NODE (NodeCall N)``, each once."""
    return list(dict.fromkeys([*(f"sizes[{i}]" for i in sorted({i for x in rows for i in x.sizes})),
                               *(m for x in rows for m in x.marked)]))


def _evidence(rows: list[AutogradMissReport]) -> tuple[str, ...]:
    return tuple(cite(x.line, "", _said(x)) for x in rows[:3])


def _pairs(rows: list[AutogradMissReport], follows: dict[int, str]) -> tuple[tuple[str, str], ...]:
    return tuple((x.capture, follows.get(id(x), "")) for x in rows if x.capture)


def autograd_findings(diag: Diagnosis) -> list[Advice]:
    """Per rank: the backward's captures after a forward recompile, after changed sizes, and
    after a new node the log does not explain (the first capture is no recompile)."""
    out: list[Advice] = []
    recompiled = {(r.rank, r.compile_id.split("_")[0]): r for r in diag.recompiles if r.compiled}
    for rank in dict.fromkeys(x.rank for x in diag.autograd_misses):
        rows = [x for x in diag.autograd_misses if x.rank == rank]
        forward: list[AutogradMissReport] = []
        follows: dict[int, str] = {}
        shapes: list[AutogradMissReport] = []
        nodes: list[AutogradMissReport] = []
        linked: set[str] = set()  # forward recompiles a capture already followed
        for x in rows:
            if x.first:
                continue
            after = x.after.split("_")[0]
            r = recompiled.get((rank, after))
            if (x.reason == "node" and x.node == _FORWARD_NODE and r is not None
                    and after not in linked):
                linked.add(after)
                follows[id(x)] = r.compile_id
                forward.append(x)
            elif x.reason == "shapes":
                shapes.append(x)
            else:
                nodes.append(x)
        captures = len(rows)
        if forward:
            fns = ", ".join(dict.fromkeys(recompiled[(rank, x.after.split("_")[0])].function
                                          for x in forward))
            out.append(Advice(
                kind=AdviceKind.COMPILED_AUTOGRAD, rank=rank, key="forward",
                function=fns, autograd=_pairs(forward, follows),
                message=(f"compiled autograd captured the backward graph again {len(forward)} "
                         f"time(s) right after the forward ({fns}) recompiled. The new forward "
                         f"graph brings a new {_FORWARD_NODE} node, a cache miss of the backward "
                         f"({captures} capture(s) of it in all). The forward's fix removes these "
                         "backward compiles too."),
                fix="", evidence=_evidence(forward)))
        if shapes:
            sizes = _sizes(shapes)
            out.append(Advice(
                kind=AdviceKind.COMPILED_AUTOGRAD, rank=rank, key="shapes",
                autograd=_pairs(shapes, follows),
                message=(f"compiled autograd captured the backward graph again {len(shapes)} "
                         "time(s) because sizes in it changed ("
                         + ", ".join(sizes[:8])
                         + (", …" if len(sizes) > 8 else "") + "). It captured them static and, "
                         "as torch does after such a miss, marked the sizes that changed dynamic "
                         f"for the next capture ({captures} capture(s) of the backward in all)."),
                fix=OLD_DYNAMIC_FIX if all(x.marked and not x.sizes for x in shapes)
                else DYNAMIC_FIX, evidence=_evidence(shapes)))
        if nodes:
            names = ", ".join(dict.fromkeys(x.node for x in nodes))
            out.append(Advice(
                kind=AdviceKind.COMPILED_AUTOGRAD, rank=rank, key="node",
                autograd=_pairs(nodes, follows),
                message=(f"compiled autograd captured the backward graph again {len(nodes)} "
                         f"time(s) for a new autograd node ({names}). The backward differed "
                         "from every graph cached (another path through the forward, a new "
                         "forward graph, a hook); the log names the node, not what changed."),
                fix=("no fix the log supports; TORCH_LOGS=\"recompiles\" shows whether the "
                     "forward recompiled just before each miss"),
                evidence=_evidence(nodes)))
    return out

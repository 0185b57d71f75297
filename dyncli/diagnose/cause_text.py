"""A root cause while it is built (``Draft``), and its title and fix, written from its fields.

``dyncli.diagnose.causes`` groups the findings into drafts; :func:`describe` writes each one's
title and fix from what the draft holds (its entries, flag, graph break, findings and their
fields), and :meth:`Draft.freeze` makes the frozen ``Cause`` the Diagnosis stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dyncli.diagnose import entries as en
from dyncli.diagnose.findings import Advice, Cause, CauseKind, ConfigFlag
from dyncli.diagnose.model import REASON_CUT, GraphBreakReport, raised_break
from dyncli.diagnose.releases import Releases

ENV = "TORCH_COMPILE_DYNAMIC_SOURCES"


@dataclass
class Draft:
    """One fix and everything it would remove, while the findings are being grouped."""

    key: str
    kind: CauseKind
    title: str = ""
    fix: str = ""
    compile_ids: dict[tuple[int | None, str], None] = field(default_factory=dict)
    recompiles: int = 0
    graph_breaks: int = 0
    findings: list[Advice] = field(default_factory=list)
    entries: dict[str, None] = field(default_factory=dict)  # allow-list entries (allow-list causes)
    ranks: dict[int | None, None] = field(default_factory=dict)
    order: int = 0
    flag: ConfigFlag | None = None  # config causes: the flag
    graph_break: GraphBreakReport | None = None  # graph-break causes: the break

    def absorb(self, other: Draft) -> None:
        """Take ``other``'s compiles, findings and entries (its cause merged into this one)."""
        self.compile_ids.update(other.compile_ids)
        self.recompiles += other.recompiles
        self.graph_breaks += other.graph_breaks
        self.findings += other.findings
        self.entries.update(other.entries)
        self.ranks.update(other.ranks)
        self.title = self.title or other.title
        self.fix = self.fix or other.fix
        self.flag = self.flag or other.flag
        self.graph_break = self.graph_break or other.graph_break

    def freeze(self, compile_s: float | None) -> Cause:
        """The frozen ``Cause`` (``compile_s``: the seconds its compiles took, None: unknown)."""
        return Cause(key=self.key, kind=self.kind, title=self.title, fix=self.fix,
                     compile_ids=tuple(self.compile_ids), recompiles=self.recompiles,
                     graph_breaks=self.graph_breaks, compile_s=compile_s,
                     findings=tuple(self.findings), entries=tuple(self.entries),
                     ranks=tuple(self.ranks))


def describe(c: Draft, printed: Mapping[str, int], known: Releases | None = None) -> None:
    """The title and the fix of a cause. ``printed``: every allow-list entry a finding's fix
    lists (the rules' decision of where a list helps), at its place in the Suggestions;
    ``known``: the releases the input tells."""
    if c.kind is CauseKind.ALLOW_LIST:
        _allow_list(c, printed, known)
    elif c.kind is CauseKind.CONFIG and c.flag is not None:
        flag = c.flag
        c.fix = next((a.fix for a in c.findings if a.flag is not None
                      and a.flag.name == flag.name), "") or str(flag)
        c.title = flag.title or f"static by default: {flag.name}"
    elif c.kind is CauseKind.GRAPH_BREAK:
        b = c.graph_break
        if b is not None and b.resumed_in:  # proven by a resume function's name only
            c.title = (f"graph break at {b.place}{' in ' + b.function if b.file else ''}: "
                       f"torch resumed after it in {b.resumed_in}; its reason is not in the log")
        elif b is not None:
            raised = raised_break(known) if b.raised else ""
            c.title = (f"graph break{' ' + b.gb_code if b.gb_code else ''} at {b.place}{raised}: "
                       f"{b.reason or REASON_CUT}"
                       # (2.4-2.7's "Graph break: skip:": torch gave the frame up there)
                       + ("; torch ran the whole frame eagerly" if b.skipped_frame else ""))
            c.fix = c.fix or (b.hints[0] if b.hints else "")
    elif c.kind is CauseKind.ZERO_ONE and not c.title:
        c.title = "sizes 0 and 1 are always specialized: a dynamic graph cannot serve them"
        c.fix = c.fix or next((a.fix for a in c.findings if a.fix), "")
    elif c.findings:
        first = c.findings[0]
        c.title = c.title or _first_sentence(first.message)
        c.fix = c.fix or next((a.fix for a in c.findings if a.fix), "")
    elif not c.title:
        c.title = c.key


def _allow_list(c: Draft, printed: Mapping[str, int], known: Releases | None = None) -> None:
    # Only entries a rule printed: the rules decide where no list helps (a float, a value the
    # code specializes at every value, a dim the guard limit pins; issue 26). In the order the
    # Suggestions print them (an entry none prints after those, in the order it was found)
    last = len(printed)
    ordered = sorted(c.entries, key=lambda e: printed.get(e, printed.get(en.base(e), last)))
    ok = [e for e in ordered if e in printed or en.base(e) in printed]
    named = [e for e in ordered if not e.startswith(".*")] or ordered
    entries = ",".join(named)
    covered = all(e in ok or any(en.covers(p, e) for p in ok) for e in named)
    pinned = next((a for a in c.findings if a.needs_richer_log), None)
    if ok and covered:
        c.fix = f'{ENV}="{",".join(ok)}"'
        if known is not None and known.has(ENV) is False:
            # (releases without the setting: the listed finding's fix, the call that works
            # there first: advice._for_release)
            c.fix = next((a.fix for a in c.findings if a.listed and a.fix), c.fix)
        c.title = f"inputs {entries} change size or value; make them dynamic up front"
    elif pinned is not None:
        c.fix = pinned.fix
        c.title = (f"inputs {entries} recompile again after a compile made for their "
                   "change; this log does not say what keeps them from staying dynamic")
    else:
        c.fix = next((a.fix for a in c.findings if a.fix and not a.listed), "")
        c.title = (f"inputs {entries} change size or value; no allow-list entry "
                   "removes these compiles (see the findings)")


def _first_sentence(text: str) -> str:
    cut = min((i for i in (text.find(". "), text.find("; ")) if i > 0), default=len(text))
    return text[:cut].rstrip(".")

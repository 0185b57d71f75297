"""Root causes: every finding grouped by the fix it leads to, ranked by what the fix buys.

A layer ON TOP of the advice rules (``dyncli.diagnose.advice``, ``branches``, ``trace``): it
reads their ``Advice`` objects and the Diagnosis rows, never re-implements a rule.

1. Every recompile is attributed to ONE fix, from its first guard failure (torch lists the
   newest cache entry's failure first): the user line of a size branch (``branches``) or of a
   specialization made in the failed entry's compile; a config flag (parameters, module
   properties, module ints); an allow-list entry (``tensor 'x' size mismatch at index 0`` →
   ``L['x']:0``; ``n == 31`` → ``L['n']``); 0/1 specialization; a non-shape change. The
   compiles of a graph break's resume frames are attributed to that break (code and site).
   Each compile belongs to at most one cause, so the costs add up to at most the total.
2. Each suggestion joins the cause of its fix: the allow-list entries of its
   ``TORCH_COMPILE_DYNAMIC_SOURCES=`` line (entries shared between suggestions merge them),
   the config flag it sets, the ``file:line`` it names, the graph-break site; a suggestion of
   an unknown kind is keyed by its fix text. Causes left with the same fix text merge too:
   no two causes carry the same fix.
3. Ranked by compile seconds the fix removes (trace inputs), then compiles, then recompiles,
   then graph breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dyncli.diagnose.branches import crossing
from dyncli.diagnose.model import Advice, Diagnosis, RecompileReport, SpecializationReport

ENV = "TORCH_COMPILE_DYNAMIC_SOURCES"
_ENV_RE = re.compile(ENV + r'="(?P<v>[^"]*)"')
_CONFIG_RE = re.compile(r"\b(?:torch\.[\w.]*config\.)(?P<flag>\w+)\s*=\s*(?P<val>True|False)")
_CID = re.compile(r"^(?P<cid>!?\d+(?:/\d+)*)(?:_\d+)?: ")
_MISMATCH = re.compile(r"^tensor '(?P<name>.+)' size mismatch at index (?P<dim>\d{1,9})\.")
_SCALAR = re.compile(r"^(?:not \()?\(?\s*(?P<name>[A-Za-z_][\w.]*(?:\[[^\]]+\][\w.]*)*)\s*(?:==|!=|<=|>=|<|>)")
_ZERO_ONE = re.compile(r"^2 <= \S+\.size\(\)\[\d+\]$|expected \d+, actual [01]$")
_PARAM = re.compile(r"_parameters\[|_buffers\[|force_parameter_static_shapes")
_STOP = frozenset(" \t\n`'\"(")
_DIGITS = re.compile(r"\d{1,9}")
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d{1,9})$")
_LINE_KINDS = ("user-specialization", "constraint-violation", "size-branch", "pgo-recompile")


@dataclass
class Cause:
    """One fix and everything it would remove."""

    key: str
    what: str  # allow-list | user-code | config | graph-break | zero-one | non-shape | other
    title: str = ""
    fix: str = ""
    compile_ids: dict[tuple[int | None, str], None] = field(default_factory=dict)
    recompiles: int = 0
    graph_breaks: int = 0
    compile_s: float | None = None
    findings: list[Advice] = field(default_factory=list)
    entries: dict[str, None] = field(default_factory=dict)  # allow-list entries (allow-list causes)
    ranks: dict[int | None, None] = field(default_factory=dict)
    order: int = 0

    @property
    def compiles(self) -> int:
        """Compiles the fix would remove."""
        return len(self.compile_ids)

    def line(self) -> str:
        """The one-line summary: cost, what, fix."""
        cost = (f"{self.compile_s:.2f} s, " if self.compile_s is not None else "") + \
            f"{self.compiles} compile(s)"
        if self.graph_breaks:
            cost += f", {self.graph_breaks} graph break(s)"
        return f"[{cost}] {self.title}" + (f" — fix: {self.fix}" if self.fix else "")

    def to_json(self, rank: int) -> dict[str, Any]:
        """One item of the ``causes`` list of ``--json``."""
        return {
            "rank": rank, "key": self.key, "kind": self.what, "title": self.title,
            "fix": self.fix,
            "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
            "compiles": self.compiles, "recompiles": self.recompiles,
            "graph_breaks": self.graph_breaks,
            "compile_ids": [{"rank": r, "compile_id": c} for r, c in self.compile_ids],
            "ranks": list(self.ranks),
            "findings": [{"kind": a.kind, "message": a.message, "fix": a.fix,
                          "evidence": list(a.evidence), "rank": a.rank} for a in self.findings],
        }


def _source(name: str) -> str:
    """A guard's tensor or variable name as a dynamic-sources entry base."""
    if name.startswith(("L[", "G[")):
        return name
    m = re.match(r"^([A-Za-z_]\w*)(.*)$", name)
    return f"L['{m.group(1)}']{m.group(2)}" if m else name


def _base(entry: str) -> str:
    m = re.match(r"^(.*\])(?::\d{1,9})?$", entry)
    return m.group(1) if m else entry


def _covers(pattern: str, entry: str) -> bool:
    """Whether a regex entry (``.*:0``: dim 0 of every source) matches a concrete entry, as
    torch's ``re.match`` on the source name and its ``:N`` dim would."""
    if not pattern.startswith(".*") or entry.startswith(".*"):
        return False
    pat, _, pdim = pattern.rpartition(":") if re.search(r":\d{1,9}$", pattern) else (pattern, "", "")
    base, _, dim = entry.rpartition(":") if re.search(r"\]:\d{1,9}$", entry) else (entry, "", "")
    try:
        return re.match(pat, base) is not None and (not pdim or pdim == dim)
    except re.error:
        return False


class _Builder:
    def __init__(self, diag: Diagnosis) -> None:
        self.diag = diag
        # every allow-list entry the rules printed (their decision of what a list can fix)
        self.printed = {e for a in diag.suggestions for m in _ENV_RE.finditer(a.fix)
                        for e in m["v"].split(",") if e}
        self.causes: dict[str, Cause] = {}
        self.parent: dict[str, str] = {}  # union-find over keys
        times = diag.trace.compile_times if diag.trace is not None else ()
        self.seconds = {(c.rank, c.compile_id): c.seconds for c in times
                        if c.seconds is not None}  # None: no time in the trace (torch 2.3)
        self.claimed: set[tuple[int | None, str]] = set()
        # (rank, compile id) -> the first specialization by user code in it: looked up per
        # recompile (a scan per recompile grew with recompiles x specializations)
        self.user_specs: dict[tuple[int | None, str], SpecializationReport] = {}
        for s in diag.specializations:
            if s.user:
                self.user_specs.setdefault((s.rank, s.compile_id.split("_")[0]), s)

    # ------------------------------------------------------------ union-find

    def find(self, key: str) -> str:
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def cause(self, key: str, what: str) -> Cause:
        key = self.find(key)
        c = self.causes.get(key)
        if c is None:
            c = self.causes[key] = Cause(key=key, what=what, order=len(self.causes))
            self.parent[key] = key
        return c

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        ca, cb = self.causes[ra], self.causes[rb]
        if cb.order < ca.order:
            ra, rb, ca, cb = rb, ra, cb, ca
        self.parent[rb] = ra
        del self.causes[rb]
        ca.compile_ids.update(cb.compile_ids)
        ca.recompiles += cb.recompiles
        ca.graph_breaks += cb.graph_breaks
        ca.findings += cb.findings
        ca.entries.update(cb.entries)
        ca.ranks.update(cb.ranks)
        ca.title = ca.title or cb.title
        ca.fix = ca.fix or cb.fix

    # ------------------------------------------------------------ rows

    def allow(self, entries: Iterable[str]) -> str | None:
        """The key of allow-list entries (merging every cause that shares one of them)."""
        keys = []
        for entry in entries:
            key = "sources:" + entry
            c = self.cause(key, "allow-list")
            c.entries[entry] = None
            keys.append(key)
            # a whole-source entry and the per-dim entries of the same source are one fix, and
            # so are a regex entry (a coarse log's ``.*:0``) and the entries it matches
            for other in list(self.causes.values()):
                if other.what == "allow-list" and any(
                        (_base(e) == _base(entry) and (e == _base(e) or entry == _base(entry)))
                        or _covers(e, entry) or _covers(entry, e)
                        for e in other.entries):
                    self.union(key, other.key)
        for key in keys[1:]:
            self.union(keys[0], key)
        return self.find(keys[0]) if keys else None

    def recompile_key(self, r: RecompileReport) -> str:
        first = r.reasons[0] if r.reasons else ""
        m = _CID.match(first)
        failed, guard = (m["cid"], first[m.end():]) if m else ("", first)
        c = crossing(r)
        if c is not None:
            code = f" `{c.user.code}`" if c.user and c.user.code else ""
            return self.line_key(c.user.file if c.user else "", c.user.line if c.user else 0,
                                 f"{r.function}: size branch{code} (guard `{c.guard}` failed)")
        spec = self.user_specs.get((r.rank, failed)) if failed else None
        if spec is not None and spec.user is not None:
            code = f" `{spec.user.code}`" if spec.user.code else ""
            return self.line_key(spec.user.file, spec.user.line,
                                 f"{r.function}: user code{code} specialized "
                                 f"{', '.join(spec.sources) or spec.symbol} to {spec.value}")
        if r.cause == "other":
            return self.cause("non-shape", "non-shape").key
        if _PARAM.search(first):
            return self.cause("config:force_parameter_static_shapes", "config").key
        # (a module's tensor attribute or int: its allow-list entry, L['self'].cache:0 or
        # L['self'].k: the config flags removed fewer compiles, or none, in the advice corpus)
        if _ZERO_ONE.search(guard):
            return self.cause("zero-one", "zero-one").key
        mm = _MISMATCH.match(guard)
        if mm is not None:
            return self.allow([f"{_source(mm['name'])}:{mm['dim']}"]) or ""
        sm = _SCALAR.match(guard) if r.cause == "scalar" else None
        if sm is not None:
            return self.allow([_source(sm["name"])]) or ""
        return self.cause(f"recompile:{r.function}:{r.cause}", "other").key

    def line_key(self, file: str, line: int, what: str) -> str:
        c = self.cause(f"line:{file}:{line}" if file else f"line:?:{what}", "user-code")
        if what and not c.title:
            c.title = what + (f" at {file}:{line}" if file else "")
        return c.key

    def add_recompiles(self) -> None:
        for r in self.diag.recompiles:
            c = self.cause(self.recompile_key(r), "other")
            c.recompiles += 1
            c.ranks[r.rank] = None
            cid = (r.rank, r.compile_id.split("_")[0])
            if r.compiled and cid not in self.claimed:
                self.claimed.add(cid)
                c.compile_ids[cid] = None

    def add_graph_breaks(self) -> None:
        for b in self.diag.graph_breaks:
            key = f"break:{b.gb_code or b.reason}:{b.file}:{b.user_line}"
            c = self.cause(key, "graph-break")
            c.graph_breaks += b.count
            c.ranks[b.rank] = None
            lines = {b.user_line} | {int(s.rsplit(":", 1)[1].split(" ")[0]) for s in b.call_sites
                                     if re.search(r":\d+ in ", s)}
            for f in self.diag.frames:  # the frames a break made: torch's resume functions
                m = _RESUME.match(f.function)
                if f.rank != b.rank or m is None or int(m["line"]) not in lines:
                    continue
                for cid in f.compile_ids:
                    if (f.rank, cid) not in self.claimed:
                        self.claimed.add((f.rank, cid))
                        c.compile_ids[(f.rank, cid)] = None

    # ------------------------------------------------------------ advice

    def attach(self, a: Advice) -> None:
        key = self.advice_key(a)
        c = self.cause(key, "other")
        c.findings.append(a)
        c.ranks[a.rank] = None
        if a.fix and not c.fix:
            c.fix = a.fix

    def advice_key(self, a: Advice) -> str:
        text = f"{a.message} {a.fix}"
        if a.kind == "zero-one-specialization":
            return self.cause("zero-one", "zero-one").key
        if a.kind == "non-shape-recompile":
            return self.cause("non-shape", "non-shape").key
        if a.kind == "size-pinned":  # "L['x']:0: …": the input it is about
            return self.allow([a.message.split(": ", 1)[0]]) or ""
        if a.kind == "scalar-recompile" and not _ENV_RE.search(a.fix):
            # "… changed value (n == 2).": join the cause of that input (no list to key it by)
            m = re.search(r"\((?P<g>[^()]*)\)\.$", a.message)
            sm = _SCALAR.match(m["g"]) if m else None
            if sm is not None:
                return self.allow([_source(sm["name"])]) or ""
        env = _ENV_RE.search(a.fix)
        if env and a.kind not in _LINE_KINDS:
            key = self.allow([e for e in env["v"].split(",") if e])
            if key:
                return key
        flag = _CONFIG_RE.search(a.fix)
        if flag and a.kind not in _LINE_KINDS:
            return self.cause(f"config:{flag['flag']}", "config").key
        if a.kind == "graph-break":
            for c in list(self.causes.values()):
                if c.what == "graph-break" and c.key.endswith(_graph_site(a.message)):
                    return c.key
        if a.kind in _LINE_KINDS or a.kind.endswith("specialization"):
            found = _locations(text)
            for file, line in found:
                key = f"line:{file}:{line}"
                if self.find(key) in self.causes:
                    return self.find(key)
            if found:
                return self.line_key(found[0][0], found[0][1], "")
        if a.kind == "recompile-limit":
            # "F hit …": the cause that holds most recompiles of F is the one to fix
            fn = a.message.split(" ", 1)[0]
            best = max((c for c in self.causes.values() if c.recompiles and any(
                r.function == fn and self.find(self.recompile_key(r)) == c.key
                for r in self.diag.recompiles)), key=lambda c: c.recompiles, default=None)
            if best is not None:
                return best.key
        return self.cause("fix:" + (a.fix or f"{a.kind}: {a.message}"), "other").key

    # ------------------------------------------------------------ result

    def finish(self) -> list[Cause]:
        by_fix: dict[str, str] = {}
        for c in sorted(self.causes.values(), key=lambda c: c.order):
            self.describe(c)
            if c.fix in by_fix:
                self.union(by_fix[c.fix], c.key)
            elif c.fix:
                by_fix[c.fix] = c.key
        out = list(self.causes.values())
        for c in out:
            self.describe(c)
            if self.diag.trace is not None and self.diag.trace.timed:  # else unknown, not 0
                c.compile_s = sum(self.seconds.get(k, 0.0) for k in c.compile_ids)
        out.sort(key=lambda c: (-(c.compile_s or 0.0), -c.compiles, -c.recompiles,
                                -c.graph_breaks, c.order))
        return out

    def describe(self, c: Cause) -> None:
        """The title and the fix of a cause, from its key and findings."""
        if c.what == "allow-list":
            # Only entries a rule printed: the rules decide where no list helps (a float, a
            # value the code specializes at every value, a dim the guard limit pins; issue 26)
            ok = [e for e in sorted(c.entries) if e in self.printed or _base(e) in self.printed]
            named = sorted(e for e in c.entries if not e.startswith(".*")) or sorted(c.entries)
            entries = ",".join(named)
            covered = all(e in ok or any(_covers(p, e) for p in ok) for e in named)
            pinned = next((a for a in c.findings if a.fix.startswith("none from this log")),
                          None)
            if ok and covered:
                c.fix = f'{ENV}="{",".join(ok)}"'
                c.title = f"inputs {entries} change size or value; make them dynamic up front"
            elif pinned is not None:
                c.fix = pinned.fix
                c.title = (f"inputs {entries} recompile again after a compile made for their "
                           "change; this log does not say what keeps them from staying dynamic")
            else:
                c.fix = next((a.fix for a in c.findings if a.fix and ENV not in a.fix), "")
                c.title = (f"inputs {entries} change size or value; no allow-list entry "
                           "removes these compiles (see the findings)")
        elif c.what == "config":
            flag = c.key.split(":", 1)[1]
            fix = next((a.fix for a in c.findings if flag in a.fix), "")
            c.fix = fix or f"torch._dynamo.config.{flag} = " + (
                "True" if flag.startswith("allow") else "False")
            c.title = f"static by default: {flag}"
        elif c.what == "graph-break":
            b = next((b for b in self.diag.graph_breaks
                      if c.key == f"break:{b.gb_code or b.reason}:{b.file}:{b.user_line}"), None)
            if b is not None:
                c.title = (f"graph break{' ' + b.gb_code if b.gb_code else ''} at "
                           f"{b.file}:{b.user_line}: {b.reason}")
                c.fix = c.fix or (b.hints[0] if b.hints else "")
        elif c.what == "zero-one" and not c.title:
            c.title = "sizes 0 and 1 are always specialized: a dynamic graph cannot serve them"
            c.fix = c.fix or next((a.fix for a in c.findings if a.fix), "")
        elif c.findings:
            first = c.findings[0]
            c.title = c.title or _first_sentence(first.message)
            c.fix = c.fix or next((a.fix for a in c.findings if a.fix), "")
        elif not c.title:
            c.title = c.key


def _locations(text: str) -> list[tuple[str, int]]:
    """Every ``file.py:line`` in ``text``, found with str.find (linear on any text)."""
    out = []
    at = text.find(".py:")
    prev_at, prev_start = 0, 0  # a scan back stops where the previous one ended: linear
    while at >= 0:
        digits = _DIGITS.match(text, at + 4)
        start = at
        while start > prev_at and text[start - 1] not in _STOP:
            start -= 1
        if start == prev_at and prev_at and text[start - 1] not in _STOP:
            start = prev_start
        prev_at, prev_start = at, start
        if digits is not None and 0 < at - start <= 4096:  # a longer "path" is damage
            out.append((text[start:at + 3], int(digits.group())))
        at = text.find(".py:", at + 4)
    return out


def _graph_site(message: str) -> str:
    m = re.search(r"graph break at (\S+:\d+)", message)
    return m.group(1) if m else "\x00"


def _first_sentence(text: str) -> str:
    cut = min((i for i in (text.find(". "), text.find("; ")) if i > 0), default=len(text))
    return text[:cut].rstrip(".")


def rank_causes(diag: Diagnosis) -> tuple[Cause, ...]:
    """The Diagnosis's findings as ranked root causes (see the module docstring)."""
    b = _Builder(diag)
    b.add_recompiles()
    b.add_graph_breaks()
    for a in diag.suggestions:
        b.attach(a)
    return tuple(b.finish())

"""Root causes: every finding grouped by the fix it leads to, ranked by what the fix buys.

A layer ON TOP of the rules (``dyncli.diagnose.advice``, ``size_changes``, ``branches``,
``trace``): it reads the Diagnosis rows and the typed fields of their findings (entries, flag,
sites, function, key: ``dyncli.diagnose.findings.Advice``), never their sentences, and never
re-implements a rule. The pipeline (``dyncli.diagnose.conclude``) calls :func:`rank_causes` once.

1. Every recompile is attributed to ONE fix, from its first guard failure (torch lists the
   newest cache entry's failure first): the user line of a size branch (``branches``) or of a
   specialization made in the failed entry's compile; a config flag (parameters); an
   allow-list entry (``tensor 'x' size mismatch at index 0`` → ``L['x']:0``; ``n == 31`` →
   ``L['n']``); 0/1 specialization; a non-shape change. The compiles of a graph break's resume
   frames are attributed to that break (code and site). Each compile belongs to at most one
   cause, so the costs add up to at most the total.
2. Each finding joins the cause of its fix, by the first of its fields that applies: a kind
   with a cause of its own (``OWN_CAUSE``); its allow-list entries (causes sharing an entry
   merge, a whole source with its dims, a regex entry with those it matches); the config flag
   its fix sets; for a graph break, the break at its site with its code; the user lines it
   names (the first that has a cause, else the first); for the recompile-limit warning, the
   cause holding most recompiles of its function; else a cause of its own, keyed by its kind
   and the rule's key. Causes whose fixes read the same merge too: no two causes show the
   same fix.
3. Ranked by the seconds the fix spares (trace inputs: compile seconds, and the seconds of
   the CUDA-graph recordings of a cudagraph cause), then compiles, then recompiles, then graph
   breaks, then CUDA-graph recordings. Titles and fixes are written by
   ``dyncli.diagnose.cause_text``.
"""

from __future__ import annotations

from collections.abc import Iterable

from dyncli.diagnose import entries as en
from dyncli.diagnose import guard_kinds
from dyncli.diagnose.branches import crossing
from dyncli.diagnose.cause_text import Draft, describe
from dyncli.diagnose.findings import Advice, AdviceKind, Cause, CauseKind, ConfigFlag
from dyncli.diagnose.model import (
    Diagnosis,
    GraphBreakReport,
    RecompileReport,
    SpecializationReport,
    call_site,
)
from dyncli.diagnose.reasons import resume_line
from dyncli.diagnose.side_libraries import (
    SIDE_LIBRARIES,
    is_stdlib,
    library_file,
    side_fix,
    side_library,
)
from dyncli.logparse import guardtext as gt
from dyncli.logparse.textbuiltins import builtin_name, warned_builtin
from dyncli.sources import from_reason

# Finding kinds that lead to a cause of their own kind (one cause per key of the rule's)
OWN_CAUSE = {AdviceKind.ZERO_ONE: CauseKind.ZERO_ONE, AdviceKind.NON_SHAPE: CauseKind.NON_SHAPE,
             AdviceKind.CUDAGRAPH_SIZES: CauseKind.CUDAGRAPH,
             AdviceKind.CUDAGRAPH_SKIP: CauseKind.CUDAGRAPH,
             AdviceKind.CUDAGRAPH_ERROR: CauseKind.CUDAGRAPH,
             AdviceKind.COMPILED_AUTOGRAD: CauseKind.COMPILED_AUTOGRAD}
# Finding kinds about a function as a whole: they join the cause of most of its recompiles
# (a similar-graphs finding whose inputs another suggestion decides has no entries of its
# own: alone it was a cause with no fix that removes nothing, once per rank)
JOINS_FUNCTION = frozenset({AdviceKind.RECOMPILE_LIMIT, AdviceKind.SIMILAR_GRAPHS})
# torch keeps parameters' shapes static (force_parameter_static_shapes)
_PARAMS = ConfigFlag("force_parameter_static_shapes", "False")


def _break_key(b: GraphBreakReport) -> str:
    # (a break placed only by its resume function's name, without a file: by that name)
    return f"break:{b.gb_code or b.reason or b.resumed_in}:{b.file}:{b.user_line if b.file else 0}"


# a guard on an expression of sizes that a user line made (no plain bound: not a size branch)
_RELATION_FIX = ("that line's code guards on how these sizes relate, and each outcome compiles a "
                 "graph of its own: rewrite it so it does not depend on the relation (compute "
                 "it without the sizes, or torch.where / torch.cond), or keep the sizes on one "
                 'side of it; TORCH_LOGS="+dynamic" prints the guard\'s `[guard added]` line '
                 "and stack")


class _Builder:
    def __init__(self, diag: Diagnosis) -> None:
        self.diag = diag
        self.causes: dict[str, Draft] = {}
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

    def cause(self, key: str, kind: CauseKind) -> Draft:
        key = self.find(key)
        c = self.causes.get(key)
        if c is None:
            c = self.causes[key] = Draft(key=key, kind=kind, order=len(self.causes))
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
        ca.absorb(cb)

    # ------------------------------------------------------------ rows

    def allow(self, entries: Iterable[str]) -> str | None:
        """The key of allow-list entries (merging every cause that shares one of them)."""
        keys = []
        for entry in entries:
            key = "sources:" + entry
            c = self.cause(key, CauseKind.ALLOW_LIST)
            c.entries[entry] = None
            keys.append(key)
            for other in list(self.causes.values()):
                if other.kind is CauseKind.ALLOW_LIST and any(en.same_fix(e, entry)
                                                              for e in other.entries):
                    self.union(key, other.key)
        for key in keys[1:]:
            self.union(keys[0], key)
        return self.find(keys[0]) if keys else None

    def recompile_key(self, r: RecompileReport) -> str:
        failed, guard = gt.split_failed(r.reasons[0] if r.reasons else "")
        c = crossing(r)
        if c is not None:
            code = f" `{c.user.code}`" if c.user and c.user.code else ""
            return self.line_key(c.user.file if c.user else "", c.user.line if c.user else 0,
                                 f"{r.function}: size branch{code} (guard `{c.guard}` failed)")
        spec = self.user_specs.get((r.rank, failed.split("_")[0])) if failed else None
        if spec is not None and spec.user is not None:
            code = f" `{spec.user.code}`" if spec.user.code else ""
            return self.line_key(spec.user.file, spec.user.line,
                                 f"{r.function}: user code{code} specialized "
                                 f"{', '.join(spec.sources) or spec.symbol} to {spec.value}")
        if r.kind == gt.Checked.DUCK:  # torch's flag (advice._duck_sizing)
            return self.config(guard_kinds.DUCK_FLAG).key
        if r.kind not in guard_kinds.SHAPES:  # one cause per kind (its finding: advice._others)
            return self.cause(f"{CauseKind.NON_SHAPE}:{r.kind}", CauseKind.NON_SHAPE).key
        if gt.about_param(r.reasons[0] if r.reasons else ""):
            return self.config(_PARAMS).key
        # (a module's tensor attribute or int: its allow-list entry, L['self'].cache:0 or
        # L['self'].k: the config flags removed fewer compiles, or none, in the advice corpus)
        zero_one = gt.zero_one(guard)
        numbers = gt.expected_actual(guard)
        # (a size that became 0 or 1, or one the first compile saw as 0 or 1: sglang#23428)
        if (zero_one is not None and zero_one[2]) or (numbers is not None and (
                numbers[1] in (0, 1) or numbers[0] in (0, 1))):
            return self.cause(str(CauseKind.ZERO_ONE), CauseKind.ZERO_ONE).key
        mm = gt.mismatch(guard)
        if mm is not None and mm.what == "size":
            return self.allow([f"{from_reason(mm.name)}:{mm.dim}"]) or ""
        name = gt.compared_name(guard) if r.cause == gt.GuardKind.SCALAR else None
        if name is not None:
            return self.allow([from_reason(name)]) or ""
        if r.cause == gt.GuardKind.SIZE and r.user is not None and r.user.file \
                and not r.unknown_origin:
            # a guard on sizes no rule explains, made by a line of the user's (pytorch#150702:
            # `math.trunc(…) != (hidden_states.size()[3] // …patch_size)`, AuraFlow): that line
            key = self.line_key(r.user.file, r.user.line,
                                f"{r.user.function or r.function or '?'}: a guard on sizes made here "
                                f"(`{guard.strip()}`) failed for a new size")
            at = self.causes[self.find(key)]
            at.fix = at.fix or _RELATION_FIX
            return key
        other = self.cause(f"recompile:{r.function}:{r.cause}", CauseKind.OTHER)
        if not other.title:  # a size guard no rule explains (a bound, a relation): say which
            other.title = (f"{r.function or '?'} recompiled: its {r.cause} guard "
                           f"`{guard.strip()}` failed")
            if r.unknown_origin:  # torch's own words: report it to torch (sglang#7230)
                other.title += (f"; torch cannot say which code made it {r.unknown_origin}, "
                                "so report it to torch with a repro")
        return other.key

    def line_key(self, file: str, line: int, what: str) -> str:
        c = self.cause(f"line:{file}:{line}" if file else f"line:?:{what}", CauseKind.USER_CODE)
        if what and not c.title:
            c.title = what + (f" at {file}:{line}" if file else "")
        return c.key

    def config(self, flag: ConfigFlag) -> Draft:
        c = self.cause(f"config:{flag.name}", CauseKind.CONFIG)
        c.flag = c.flag or flag
        return c

    def add_recompiles(self) -> None:
        unnumbered: dict[tuple[int | None, str, int | None], int] = {}
        for r in self.diag.recompiles:
            c = self.cause(self.recompile_key(r), CauseKind.OTHER)
            c.recompiles += 1
            c.ranks[r.rank] = None
            cid = (r.rank, r.compile_id.split("_")[0])
            if not r.compile_id and r.function:
                # a recompile of a log without compile ids (torch 2.1's records, CompileProfiler's
                # report) is one compile of its function: the k-th after its first, named as
                # attach() names a limit's (before: every such recompile was one compile)
                k = unnumbered[(r.rank, r.function, r.first_line)] = \
                    unnumbered.get((r.rank, r.function, r.first_line), 0) + 1
                cid = (r.rank, f"?{r.function}:{r.first_line}/{k}")
            if r.compiled and cid not in self.claimed:
                self.claimed.add(cid)
                c.compile_ids[cid] = None

    def add_graph_breaks(self) -> None:
        for b in self.diag.graph_breaks:
            c = self.cause(_break_key(b), CauseKind.GRAPH_BREAK)
            c.graph_break = c.graph_break or b
            c.graph_breaks += b.count
            c.ranks[b.rank] = None
            lines = {b.user_line} | {at[1] for s in (*b.call_sites, *b.user_callers)
                                     if (at := call_site(s)) is not None}
            for f in self.diag.frames:  # the frames a break made: torch's resume functions
                resumed = resume_line(f.function, f.first_line)
                if f.rank != b.rank or resumed is None or resumed not in lines:
                    continue
                # a break the log proves only by that name has no reason to blame for the
                # frame's recompiles: its first compile only (the others' records say why)
                for cid in f.compile_ids[:1] if b.resumed_in else f.compile_ids:
                    if (f.rank, cid) not in self.claimed:
                        self.claimed.add((f.rank, cid))
                        c.compile_ids[(f.rank, cid)] = None

    # ------------------------------------------------------------ findings

    def attach(self, a: Advice) -> None:
        c = self.cause(self.finding_key(a), CauseKind.OTHER)
        c.findings.append(a)
        c.ranks[a.rank] = None
        if a.fix and not c.fix:
            c.fix = a.fix
        if a.frame:  # the recompiles a limit warning proves, that no recompile record claimed
            for f in self.diag.frames:  # (never the frame's first compile: no fix removes it)
                if f.rank == a.rank and f.frame_id == a.frame and (a.frame != "?" or (
                        f.function == a.function and a.frame_line in (None, f.first_line))):
                    ids = f.compile_ids[1:] or tuple(f"?{f.function}:{f.first_line}/{i}"
                                                     for i in range(1, f.compiles))
                    for cid in ids:
                        if (f.rank, cid) not in self.claimed:
                            self.claimed.add((f.rank, cid))
                            c.compile_ids[(f.rank, cid)] = None

        if a.kind is AdviceKind.MARK_DYNAMIC and a.entries:
            self.claim_markings(a, c)
        if a.autograd:
            self.claim_captures(a, c)

    def claim_captures(self, a: Advice, c: Draft) -> None:
        """Compiled autograd's captures a finding proves, each a recompile of the backward, and
        their compiles where the log shows them (dynamo's compiles of the graph captured as
        ``!N``: frames ``!N/…``; a log without +dynamic or guards shows none), each in the cause
        of the forward recompile it followed, else in the finding's."""
        for capture, follows in a.autograd:
            into = c
            if follows:
                r = next((r for r in self.diag.recompiles
                          if r.rank == a.rank and r.compile_id == follows), None)
                if r is not None:
                    into = self.causes[self.find(self.recompile_key(r))]
            into.recompiles += 1  # a recompile of the backward (torch's captures counter)
            for f in self.diag.frames:
                if f.rank == a.rank and f.frame_id.startswith(capture + "/"):
                    for cid in f.compile_ids:
                        if (f.rank, cid) not in self.claimed:
                            self.claimed.add((f.rank, cid))
                            into.compile_ids[(f.rank, cid)] = None

    def claim_markings(self, a: Advice, c: Draft) -> None:
        """The compiles in which automatic dynamic marked an input the finding lists: each is a
        recompile for that input's change (torch's pgo.py logs the marking only then), which
        marking it up front removes, where no recompile record claimed it."""
        whole = {en.whole_source(e) for e in a.entries}
        for f in self.diag.frames:
            if f.rank != a.rank or not any(d.origin.startswith("automatic")
                                           and en.whole_source(d.source) in whole
                                           for d in f.dynamic_inputs):
                continue
            for cid in f.marking_compiles:
                if cid in f.compile_ids[1:] and (f.rank, cid) not in self.claimed:
                    self.claimed.add((f.rank, cid))
                    c.compile_ids[(f.rank, cid)] = None

    def finding_key(self, a: Advice) -> str:
        """The cause a finding joins, from its fields (the module docstring, 2.)."""
        if a.kind is AdviceKind.COMPILED_AUTOGRAD and a.key == "forward":
            # captures after a forward recompile: the forward's cause (its fix removes them)
            r = next((r for r in self.diag.recompiles if a.autograd and r.rank == a.rank
                      and r.compile_id == a.autograd[0][1]), None)
            if r is not None:
                return self.find(self.recompile_key(r))
        own = OWN_CAUSE.get(a.kind)
        if own is not None:
            return self.cause(f"{own}:{a.key}" if a.key else str(own), own).key
        if a.entries:
            return self.allow(a.entries) or ""
        if a.flag is not None:
            return self.config(a.flag).key
        if a.kind is AdviceKind.GRAPH_BREAK:  # (no site: a break whose place the log lacks)
            file, line = (a.sites[0].file, a.sites[0].line) if a.sites else ("", 0)
            key = f"break:{a.key}:{file}:{line}"
            if self.find(key) in self.causes:
                return self.find(key)
        if a.sites:
            for site in a.sites:
                key = self.find(f"line:{site.file}:{site.line}")
                if key in self.causes:
                    return key
            return self.line_key(a.sites[0].file, a.sites[0].line, "")
        if a.kind in JOINS_FUNCTION and a.function:
            best = max((c for c in self.causes.values() if c.recompiles and any(
                r.function == a.function and self.find(self.recompile_key(r)) == c.key
                for r in self.diag.recompiles)), key=lambda c: c.recompiles, default=None)
            if best is not None:
                return best.key
        return self.cause(f"finding:{a.kind}:{a.key}", CauseKind.OTHER).key

    # ------------------------------------------------------------ result

    def side_libraries(self) -> None:
        """Causes whose every compile and place is in one package called for its side effects
        (matplotlib, a logger: ``side_libraries``) become one cause with that package's fix:
        its recompiles' guards, breaks and limits are the package's own, and none of their
        fixes is the user's to make (a step reaching matplotlib read as 16 causes about its
        internals, "make L['vmin'] dynamic" first)."""
        files = {(f.rank, f.frame_id): f.file for f in self.diag.frames}
        by_library: dict[str, list[str]] = {}
        for c in sorted(self.causes.values(), key=lambda c: c.order):
            places = [files.get((rank, cid.split("/")[0]), "") for rank, cid in c.compile_ids]
            places += [site.file for a in c.findings for site in a.sites]
            # (a limit warning's function, where its compiles have no frame id: torch 2.0/2.1)
            places += [f.file for a in c.findings if a.function for f in self.diag.frames
                       if f.rank == a.rank and f.function == a.function
                       and a.frame in ("?", f.frame_id)]
            if c.graph_break is not None:
                b = c.graph_break
                name = builtin_name(b.explanation) or warned_builtin(b.reason) or ""
                # (a package's C function dynamo cannot trace: matplotlib._path.affine_transform;
                # a break in Python's own copy.py or weakref.py: the package that called it)
                places += ([at[0] for s in b.call_sites if (at := call_site(s)) is not None]
                           if b.file and is_stdlib(b.file) else [b.file or library_file(name)])
            # (a place the log lacks is unknown; Python's own files, copy.py reached from the
            # package, say nothing of whose code it is)
            found = {lib for p in places if p
                     if (lib := side_library(p)) is not None or not is_stdlib(p)}
            if len(found) == 1 and (lib := found.pop()) is not None \
                    and c.kind is not CauseKind.CUDAGRAPH \
                    and not any(a.kind is AdviceKind.COMPILE_CRASH for a in c.findings):
                by_library.setdefault(lib[0], []).append(c.key)
        for name, keys in by_library.items():
            for key in keys[1:]:
                self.union(keys[0], key)
            c = self.causes[self.find(keys[0])]
            what = SIDE_LIBRARIES[name]
            c.kind = CauseKind.LIBRARY
            c.title = (f"compiled code reaches {name} ({what}): torch compiles its functions "
                       "again for each call's new values and objects")
            c.fix = side_fix(what, self.diag.releases)

    def finish(self) -> list[Cause]:
        self.side_libraries()
        # every entry a listed finding prints, at its place in the Suggestions (the one order
        # a cause's list and title follow)
        printed: dict[str, int] = {}
        for e in (e for a in self.diag.suggestions if a.listed for e in a.entries if e):
            printed.setdefault(e, len(printed))
        by_fix: dict[str, str] = {}
        for c in sorted(self.causes.values(), key=lambda c: c.order):
            describe(c, printed, self.diag.releases)
            if c.fix in by_fix:
                self.union(by_fix[c.fix], c.key)
            elif c.fix:
                by_fix[c.fix] = c.key
        timed = self.diag.trace is not None and self.diag.trace.timed  # else unknown, not 0
        out = []
        for c in self.causes.values():
            describe(c, printed, self.diag.releases)
            seconds = sum(self.seconds.get(k, 0.0) for k in c.compile_ids) if timed else None
            out.append((c.order, c.freeze(seconds)))
        # the seconds a fix spares: compiles, and CUDA-graph recordings (both paid at warm-up)
        # (a frame that runs eagerly costs every call: before a graph break's split)
        # (a crash of the compile first: the program stopped there, nothing after it ran)
        out.sort(key=lambda oc: (not oc[1].stops, -(oc[1].compile_s or 0.0) - (oc[1].record_s or 0.0),
                                 -oc[1].compiles, -oc[1].recompiles, not oc[1].runs_eagerly,
                                 -oc[1].graph_breaks,
                                 -oc[1].recordings, oc[0]))
        return [c for _, c in out]


def rank_causes(diag: Diagnosis) -> tuple[Cause, ...]:
    """The Diagnosis's findings as ranked root causes (see the module docstring)."""
    b = _Builder(diag)
    b.add_recompiles()
    b.add_graph_breaks()
    for a in diag.suggestions:
        b.attach(a)
    return tuple(b.finish())
